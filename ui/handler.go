package ui

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"
)

//go:embed assets
var assets embed.FS

// Prefix is the path the UI is served under.
const Prefix = "/ui/"

// contentSecurityPolicy allows only the agent's own scripts, styles and
// API: the UI never loads anything from elsewhere, and no inline script
// can run.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; " +
	"img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Handler serves the UI: /ui/assets/<file> from the embedded files, and
// the app shell for any other path under /ui/ (the client routes it).
// Only GET and HEAD are answered.
func Handler() http.Handler {
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err) // the embedded tree always has assets/
	}
	files := http.StripPrefix(Prefix+"assets/", http.FileServer(http.FS(sub)))
	shell, err := fs.ReadFile(sub, "index.html")
	if err != nil {
		panic(err)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "Invalid method", http.StatusMethodNotAllowed)
			return
		}
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		// The assets change with the binary; revalidating is cheap on
		// a local agent and never shows a stale UI after an upgrade.
		h.Set("Cache-Control", "no-cache")
		if strings.HasPrefix(r.URL.Path, Prefix+"assets/") {
			if strings.HasSuffix(r.URL.Path, "/") {
				http.NotFound(w, r) // no directory listings
				return
			}
			files.ServeHTTP(w, r)
			return
		}
		h.Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		if r.Method == http.MethodGet {
			w.Write(shell)
		}
	})
}

// WantsHTML reports whether a request comes from a browser navigating
// (it accepts text/html), as opposed to an API client.
func WantsHTML(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "text/html")
}
