package agent

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/shoenig/test/must"
)

// The web UI is mounted at /ui/, and / sends browsers to it while API
// clients keep the redirect to /v1/agent/self.
func TestHTTP_UI(t *testing.T) {
	h := newTestHTTP(t)
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(path, accept string) (*http.Response, string) {
		req, err := http.NewRequest("GET", h.srv.URL+path, nil)
		must.NoError(t, err)
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		resp, err := noFollow.Do(req)
		must.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}

	resp, _ := get("/", "text/html,application/xhtml+xml,*/*;q=0.8")
	must.Eq(t, http.StatusTemporaryRedirect, resp.StatusCode)
	must.Eq(t, "/ui/", resp.Header.Get("Location"))
	resp, _ = get("/", "")
	must.Eq(t, http.StatusTemporaryRedirect, resp.StatusCode)
	must.Eq(t, "/v1/agent/self", resp.Header.Get("Location"))
	resp, _ = get("/ui", "")
	must.Eq(t, http.StatusMovedPermanently, resp.StatusCode)
	must.Eq(t, "/ui/", resp.Header.Get("Location"))

	for _, path := range []string{"/ui/", "/ui/jobs/example@default", "/ui/allocations/x", "/ui/topology"} {
		resp, body := get(path, "")
		must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(path))
		must.StrContains(t, resp.Header.Get("Content-Type"), "text/html")
		must.True(t, strings.Contains(body, "/ui/assets/js/app.js"), must.Sprint(path))
	}
	resp, body := get("/ui/assets/js/app.js", "")
	must.Eq(t, http.StatusOK, resp.StatusCode)
	must.StrContains(t, body, "import")
	resp, _ = get("/ui/assets/nope.js", "")
	must.Eq(t, http.StatusNotFound, resp.StatusCode)
	// The API is untouched.
	resp, _ = get("/v1/nonsense", "text/html")
	must.Eq(t, http.StatusNotFound, resp.StatusCode)
}
