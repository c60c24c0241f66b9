package api

import (
	"encoding/json"
	"net/url"
	"testing"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"
)

func TestNodePoolsEndpoints(t *testing.T) {
	list := `[{"Name":"all","Description":"Node pool with all nodes in the cluster.","NodeIdentityTTL":86400000000000,"CreateIndex":1,"ModifyIndex":1},` +
		`{"Name":"gpu","Meta":{"rack":"r1"},"NodeIdentityTTL":2592000000000000,"CreateIndex":9,"ModifyIndex":9}]`
	runEndpointCases(t, []endpointCase{
		{
			name:     "list, by name",
			reply:    reply{Body: list},
			call:     func(c *Client) (any, error) { r, _, err := c.NodePools().List(nil); return r, err },
			wantMeth: "GET", wantPath: "/v1/node/pools",
			check: func(t *testing.T, out any) {
				p := out.([]*NodePool)
				if len(p) != 2 || p[0].Name != "all" || p[1].Meta["rack"] != "r1" ||
					p[0].NodeIdentityTTL != 24*time.Hour || p[1].NodeIdentityTTL != 720*time.Hour {
					t.Fatalf("pools = %+v", p)
				}
			},
		},
		{
			name:     "prefix list",
			reply:    reply{Body: "[]"},
			call:     func(c *Client) (any, error) { r, _, err := c.NodePools().PrefixList("g", nil); return r, err },
			wantMeth: "GET", wantPath: "/v1/node/pools",
			wantQuery: url.Values{"prefix": {"g"}},
		},
		{
			name:     "info",
			reply:    reply{Body: `{"Name":"gpu","Description":"GPUs","NodeIdentityTTL":"1h","CreateIndex":9,"ModifyIndex":10}`},
			call:     func(c *Client) (any, error) { r, _, err := c.NodePools().Info("gpu", nil); return r, err },
			wantMeth: "GET", wantPath: "/v1/node/pool/gpu",
			check: func(t *testing.T, out any) {
				if p := out.(*NodePool); p.Description != "GPUs" || p.ModifyIndex != 10 || p.NodeIdentityTTL != time.Hour {
					t.Fatalf("pool = %+v", p)
				}
			},
		},
		{
			name:  "register",
			reply: reply{},
			call: func(c *Client) (any, error) {
				return c.NodePools().Register(&NodePool{Name: "gpu", Description: "GPUs", NodeIdentityTTL: 720 * time.Hour}, nil)
			},
			wantMeth: "PUT", wantPath: "/v1/node/pools",
			wantBody: `{"Name":"gpu","Description":"GPUs","Meta":null,"NodeIdentityTTL":"720h0m0s","SchedulerConfiguration":null,` +
				`"CreateIndex":0,"ModifyIndex":0}`,
		},
		{
			name:     "delete",
			reply:    reply{},
			call:     func(c *Client) (any, error) { return c.NodePools().Delete("gpu", nil) },
			wantMeth: "DELETE", wantPath: "/v1/node/pool/gpu",
		},
		{
			name:     "jobs",
			reply:    reply{Body: `[{"ID":"web","NodePool":"gpu"}]`},
			call:     func(c *Client) (any, error) { r, _, err := c.NodePools().ListJobs("gpu", nil); return r, err },
			wantMeth: "GET", wantPath: "/v1/node/pool/gpu/jobs",
			check: func(t *testing.T, out any) {
				if j := out.([]*JobListStub); len(j) != 1 || j[0].ID != "web" {
					t.Fatalf("jobs = %+v", j)
				}
			},
		},
		{
			name:     "nodes",
			reply:    reply{Body: `[{"ID":"n1","NodePool":"gpu"}]`},
			call:     func(c *Client) (any, error) { r, _, err := c.NodePools().ListNodes("gpu", nil); return r, err },
			wantMeth: "GET", wantPath: "/v1/node/pool/gpu/nodes",
			check: func(t *testing.T, out any) {
				if n := out.([]*NodeListStub); len(n) != 1 || n[0].NodePool != "gpu" {
					t.Fatalf("nodes = %+v", n)
				}
			},
		},
	})
}

func TestNodePools_MissingName(t *testing.T) {
	c, err := NewClient(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	pools := c.NodePools()
	if _, _, err := pools.Info("", nil); err == nil || err.Error() != "missing node pool name" {
		t.Errorf("Info: %v", err)
	}
	if _, err := pools.Register(nil, nil); err == nil || err.Error() != "missing node pool" {
		t.Errorf("Register(nil): %v", err)
	}
	if _, err := pools.Register(&NodePool{}, nil); err == nil || err.Error() != "missing node pool name" {
		t.Errorf("Register: %v", err)
	}
	if _, err := pools.Delete("", nil); err == nil || err.Error() != "missing node pool name" {
		t.Errorf("Delete: %v", err)
	}
}

// TestNodePool_JSONMatchesNomadAPI: what our client sends, Nomad's reads,
// and the other way round.
func TestNodePool_JSONMatchesNomadAPI(t *testing.T) {
	ours := &NodePool{Name: "gpu", Meta: map[string]string{"a": "b"}, NodeIdentityTTL: 90 * time.Minute}
	b, err := json.Marshal(ours)
	if err != nil {
		t.Fatal(err)
	}
	var theirs nomadapi.NodePool
	if err := json.Unmarshal(b, &theirs); err != nil || theirs.NodeIdentityTTL != 90*time.Minute || theirs.Meta["a"] != "b" {
		t.Fatalf("theirs = %+v, %v", theirs, err)
	}
	b, err = json.Marshal(&theirs)
	if err != nil {
		t.Fatal(err)
	}
	var back NodePool
	if err := json.Unmarshal(b, &back); err != nil || back.NodeIdentityTTL != 90*time.Minute || back.Name != "gpu" {
		t.Fatalf("back = %+v, %v", back, err)
	}
}
