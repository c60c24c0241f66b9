package api

import "testing"

func TestACLAuthEndpoints(t *testing.T) {
	token := `{"AccessorID":"a","SecretID":"s","Name":"JWT-ci","Type":"client","Policies":["p"],"CreateIndex":7,"ModifyIndex":7}`
	runEndpointCases(t, []endpointCase{
		{
			name:  "login",
			reply: reply{Body: token},
			call: func(c *Client) (any, error) {
				r, _, err := c.ACLAuth().Login(&ACLLoginRequest{AuthMethodName: "ci", LoginToken: "jwt"}, nil)
				return r, err
			},
			wantMeth: "PUT", wantPath: "/v1/acl/login", wantBody: `{"AuthMethodName":"ci","LoginToken":"jwt"}`,
			check: func(t *testing.T, out any) {
				if tok := out.(*ACLToken); tok.SecretID != "s" || tok.Name != "JWT-ci" {
					t.Fatalf("token = %+v", tok)
				}
			},
		},
		{
			name:  "auth URL",
			reply: reply{Body: `{"AuthURL":"https://idp.example/authorize?state=st"}`},
			call: func(c *Client) (any, error) {
				r, _, err := c.ACLAuth().GetAuthURL(&ACLOIDCAuthURLRequest{AuthMethodName: "sso",
					RedirectURI: "http://localhost:4649/oidc/callback", ClientNonce: "n"}, nil)
				return r, err
			},
			wantMeth: "PUT", wantPath: "/v1/acl/oidc/auth-url",
			wantBody: `{"AuthMethodName":"sso","RedirectURI":"http://localhost:4649/oidc/callback","ClientNonce":"n"}`,
			check: func(t *testing.T, out any) {
				if u := out.(*ACLOIDCAuthURLResponse).AuthURL; u != "https://idp.example/authorize?state=st" {
					t.Fatalf("auth URL = %q", u)
				}
			},
		},
		{
			name:  "complete auth",
			reply: reply{Body: token},
			call: func(c *Client) (any, error) {
				r, _, err := c.ACLAuth().CompleteAuth(&ACLOIDCCompleteAuthRequest{AuthMethodName: "sso", ClientNonce: "n",
					State: "st", Code: "c", RedirectURI: "http://localhost:4649/oidc/callback"}, nil)
				return r, err
			},
			wantMeth: "PUT", wantPath: "/v1/acl/oidc/complete-auth",
			wantBody: `{"AuthMethodName":"sso","ClientNonce":"n","State":"st","Code":"c","RedirectURI":"http://localhost:4649/oidc/callback"}`,
		},
	})
}
