package command

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/api"
)

const identityNodeID = "5f1c0d3e-8b7a-4c2e-9d41-0a6b3c2d1e0f"

// identityAgent answers the node lookups and the node identity routes
// of one node, recording renewals.
type identityAgent struct {
	mu      sync.Mutex
	renewed []api.NodeIdentityRenewRequest
	query   string
}

func (a *identityAgent) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/v1/nodes":
		_, _ = io.WriteString(w, `[{"ID":"`+identityNodeID+`","Name":"n1","Status":"ready"}]`)
	case "/v1/node/" + identityNodeID:
		_, _ = io.WriteString(w, `{"ID":"`+identityNodeID+`","Name":"n1","Status":"ready"}`)
	case "/v1/client/identity":
		a.mu.Lock()
		a.query = r.URL.RawQuery
		a.mu.Unlock()
		_, _ = io.WriteString(w, `{"Claims":{"aud":"nomadproject.io","iat":1700000000,"jti":"j1",`+
			`"nomad_node_id":"`+identityNodeID+`","nomad_node_pool":"default"}}`)
	case "/v1/client/identity/renew":
		var req api.NodeIdentityRenewRequest
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &req)
		a.mu.Lock()
		a.renewed = append(a.renewed, req)
		a.mu.Unlock()
		_, _ = io.WriteString(w, `{}`)
	default:
		http.NotFound(w, r)
	}
}

func TestNodeIdentityCommands(t *testing.T) {
	a := &identityAgent{}
	srv := httptest.NewServer(a)
	t.Cleanup(srv.Close)

	res := runCommand(t, srv.URL, runOpts{}, "node", "identity", "get", "5f1c")
	must.Eq(t, 0, res.code, must.Sprint(res.stderr))
	must.Eq(t, "node_id="+identityNodeID, a.query)
	iat := formatTime(time.Unix(1700000000, 0))
	must.Eq(t, "Claim Key        Claim Value\n"+
		"aud              nomadproject.io\n"+
		"iat              "+iat+"\n"+
		"jti              j1\n"+
		"nomad_node_id    "+identityNodeID+"\n"+
		"nomad_node_pool  default\n", res.stdout)

	res = runCommand(t, srv.URL, runOpts{}, "node", "identity", "get", "-json", identityNodeID)
	must.Eq(t, 0, res.code, must.Sprint(res.stderr))
	must.StrContains(t, res.stdout, `"jti": "j1"`)

	res = runCommand(t, srv.URL, runOpts{}, "node", "identity", "renew", "5f1c")
	must.Eq(t, 0, res.code, must.Sprint(res.stderr))
	must.Eq(t, "", res.stdout)
	must.Eq(t, []api.NodeIdentityRenewRequest{{NodeID: identityNodeID}}, a.renewed)

	for _, args := range [][]string{
		{"node", "identity", "get"},
		{"node", "identity", "renew", "a", "b"},
	} {
		res = runCommand(t, srv.URL, runOpts{}, args...)
		must.Eq(t, 1, res.code)
		must.StrContains(t, res.stderr, "This command takes one argument: <node_id>")
	}
	res = runCommand(t, srv.URL, runOpts{}, "node", "identity", "renew", "ffff")
	must.Eq(t, 1, res.code)
	must.Len(t, 1, a.renewed, must.Sprint("nothing renewed for an unknown node"))
}
