package api

import (
	"errors"
	"net/url"
	"testing"
)

func TestVariablesEndpoints(t *testing.T) {
	stored := `{"Namespace":"default","Path":"a/b","CreateIndex":5,"ModifyIndex":7,"CreateTime":1,"ModifyTime":2,"Items":{"k":"v"}}`
	runEndpointCases(t, []endpointCase{
		{
			name:  "create trims the path's slashes",
			reply: reply{Body: stored},
			call: func(c *Client) (any, error) {
				r, _, err := c.Variables().Create(&Variable{Path: "/a/b/", Items: VariableItems{"k": "v"}}, nil)
				return r, err
			},
			wantMeth: "PUT", wantPath: "/v1/var/a/b",
			wantBody: `{"Namespace":"","Path":"a/b","CreateIndex":0,"ModifyIndex":0,"CreateTime":0,"ModifyTime":0,"Items":{"k":"v"}}`,
			check: func(t *testing.T, out any) {
				if v := out.(*Variable); v.ModifyIndex != 7 || v.Items["k"] != "v" {
					t.Fatalf("variable = %+v", v)
				}
			},
		},
		{
			name:  "checked update sends the index",
			reply: reply{Body: stored},
			call: func(c *Client) (any, error) {
				r, _, err := c.Variables().CheckedUpdate(&Variable{Path: "a/b", ModifyIndex: 7, Items: VariableItems{"k": "v"}}, nil)
				return r, err
			},
			wantMeth: "PUT", wantPath: "/v1/var/a/b", wantQuery: url.Values{"cas": {"7"}},
			wantBody: `{"Namespace":"","Path":"a/b","CreateIndex":0,"ModifyIndex":7,"CreateTime":0,"ModifyTime":0,"Items":{"k":"v"}}`,
		},
		{
			name:     "read",
			reply:    reply{Body: stored},
			call:     func(c *Client) (any, error) { r, _, err := c.Variables().Read("a/b", nil); return r, err },
			wantMeth: "GET", wantPath: "/v1/var/a/b",
		},
		{
			name:     "peek at nothing",
			reply:    reply{Status: 404, Body: "variable not found"},
			call:     func(c *Client) (any, error) { r, _, err := c.Variables().Peek("a/b", nil); return r, err },
			wantMeth: "GET", wantPath: "/v1/var/a/b",
			check: func(t *testing.T, out any) {
				if out.(*Variable) != nil {
					t.Fatalf("peek = %+v", out)
				}
			},
		},
		{
			name:     "prefix list",
			reply:    reply{Body: `[{"Namespace":"default","Path":"a/b","Lock":{"ID":"l","TTL":"15s","LockDelay":"15s"}}]`},
			call:     func(c *Client) (any, error) { r, _, err := c.Variables().PrefixList("a", nil); return r, err },
			wantMeth: "GET", wantPath: "/v1/vars", wantQuery: url.Values{"prefix": {"a"}},
			check: func(t *testing.T, out any) {
				if l := out.([]*VariableMetadata); len(l) != 1 || l[0].Lock.TTL != "15s" {
					t.Fatalf("list = %+v", l)
				}
			},
		},
		{
			name:     "delete answers 204",
			reply:    reply{Status: 204},
			call:     func(c *Client) (any, error) { return c.Variables().Delete("a/b", nil) },
			wantMeth: "DELETE", wantPath: "/v1/var/a/b",
		},
		{
			name:  "renew",
			reply: reply{Body: `{"Namespace":"default","Path":"a/b","Lock":{"ID":"l","TTL":"15s","LockDelay":"15s"}}`},
			call: func(c *Client) (any, error) {
				r, _, err := c.Variables().RenewLock(&Variable{Path: "a/b", Lock: &VariableLock{ID: "l"}}, nil)
				return r, err
			},
			wantMeth: "PUT", wantPath: "/v1/var/a/b", wantQuery: url.Values{"lock-renew": {""}},
			wantBody: `{"Namespace":"","Path":"a/b","CreateIndex":0,"ModifyIndex":0,"CreateTime":0,"ModifyTime":0,"Items":null,"Lock":{"ID":"l","TTL":"","LockDelay":""}}`,
		},
	})
}

// TestVariables_CASConflict: a 409 is an ErrCASConflict carrying what
// is there; a missing variable is ErrVariablePathNotFound.
func TestVariables_CASConflict(t *testing.T) {
	agent := newFakeAgent(t, reply{Status: 409, Body: `{"Namespace":"default","Path":"a/b","ModifyIndex":9,"Items":{"k":"now"}}`})
	vs := agent.client(t).Variables()
	_, _, err := vs.CheckedCreate(&Variable{Path: "a/b", Items: VariableItems{"k": "v"}}, nil)
	var conflict ErrCASConflict
	if !errors.As(err, &conflict) || conflict.Conflict.Items["k"] != "now" || conflict.CheckIndex != 0 {
		t.Fatalf("err = %v", err)
	}
	if err.Error() != "cas conflict: expected ModifyIndex 0; found 9" {
		t.Fatalf("text = %q", err)
	}
	_, err = vs.CheckedDelete("a/b", 3, nil)
	if !errors.As(err, &conflict) || conflict.CheckIndex != 3 {
		t.Fatalf("delete err = %v", err)
	}

	missing := newFakeAgent(t, reply{Status: 404, Body: "variable not found"})
	_, _, err = missing.client(t).Variables().GetVariableItems("a/b", nil)
	if !errors.Is(err, ErrVariablePathNotFound) {
		t.Fatalf("err = %v", err)
	}
}
