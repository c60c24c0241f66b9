package api

import (
	"net/url"
	"testing"
)

func TestServicesEndpoints(t *testing.T) {
	runEndpointCases(t, []endpointCase{
		{
			name: "list",
			reply: reply{Body: `[{"Namespace":"default","Services":[{"ServiceName":"web","Tags":["a","b"]}]}]`,
				Header: map[string]string{"X-Nomad-Index": "7"}},
			call: func(c *Client) (any, error) {
				r, _, err := c.Services().List(&QueryOptions{Namespace: "*"})
				return r, err
			},
			wantMeth: "GET", wantPath: "/v1/services", wantQuery: url.Values{"namespace": {"*"}},
			check: func(t *testing.T, out any) {
				l := out.([]*ServiceRegistrationListStub)
				if len(l) != 1 || l[0].Namespace != "default" || l[0].Services[0].ServiceName != "web" ||
					len(l[0].Services[0].Tags) != 2 {
					t.Fatalf("list = %+v", l)
				}
			},
		},
		{
			name: "get with choose",
			reply: reply{Body: `[{"ID":"_nomad-task-a-group-web-web-http","ServiceName":"web","Namespace":"default",` +
				`"NodeID":"n","Datacenter":"dc1","JobID":"j","AllocID":"a","Tags":["x"],"Address":"10.0.0.1","Port":8080,` +
				`"CreateIndex":5,"ModifyIndex":6}]`},
			call: func(c *Client) (any, error) {
				r, _, err := c.Services().Get("web", &QueryOptions{Params: map[string]string{"choose": "1|key"}})
				return r, err
			},
			wantMeth: "GET", wantPath: "/v1/service/web", wantQuery: url.Values{"choose": {"1|key"}},
			check: func(t *testing.T, out any) {
				r := out.([]*ServiceRegistration)
				if len(r) != 1 || r[0].Port != 8080 || r[0].Address != "10.0.0.1" || r[0].ModifyIndex != 6 {
					t.Fatalf("registrations = %+v", r)
				}
			},
		},
		{
			name: "alloc checks",
			reply: reply{Body: `{"9f4e":{"ID":"9f4e","Check":"alive","Group":"example.cache[0]","Mode":"healthiness",` +
				`"Output":"nomad: tcp ok","Service":"redis","Task":"","Status":"success","StatusCode":0,"Timestamp":1678374623}}`},
			call:     func(c *Client) (any, error) { return c.Allocations().Checks("a1", nil) },
			wantMeth: "GET", wantPath: "/v1/client/allocation/a1/checks",
			check: func(t *testing.T, out any) {
				s := out.(AllocCheckStatuses)
				if c := s["9f4e"]; c.Status != "success" || c.Check != "alive" || c.Timestamp != 1678374623 {
					t.Fatalf("checks = %+v", s)
				}
			},
		},
		{
			name:     "job services",
			reply:    reply{Body: `[{"ID":"s1","ServiceName":"web"}]`},
			call:     func(c *Client) (any, error) { r, _, err := c.Jobs().Services("j1", nil); return r, err },
			wantMeth: "GET", wantPath: "/v1/job/j1/services",
		},
		{
			name:     "alloc services",
			reply:    reply{Body: `[{"ID":"s1","ServiceName":"web"}]`},
			call:     func(c *Client) (any, error) { r, _, err := c.Allocations().Services("a1", nil); return r, err },
			wantMeth: "GET", wantPath: "/v1/allocation/a1/services",
		},
		{
			name:     "delete",
			reply:    reply{},
			call:     func(c *Client) (any, error) { return c.Services().Delete("web", "_nomad-task-a", nil) },
			wantMeth: "DELETE", wantPath: "/v1/service/web/_nomad-task-a",
		},
	})
}
