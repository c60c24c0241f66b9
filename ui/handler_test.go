package ui

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestHandler(t *testing.T) {
	srv := httptest.NewServer(Handler())
	defer srv.Close()
	cases := []struct {
		method, path string
		code         int
		ctype, body  string
	}{
		// Deep links, including the CLI's <id>@<namespace> form, get the shell.
		{"GET", "/ui/", 200, "text/html", `<script type="module" src="/ui/assets/js/app.js">`},
		{"GET", "/ui/jobs", 200, "text/html", "<main"},
		{"GET", "/ui/jobs/example@default", 200, "text/html", "<main"},
		{"GET", "/ui/jobs/parent%2Fdispatch-1@prod", 200, "text/html", "<main"},
		{"GET", "/ui/allocations/0b5e6e9e-aaaa-bbbb-cccc-000000000000", 200, "text/html", "<main"},
		{"GET", "/ui/nodes/abc", 200, "text/html", "<main"},
		{"GET", "/ui/no/such/page", 200, "text/html", "<main"},
		{"HEAD", "/ui/topology", 200, "text/html", ""},
		// Assets are files; an unknown one is a 404, not the shell.
		{"GET", "/ui/assets/js/app.js", 200, "text/javascript", "import"},
		{"GET", "/ui/assets/app.css", 200, "text/css", ":root"},
		{"GET", "/ui/assets/js/missing.js", 404, "text/plain", ""},
		{"GET", "/ui/assets/js/", 404, "text/plain", ""},
		{"POST", "/ui/jobs", 405, "text/plain", "Invalid method"},
	}
	for _, c := range cases {
		req, _ := http.NewRequest(c.method, srv.URL+c.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.code {
			t.Errorf("%s %s: status %d, want %d", c.method, c.path, resp.StatusCode, c.code)
		}
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, c.ctype) {
			t.Errorf("%s %s: content type %q, want %q", c.method, c.path, ct, c.ctype)
		}
		if !strings.Contains(string(body), c.body) {
			t.Errorf("%s %s: body lacks %q", c.method, c.path, c.body)
		}
		if c.code == 200 && !strings.Contains(resp.Header.Get("Content-Security-Policy"), "script-src 'self'") {
			t.Errorf("%s %s: no content security policy", c.method, c.path)
		}
	}
}

// Every module the shell loads, and every module those import, is
// embedded: a typo in an import path would break the whole UI.
func TestAssetsImportsResolve(t *testing.T) {
	entries, err := assets.ReadDir("assets/js/pages")
	if err != nil {
		t.Fatal(err)
	}
	files := []string{"assets/js/app.js", "assets/js/api.js", "assets/js/dom.js", "assets/js/failures.js", "assets/js/diff.js", "assets/js/exec.js", "assets/js/token.js", "assets/js/workers.js"}
	for _, e := range entries {
		files = append(files, "assets/js/pages/"+e.Name())
	}
	for _, f := range files {
		src, err := assets.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dir := f[:strings.LastIndex(f, "/")]
		for _, line := range strings.Split(string(src), "\n") {
			if !strings.HasPrefix(line, "import ") {
				continue
			}
			i := strings.LastIndex(line, " from '")
			if i < 0 {
				continue
			}
			rel := strings.TrimSuffix(line[i+len(" from '"):], "';")
			target := resolve(dir, rel)
			if _, err := assets.ReadFile(target); err != nil {
				t.Errorf("%s imports %s: %v", f, rel, err)
			}
		}
	}
}

func resolve(dir, rel string) string {
	parts := strings.Split(dir, "/")
	for _, p := range strings.Split(rel, "/") {
		switch p {
		case ".":
		case "..":
			parts = parts[:len(parts)-1]
		default:
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, "/")
}
