package agent

import (
	"net/http"
	"strings"
	"testing"

	"github.com/shoenig/test/must"
)

// The unsupported routes answer anyone (501 needs no token), so their
// cases in the route×token table (TestHTTPACL_EveryRoute) follow from
// the table of them.
func init() {
	for _, rt := range unsupportedRoutes {
		routeCases[rt.Path] = []routeCase{{method: "GET", path: unsupportedProbePath(rt.Path), allowed: allowAll}}
	}
	routeCases["/v1/operator/license"] = []routeCase{{method: "GET", path: "/v1/operator/license", allowed: allowAll}}
}

// unsupportedProbePath is a path the route pattern matches.
func unsupportedProbePath(pattern string) string {
	if strings.HasSuffix(pattern, "/") {
		return pattern + "x"
	}
	return pattern
}

// TestUnsupportedRoutes: each answers 501 with its path and the feature
// it needs, whatever the method, unless a route built since has taken
// its path.
func TestUnsupportedRoutes(t *testing.T) {
	h := newTestHTTP(t)
	registered := map[string]int{}
	for _, rt := range h.http.registeredRoutes() {
		registered[rt.Path]++
	}
	for _, rt := range unsupportedRoutes {
		if registered[rt.Path] != 1 {
			t.Errorf("%s is served now: take it out of unsupportedRoutes", rt.Path)
			continue
		}
		path := unsupportedProbePath(rt.Path)
		want := path + " is not supported by this server"
		if rt.Feature != "" {
			want += " (" + rt.Feature + " feature)"
		}
		for _, method := range []string{"GET", "PUT", "DELETE"} {
			resp, body := h.do(method, path, "")
			must.Eq(t, http.StatusNotImplemented, resp.StatusCode, must.Sprintf("%s %s: %s", method, path, body))
			must.Eq(t, want, body)
		}
	}
}

// TestOperatorLicense answers as Nomad's community edition: nothing to
// read (204), no license to install (501).
func TestOperatorLicense(t *testing.T) {
	h := newTestHTTP(t)
	for _, c := range []struct {
		method string
		code   int
		body   string
	}{
		{"GET", http.StatusNoContent, ""},
		{"PUT", http.StatusNotImplemented, "/v1/operator/license is not supported by this server (Nomad Enterprise feature)"},
		{"DELETE", http.StatusMethodNotAllowed, "Invalid method"},
	} {
		resp, body := h.do(c.method, "/v1/operator/license", "")
		must.Eq(t, c.code, resp.StatusCode, must.Sprintf("%s: %s", c.method, body))
		must.Eq(t, c.body, body)
	}
}

// TestClientAllocNotServed: garbage collecting or pausing an allocation
// answers 501 before the allocation is looked up, so the answer does not
// depend on it; other operations on an unknown allocation still answer
// that it is unknown.
func TestClientAllocNotServed(t *testing.T) {
	h := newTestHTTP(t)
	for _, c := range []struct {
		method, path string
		code         int
		body         string
	}{
		{"GET", "/v1/client/allocation/" + noID + "/gc", http.StatusNotImplemented,
			"/v1/client/allocation/" + noID + "/gc is not supported by this server"},
		{"POST", "/v1/client/allocation/" + noID + "/pause", http.StatusNotImplemented,
			"/v1/client/allocation/" + noID + "/pause is not supported by this server (Nomad Enterprise feature)"},
	} {
		resp, body := h.do(c.method, c.path, "")
		must.Eq(t, c.code, resp.StatusCode, must.Sprint(body))
		must.Eq(t, c.body, body)
	}
	resp, body := h.do("GET", "/v1/client/allocation/"+noID+"/stats", "")
	must.NotEq(t, http.StatusNotImplemented, resp.StatusCode, must.Sprint(body))
}
