package command

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/api"
)

// metaAgent is a client agent's /v1/client/metadata alone, recording the
// bodies it was sent.
type metaAgent struct {
	mu     sync.Mutex
	bodies []api.NodeMetaApplyRequest
	status int
}

func (a *metaAgent) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/client/metadata" {
		http.NotFound(w, r)
		return
	}
	if a.status != 0 {
		http.Error(w, "Permission denied", a.status)
		return
	}
	if r.Method != http.MethodGet {
		var req api.NodeMetaApplyRequest
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &req)
		a.mu.Lock()
		a.bodies = append(a.bodies, req)
		a.mu.Unlock()
	}
	_, _ = io.WriteString(w, `{"Meta":{"rack":"r2","color":"blue"},"Dynamic":{"rack":"r2","zone":null},"Static":{"rack":"r1","zone":"z1"}}`)
}

func TestNodeMetaCommands(t *testing.T) {
	a := &metaAgent{}
	srv := httptest.NewServer(a)
	t.Cleanup(srv.Close)

	res := runCommand(t, srv.URL, runOpts{}, "node", "meta", "read")
	must.Eq(t, 0, res.code, must.Sprint(res.stderr))
	must.Eq(t, `All Meta
color = blue
rack  = r2

Dynamic Meta
rack = r2
zone = <unset>

Static Meta
rack = r1
zone = z1
`, res.stdout)

	res = runCommand(t, srv.URL, runOpts{}, "node", "meta", "read", "-json")
	must.Eq(t, 0, res.code)
	var got api.NodeMetaResponse
	must.NoError(t, json.Unmarshal([]byte(res.stdout), &got))
	must.Eq(t, "blue", got.Meta["color"])

	res = runCommand(t, srv.URL, runOpts{}, "node", "meta", "apply", "-unset", "zone,old", "rack=r2", "note=a=b")
	must.Eq(t, 0, res.code, must.Sprint(res.stderr))
	must.Len(t, 1, a.bodies)
	sent := a.bodies[0].Meta
	must.MapLen(t, 4, sent)
	must.Eq(t, "r2", *sent["rack"])
	must.Eq(t, "a=b", *sent["note"])
	must.Nil(t, sent["zone"])
	must.Nil(t, sent["old"])

	usage := []struct {
		name string
		args []string
		err  string
	}{
		{"nothing to apply", []string{"node", "meta", "apply"}, "must specify metadata"},
		{"no equals sign", []string{"node", "meta", "apply", "rack"}, `key=value, got "rack"`},
		{"set and unset", []string{"node", "meta", "apply", "-unset", "rack", "rack=r1"}, `"rack" is both set and unset`},
		{"read takes no args", []string{"node", "meta", "read", "x"}, "no arguments"},
	}
	for _, tc := range usage {
		t.Run(tc.name, func(t *testing.T) {
			res := runCommand(t, srv.URL, runOpts{}, tc.args...)
			must.Eq(t, 1, res.code)
			must.StrContains(t, res.stderr, tc.err)
		})
	}

	a.status = http.StatusForbidden
	res = runCommand(t, srv.URL, runOpts{}, "node", "meta", "apply", "a=b")
	must.Eq(t, 1, res.code)
	must.True(t, strings.Contains(res.stderr, "Error applying dynamic node metadata"), must.Sprint(res.stderr))
}
