package agent

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/api"
	"github.com/opennomad/nomad/client"
)

// identityClient is a client agent that only keeps a node identity.
type identityClient struct {
	ClientAPI
	id      string
	claims  map[string]any
	renewed int
}

func (c *identityClient) NodeID() string { return c.id }
func (c *identityClient) NodeIdentityClaims() (map[string]any, error) {
	if c.claims == nil {
		return nil, client.ErrNotFound
	}
	return c.claims, nil
}
func (c *identityClient) RenewNodeIdentity() { c.renewed++ }

func TestClientIdentity(t *testing.T) {
	h := newTestHTTP(t)
	resp, body := h.do("GET", "/v1/client/identity", "")
	must.Eq(t, http.StatusBadRequest, resp.StatusCode)
	must.StrContains(t, body, "No local Node and node_id not provided")

	ic := &identityClient{id: "n1", claims: map[string]any{"nomad_node_id": "n1", "jti": "j1"}}
	h = newTestHTTP(t, func(c *HTTPServerConfig) { c.Client = ic })
	resp, body = h.do("GET", "/v1/client/identity?node_id=n1", "")
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	var got api.NodeIdentityGetResponse
	must.NoError(t, json.Unmarshal([]byte(body), &got))
	must.Eq(t, ic.claims, got.Claims)

	resp, body = h.do("POST", "/v1/client/identity/renew", `{"NodeID":"n1"}`)
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	must.EqJSON(t, `{}`, body)
	must.Eq(t, 1, ic.renewed)

	cases := []struct {
		name, method, path, body string
		code                     int
		msg                      string
	}{
		{"other node", "GET", "/v1/client/identity?node_id=n2", "", http.StatusNotFound, `Unknown node "n2"`},
		{"other node in body", "PUT", "/v1/client/identity/renew", `{"NodeID":"n2"}`, http.StatusNotFound, `Unknown node "n2"`},
		{"read method", "PUT", "/v1/client/identity", "", http.StatusMethodNotAllowed, "Invalid method"},
		{"renew method", "GET", "/v1/client/identity/renew", "", http.StatusMethodNotAllowed, "Invalid method"},
		{"bad body", "PUT", "/v1/client/identity/renew", `{`, http.StatusBadRequest, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := h.do(tc.method, tc.path, tc.body)
			must.Eq(t, tc.code, resp.StatusCode, must.Sprint(body))
			must.StrContains(t, body, tc.msg)
		})
	}
	must.Eq(t, 1, ic.renewed, must.Sprint("refused renewals change nothing"))

	ic.claims = nil
	resp, _ = h.do("GET", "/v1/client/identity", "")
	must.Eq(t, http.StatusNotFound, resp.StatusCode, must.Sprint("no identity issued yet"))
}

// A dev agent's node carries the identity the servers signed: Nomad's
// nine claims (the node has no class).
func TestRealAgent_NodeIdentity(t *testing.T) {
	ra := startDevAgentWith(t, func(*Config) {})
	nodeID := ra.agent.client.NodeID()
	deadline := time.Now().Add(10 * time.Second)
	var got api.NodeIdentityGetResponse
	for {
		resp, body := ra.do("GET", "/v1/client/identity?node_id="+nodeID, "")
		if resp.StatusCode == http.StatusOK {
			must.NoError(t, json.Unmarshal([]byte(body), &got))
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no node identity: %d %s", resp.StatusCode, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	must.MapLen(t, 9, got.Claims)
	for _, k := range []string{"aud", "exp", "iat", "jti", "nbf", "sub", "nomad_node_id", "nomad_node_pool", "nomad_node_datacenter"} {
		must.MapContainsKey(t, got.Claims, k)
	}
	must.Eq[any](t, nodeID, got.Claims["nomad_node_id"])

	resp, body := ra.do("PUT", "/v1/client/identity/renew", `{"NodeID":"`+nodeID+`"}`)
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
}
