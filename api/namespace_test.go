package api

import (
	"net/url"
	"testing"
)

func TestNamespacesEndpoints(t *testing.T) {
	list := `[{"Name":"default","Description":"Default shared namespace","CreateIndex":1,"ModifyIndex":1},` +
		`{"Name":"team-a","Meta":{"owner":"a"},"Capabilities":{"EnabledTaskDrivers":["exec"]},"CreateIndex":9,"ModifyIndex":9}]`
	runEndpointCases(t, []endpointCase{
		{
			name:     "list, newest first",
			reply:    reply{Body: list},
			call:     func(c *Client) (any, error) { r, _, err := c.Namespaces().List(nil); return r, err },
			wantMeth: "GET", wantPath: "/v1/namespaces",
			check: func(t *testing.T, out any) {
				ns := out.([]*Namespace)
				if len(ns) != 2 || ns[0].Name != "team-a" || ns[1].Name != "default" ||
					ns[0].Meta["owner"] != "a" || ns[0].Capabilities.EnabledTaskDrivers[0] != "exec" {
					t.Fatalf("namespaces = %+v", ns)
				}
			},
		},
		{
			name:     "prefix list",
			reply:    reply{Body: "[]"},
			call:     func(c *Client) (any, error) { r, _, err := c.Namespaces().PrefixList("team", nil); return r, err },
			wantMeth: "GET", wantPath: "/v1/namespaces",
			wantQuery: url.Values{"prefix": {"team"}},
		},
		{
			name:     "info",
			reply:    reply{Body: `{"Name":"team-a","Description":"A","CreateIndex":9,"ModifyIndex":10}`},
			call:     func(c *Client) (any, error) { r, _, err := c.Namespaces().Info("team-a", nil); return r, err },
			wantMeth: "GET", wantPath: "/v1/namespace/team-a",
			check: func(t *testing.T, out any) {
				if n := out.(*Namespace); n.Description != "A" || n.ModifyIndex != 10 {
					t.Fatalf("namespace = %+v", n)
				}
			},
		},
		{
			name:  "register",
			reply: reply{},
			call: func(c *Client) (any, error) {
				return c.Namespaces().Register(&Namespace{Name: "team-a", Description: "A"}, nil)
			},
			wantMeth: "PUT", wantPath: "/v1/namespace",
			wantBody: `{"Name":"team-a","Description":"A","Quota":"","Capabilities":null,"NodePoolConfiguration":null,` +
				`"Meta":null,"CreateIndex":0,"ModifyIndex":0}`,
		},
		{
			name:     "delete",
			reply:    reply{},
			call:     func(c *Client) (any, error) { return c.Namespaces().Delete("team-a", nil) },
			wantMeth: "DELETE", wantPath: "/v1/namespace/team-a",
		},
	})
}

// A missing namespace is a 404 the caller can tell apart.
func TestNamespaces_NotFound(t *testing.T) {
	agent := newFakeAgent(t, reply{Status: 404, Body: "Namespace not found"})
	_, _, err := agent.client(t).Namespaces().Info("nope", nil)
	if code, ok := StatusCodeOf(err); !ok || code != 404 {
		t.Fatalf("error = %v", err)
	}
}
