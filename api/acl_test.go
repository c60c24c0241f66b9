package api

import (
	"testing"
	"time"
)

func TestACLEndpoints(t *testing.T) {
	accessor := "9c5e1b7a-3f2d-4e8a-b1c6-7d0f2a4e9b13"
	token := `{"AccessorID":"` + accessor + `","SecretID":"s","Name":"ci","Type":"client","Policies":["p"],` +
		`"Roles":[{"ID":"r1","Name":"ops"}],"Global":false,"CreateTime":"2026-01-02T03:04:05Z",` +
		`"ExpirationTime":"2026-01-02T04:04:05Z","ExpirationTTL":"1h0m0s","CreateIndex":7,"ModifyIndex":8}`
	role := `{"ID":"r1","Name":"ops","Description":"","Policies":[{"Name":"p"}],"CreateIndex":3,"ModifyIndex":3}`
	runEndpointCases(t, []endpointCase{
		{
			name:     "bootstrap",
			reply:    reply{Body: token},
			call:     func(c *Client) (any, error) { r, _, err := c.ACLTokens().Bootstrap(nil); return r, err },
			wantMeth: "PUT", wantPath: "/v1/acl/bootstrap",
		},
		{
			name:  "bootstrap with a secret",
			reply: reply{Body: token},
			call: func(c *Client) (any, error) {
				r, _, err := c.ACLTokens().BootstrapOpts(accessor, nil)
				return r, err
			},
			wantMeth: "PUT", wantPath: "/v1/acl/bootstrap", wantBody: `{"BootstrapSecret":"` + accessor + `"}`,
		},
		{
			name:  "create token",
			reply: reply{Body: token},
			call: func(c *Client) (any, error) {
				r, _, err := c.ACLTokens().Create(&ACLToken{Name: "ci", Type: "client", Policies: []string{"p"},
					ExpirationTTL: time.Hour}, nil)
				return r, err
			},
			wantMeth: "PUT", wantPath: "/v1/acl/token",
			wantBody: `{"AccessorID":"","SecretID":"","Name":"ci","Type":"client","Policies":["p"],"Roles":null,` +
				`"Global":false,"CreateTime":"0001-01-01T00:00:00Z","ExpirationTTL":"1h0m0s","CreateIndex":0,"ModifyIndex":0}`,
			check: func(t *testing.T, out any) {
				tok := out.(*ACLToken)
				if tok.ExpirationTTL != time.Hour || tok.Roles[0].Name != "ops" || tok.ExpirationTime == nil {
					t.Fatalf("token = %+v", tok)
				}
			},
		},
		{
			name:     "token info",
			reply:    reply{Body: token},
			call:     func(c *Client) (any, error) { r, _, err := c.ACLTokens().Info(accessor, nil); return r, err },
			wantMeth: "GET", wantPath: "/v1/acl/token/" + accessor,
		},
		{
			name:     "token self",
			reply:    reply{Body: token},
			call:     func(c *Client) (any, error) { r, _, err := c.ACLTokens().Self(nil); return r, err },
			wantMeth: "GET", wantPath: "/v1/acl/token/self",
		},
		{
			name:  "one-time token",
			reply: reply{Body: `{"OneTimeToken":{"OneTimeSecretID":"o","AccessorID":"a","ExpiresAt":"2026-01-02T03:14:05Z"},"Index":9}`},
			call: func(c *Client) (any, error) {
				r, _, err := c.ACLTokens().UpsertOneTimeToken(nil)
				return r, err
			},
			wantMeth: "PUT", wantPath: "/v1/acl/token/onetime",
			check: func(t *testing.T, out any) {
				if o := out.(*OneTimeToken); o.OneTimeSecretID != "o" || o.AccessorID != "a" {
					t.Fatalf("one-time token = %+v", o)
				}
			},
		},
		{
			name:  "one-time token exchange",
			reply: reply{Body: `{"Token":` + token + `,"Index":10}`},
			call: func(c *Client) (any, error) {
				r, _, err := c.ACLTokens().ExchangeOneTimeToken("o", nil)
				return r, err
			},
			wantMeth: "PUT", wantPath: "/v1/acl/token/onetime/exchange", wantBody: `{"OneTimeSecretID":"o"}`,
			check: func(t *testing.T, out any) {
				if tok := out.(*ACLToken); tok.AccessorID != accessor {
					t.Fatalf("token = %+v", tok)
				}
			},
		},
		{
			name:     "token list",
			reply:    reply{Body: "[]"},
			call:     func(c *Client) (any, error) { r, _, err := c.ACLTokens().List(nil); return r, err },
			wantMeth: "GET", wantPath: "/v1/acl/tokens",
		},
		{
			name:     "token delete",
			reply:    reply{},
			call:     func(c *Client) (any, error) { return c.ACLTokens().Delete(accessor, nil) },
			wantMeth: "DELETE", wantPath: "/v1/acl/token/" + accessor,
		},
		{
			name:  "policy upsert",
			reply: reply{},
			call: func(c *Client) (any, error) {
				return c.ACLPolicies().Upsert(&ACLPolicy{Name: "p", Rules: `node { policy = "read" }`}, nil)
			},
			wantMeth: "PUT", wantPath: "/v1/acl/policy/p",
			wantBody: `{"Name":"p","Description":"","Rules":"node { policy = \"read\" }","JobACL":null,"CreateIndex":0,"ModifyIndex":0}`,
		},
		{
			name:     "policy info",
			reply:    reply{Body: `{"Name":"p","Rules":""}`},
			call:     func(c *Client) (any, error) { r, _, err := c.ACLPolicies().Info("p", nil); return r, err },
			wantMeth: "GET", wantPath: "/v1/acl/policy/p",
		},
		{
			name:     "policy list",
			reply:    reply{Body: `[]`},
			call:     func(c *Client) (any, error) { r, _, err := c.ACLPolicies().List(nil); return r, err },
			wantMeth: "GET", wantPath: "/v1/acl/policies",
		},
		{
			name:     "policy delete",
			reply:    reply{},
			call:     func(c *Client) (any, error) { return c.ACLPolicies().Delete("p", nil) },
			wantMeth: "DELETE", wantPath: "/v1/acl/policy/p",
		},
		{
			name:  "role create",
			reply: reply{Body: role},
			call: func(c *Client) (any, error) {
				r, _, err := c.ACLRoles().Create(&ACLRole{Name: "ops", Policies: []*ACLRolePolicyLink{{Name: "p"}}}, nil)
				return r, err
			},
			wantMeth: "PUT", wantPath: "/v1/acl/role",
			wantBody: `{"ID":"","Name":"ops","Description":"","Policies":[{"Name":"p"}],"CreateIndex":0,"ModifyIndex":0}`,
		},
		{
			name:     "role by name",
			reply:    reply{Body: role},
			call:     func(c *Client) (any, error) { r, _, err := c.ACLRoles().GetByName("ops", nil); return r, err },
			wantMeth: "GET", wantPath: "/v1/acl/role/name/ops",
		},
		{
			name:     "role delete",
			reply:    reply{},
			call:     func(c *Client) (any, error) { return c.ACLRoles().Delete("r1", nil) },
			wantMeth: "DELETE", wantPath: "/v1/acl/role/r1",
		},
	})
}
