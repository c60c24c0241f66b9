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

// metaClient is a client agent that only keeps node metadata, in memory.
type metaClient struct {
	ClientAPI
	id      string
	static  map[string]string
	dynamic map[string]*string
}

func (c *metaClient) NodeID() string { return c.id }
func (c *metaClient) NodeMeta() *client.NodeMeta {
	meta := map[string]string{}
	for k, v := range c.static {
		meta[k] = v
	}
	for k, v := range c.dynamic {
		if v == nil {
			delete(meta, k)
		} else {
			meta[k] = *v
		}
	}
	return &client.NodeMeta{Meta: meta, Dynamic: c.dynamic, Static: c.static}
}
func (c *metaClient) ApplyNodeMeta(changes map[string]*string) (*client.NodeMeta, error) {
	for k, v := range changes {
		c.dynamic[k] = v
	}
	return c.NodeMeta(), nil
}

func TestClientMetadata(t *testing.T) {
	h := newTestHTTP(t)
	resp, body := h.do("GET", "/v1/client/metadata", "")
	must.Eq(t, http.StatusBadRequest, resp.StatusCode)
	must.StrContains(t, body, "No local Node and node_id not provided")
	// Another node's metadata is forwarded to its agent; an unknown node
	// is a 404.
	resp, _ = h.do("GET", "/v1/client/metadata?node_id=n1", "")
	must.Eq(t, http.StatusNotFound, resp.StatusCode)

	mc := &metaClient{id: "n1", static: map[string]string{"rack": "r1", "zone": "z1"}, dynamic: map[string]*string{}}
	h = newTestHTTP(t, func(c *HTTPServerConfig) { c.Client = mc })

	var got api.NodeMetaResponse
	resp, body = h.do("GET", "/v1/client/metadata", "")
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	must.NoError(t, json.Unmarshal([]byte(body), &got))
	must.Eq(t, got.Static, got.Meta)

	resp, body = h.do("POST", "/v1/client/metadata", `{"NodeID":"n1","Meta":{"color":"blue","zone":null}}`)
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	got = api.NodeMetaResponse{}
	must.NoError(t, json.Unmarshal([]byte(body), &got))
	must.Eq(t, map[string]string{"rack": "r1", "color": "blue"}, got.Meta)
	must.MapContainsKey(t, got.Dynamic, "zone")
	must.Nil(t, got.Dynamic["zone"])
	must.StrContains(t, body, `"zone":null`)

	cases := []struct {
		name, method, path, body string
		code                     int
		msg                      string
	}{
		{"no meta object", "POST", "/v1/client/metadata", `{"NodeID":"n1"}`, http.StatusBadRequest, "missing required Meta object"},
		{"other node", "GET", "/v1/client/metadata?node_id=n2", "", http.StatusNotFound, `Unknown node "n2"`},
		{"other node in body", "PUT", "/v1/client/metadata", `{"NodeID":"n2","Meta":{}}`, http.StatusNotFound, `Unknown node "n2"`},
		{"method", "DELETE", "/v1/client/metadata", "", http.StatusMethodNotAllowed, "Invalid method"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := h.do(tc.method, tc.path, tc.body)
			must.Eq(t, tc.code, resp.StatusCode, must.Sprint(body))
			must.StrContains(t, body, tc.msg)
		})
	}
}

// Through a dev agent's own client, the change reaches the servers' copy
// of the node, where constraints read it.
func TestRealAgent_NodeMetaReachesTheServers(t *testing.T) {
	ra := startDevAgentWith(t, func(c *Config) { c.Client.Meta = map[string]string{"rack": "r1", "zone": "z1"} })
	var got api.NodeMetaResponse
	resp, body := ra.do("GET", "/v1/client/metadata", "")
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	must.NoError(t, json.Unmarshal([]byte(body), &got))
	// Nomad's connect.* defaults sit beside the configured keys.
	must.Eq(t, "r1", got.Static["rack"])
	must.Eq(t, "z1", got.Static["zone"])
	must.Eq(t, "info", got.Static["connect.log_level"])
	must.Eq(t, got.Static, got.Meta)

	resp, body = ra.do("POST", "/v1/client/metadata", `{"Meta":{"color":"blue","zone":null}}`)
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))

	nodeID := ra.agent.client.NodeID()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var node api.Node
		// The node may not have registered yet: 404 until it has.
		resp, body := ra.do("GET", "/v1/node/"+nodeID, "")
		if resp.StatusCode == http.StatusOK {
			must.NoError(t, json.Unmarshal([]byte(body), &node))
		}
		if node.Meta["color"] == "blue" {
			_, zone := node.Meta["zone"]
			must.False(t, zone, must.Sprint("a removed static key is gone at the servers too"))
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the servers never saw the new meta: %v", node.Meta)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
