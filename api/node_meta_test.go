package api

import (
	"net/url"
	"testing"
)

func TestNodeMetaEndpoints(t *testing.T) {
	body := `{"Meta":{"rack":"r2"},"Dynamic":{"rack":"r2","zone":null},"Static":{"rack":"r1","zone":"z1"}}`
	check := func(t *testing.T, out any) {
		m := out.(*NodeMetaResponse)
		if m.Meta["rack"] != "r2" || m.Static["zone"] != "z1" || *m.Dynamic["rack"] != "r2" || m.Dynamic["zone"] != nil {
			t.Fatalf("meta = %+v", m)
		}
	}
	r2 := "r2"
	runEndpointCases(t, []endpointCase{
		{
			name:     "read the agent's node",
			reply:    reply{Body: body},
			call:     func(c *Client) (any, error) { return c.Nodes().Meta().Read("", nil) },
			wantMeth: "GET", wantPath: "/v1/client/metadata",
			check: check,
		},
		{
			name:     "read a node",
			reply:    reply{Body: body},
			call:     func(c *Client) (any, error) { return c.Nodes().Meta().Read("n1", nil) },
			wantMeth: "GET", wantPath: "/v1/client/metadata", wantQuery: url.Values{"node_id": {"n1"}},
			check: check,
		},
		{
			name:  "apply",
			reply: reply{Body: body},
			call: func(c *Client) (any, error) {
				return c.Nodes().Meta().Apply(&NodeMetaApplyRequest{NodeID: "n1", Meta: map[string]*string{"rack": &r2, "zone": nil}}, nil)
			},
			wantMeth: "POST", wantPath: "/v1/client/metadata",
			wantBody: `{"NodeID":"n1","Meta":{"rack":"r2","zone":null}}`,
			check:    check,
		},
	})
}
