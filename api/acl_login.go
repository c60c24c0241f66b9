package api

import "net/http"

// ACLAuth logs in through auth methods: a JWT method at once (Login), an
// OIDC method in two steps (GetAuthURL, then CompleteAuth with what the
// provider sent to the redirect URI). None needs a token.
type ACLAuth struct {
	client *Client
}

// ACLAuth returns the login endpoint group.
func (c *Client) ACLAuth() *ACLAuth { return &ACLAuth{client: c} }

// ACLLoginRequest logs in through the JWT method AuthMethodName with
// LoginToken, a JWT the method's provider issued.
type ACLLoginRequest struct {
	AuthMethodName string
	LoginToken     string
}

// ACLOIDCAuthURLRequest begins an OIDC login: the provider will send the
// user to RedirectURI. ClientNonce is a secret the caller makes and
// presents again to complete the login.
type ACLOIDCAuthURLRequest struct {
	AuthMethodName string
	RedirectURI    string
	ClientNonce    string
}

// ACLOIDCAuthURLResponse is the provider's page the user logs in at.
type ACLOIDCAuthURLResponse struct {
	AuthURL string
}

// ACLOIDCCompleteAuthRequest completes an OIDC login with the state and
// code the provider sent to the redirect URI.
type ACLOIDCCompleteAuthRequest struct {
	AuthMethodName string
	ClientNonce    string
	State          string
	Code           string
	RedirectURI    string
}

// Login trades a JWT for a Nomad token.
func (a *ACLAuth) Login(req *ACLLoginRequest, w *WriteOptions) (*ACLToken, *WriteMeta, error) {
	var tok ACLToken
	wm, err := a.client.write(http.MethodPut, "/v1/acl/login", req, &tok, w)
	if err != nil {
		return nil, nil, err
	}
	return &tok, wm, nil
}

// GetAuthURL begins an OIDC login and returns the provider's URL.
func (a *ACLAuth) GetAuthURL(req *ACLOIDCAuthURLRequest, w *WriteOptions) (*ACLOIDCAuthURLResponse, *WriteMeta, error) {
	var resp ACLOIDCAuthURLResponse
	wm, err := a.client.write(http.MethodPut, "/v1/acl/oidc/auth-url", req, &resp, w)
	if err != nil {
		return nil, nil, err
	}
	return &resp, wm, nil
}

// CompleteAuth completes an OIDC login and returns the Nomad token.
func (a *ACLAuth) CompleteAuth(req *ACLOIDCCompleteAuthRequest, w *WriteOptions) (*ACLToken, *WriteMeta, error) {
	var tok ACLToken
	wm, err := a.client.write(http.MethodPut, "/v1/acl/oidc/complete-auth", req, &tok, w)
	if err != nil {
		return nil, nil, err
	}
	return &tok, wm, nil
}
