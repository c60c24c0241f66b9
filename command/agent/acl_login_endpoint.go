package agent

import (
	"net/http"

	"github.com/opennomad/nomad/structs"
)

// The login routes: POST /v1/acl/login (a JWT auth method),
// /v1/acl/oidc/auth-url and /v1/acl/oidc/complete-auth (an OIDC auth
// method's two steps), served by ACL.Login, ACL.OIDCAuthURL and
// ACL.OIDCCompleteAuth. They are open to anyone: they are how a caller
// without a token gets one.

// aclLoginRequest serves PUT/POST /v1/acl/login: the token the login
// earned.
func (s *HTTPServer) aclLoginRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	if !isACLWrite(r) {
		return nil, errInvalidMethod
	}
	var in struct{ AuthMethodName, LoginToken string }
	if err := decodeBody(r, &in); err != nil {
		return nil, err
	}
	args := structs.ACLLoginRequest{AuthMethodName: in.AuthMethodName, LoginToken: in.LoginToken}
	s.parseWriteRequest(r, &args.WriteRequest)
	var out structs.ACLLoginResponse
	if err := s.rpc.RPC("ACL.Login", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return out.ACLToken, nil
}

// aclOIDCAuthURLRequest serves PUT/POST /v1/acl/oidc/auth-url:
// {"AuthURL"}, the provider's page the user logs in at.
func (s *HTTPServer) aclOIDCAuthURLRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	if !isACLWrite(r) {
		return nil, errInvalidMethod
	}
	var in struct{ AuthMethodName, RedirectURI, ClientNonce string }
	if err := decodeBody(r, &in); err != nil {
		return nil, err
	}
	args := structs.ACLOIDCAuthURLRequest{AuthMethodName: in.AuthMethodName, RedirectURI: in.RedirectURI,
		ClientNonce: in.ClientNonce}
	s.parseWriteRequest(r, &args.WriteRequest)
	var out structs.ACLOIDCAuthURLResponse
	if err := s.rpc.RPC("ACL.OIDCAuthURL", &args, &out); err != nil {
		return nil, err
	}
	return struct{ AuthURL string }{out.AuthURL}, nil
}

// aclOIDCCompleteAuthRequest serves PUT/POST /v1/acl/oidc/complete-auth:
// the token the login earned.
func (s *HTTPServer) aclOIDCCompleteAuthRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	if !isACLWrite(r) {
		return nil, errInvalidMethod
	}
	var in struct{ AuthMethodName, ClientNonce, State, Code, RedirectURI string }
	if err := decodeBody(r, &in); err != nil {
		return nil, err
	}
	args := structs.ACLOIDCCompleteAuthRequest{AuthMethodName: in.AuthMethodName, ClientNonce: in.ClientNonce,
		State: in.State, Code: in.Code, RedirectURI: in.RedirectURI}
	s.parseWriteRequest(r, &args.WriteRequest)
	var out structs.ACLLoginResponse
	if err := s.rpc.RPC("ACL.OIDCCompleteAuth", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return out.ACLToken, nil
}
