package agent

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/opennomad/nomad/structs"
)

// The ACL API: /v1/acl/bootstrap, policies, tokens and roles, served by
// the ACL.* RPCs with Nomad's paths, statuses and texts; auth methods,
// binding rules and client introduction tokens in
// acl_auth_method_endpoint.go; the login routes in
// acl_login_endpoint.go.

// aclRoutes registers the ACL routes with h.
func (s *HTTPServer) aclRoutes(h func(string, need, handlerFunc)) {
	h("/v1/acl/bootstrap", public, s.aclBootstrapRequest)
	h("/v1/acl/policies", viaRPC, s.aclPoliciesRequest)
	h("/v1/acl/policy/", viaRPC, s.aclPolicySpecificRequest)
	h("/v1/acl/tokens", viaRPC, s.aclTokensRequest)
	h("/v1/acl/token", viaRPC, s.aclTokenCreateRequest)
	h("/v1/acl/token/", viaRPC, s.aclTokenSpecificRequest)
	h("/v1/acl/roles", viaRPC, s.aclRolesRequest)
	h("/v1/acl/role", viaRPC, s.aclRoleCreateRequest)
	h("/v1/acl/role/", viaRPC, s.aclRoleSpecificRequest)
	h("/v1/acl/auth-methods", viaRPC, s.aclAuthMethodsRequest)
	h("/v1/acl/auth-method", viaRPC, s.aclAuthMethodCreateRequest)
	h("/v1/acl/auth-method/", viaRPC, s.aclAuthMethodSpecificRequest)
	h("/v1/acl/binding-rules", viaRPC, s.aclBindingRulesRequest)
	h("/v1/acl/binding-rule", viaRPC, s.aclBindingRuleCreateRequest)
	h("/v1/acl/binding-rule/", viaRPC, s.aclBindingRuleSpecificRequest)
	h("/v1/acl/identity/client-introduction-token", viaRPC, s.aclClientIntroductionTokenRequest)
	// Logging in is how a caller gets a token: open to anyone.
	h("/v1/acl/login", public, s.aclLoginRequest)
	h("/v1/acl/oidc/auth-url", public, s.aclOIDCAuthURLRequest)
	h("/v1/acl/oidc/complete-auth", public, s.aclOIDCCompleteAuthRequest)
	h("/v1/acl/identity/", notServed, aclNotSupported)
}

// aclNotSupported answers the ACL routes this server does not implement.
func aclNotSupported(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	return nil, codedError(http.StatusNotImplemented, r.URL.Path+" is not supported by this server")
}

// aclRead parses a read's options; only GET is allowed.
func (s *HTTPServer) aclRead(r *http.Request, q *structs.QueryOptions) error {
	if err := requireMethod(r, http.MethodGet); err != nil {
		return err
	}
	return s.parseQueryOptions(r, q)
}

func isACLWrite(r *http.Request) bool {
	return r.Method == http.MethodPut || r.Method == http.MethodPost
}

// aclBootstrapRequest serves PUT/POST /v1/acl/bootstrap with an optional
// {"BootstrapSecret": "<uuid>"} body: the first management token.
func (s *HTTPServer) aclBootstrapRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	if !isACLWrite(r) {
		return nil, errInvalidMethod
	}
	args := structs.ACLTokenBootstrapRequest{}
	if r.Body != nil {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			return nil, codedError(http.StatusBadRequest, "Failed to read request body: "+err.Error())
		}
		if t := strings.TrimSpace(string(body)); t != "" && t != "null" {
			var in struct{ BootstrapSecret string }
			if err := json.Unmarshal(body, &in); err != nil {
				return nil, codedError(http.StatusBadRequest, "Failed to decode request body: "+err.Error())
			}
			args.BootstrapSecret = in.BootstrapSecret
		}
	}
	s.parseWriteRequest(r, &args.WriteRequest)
	var out structs.ACLTokenUpsertResponse
	if err := s.rpc.RPC("ACL.Bootstrap", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	if len(out.Tokens) == 0 {
		return nil, nil
	}
	return out.Tokens[0], nil
}

// aclPoliciesRequest serves GET /v1/acl/policies?prefix=.
func (s *HTTPServer) aclPoliciesRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	args := structs.ACLPolicyListRequest{}
	if err := s.aclRead(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	lo, err := takeListOptions(&args.QueryOptions)
	if err != nil {
		return nil, err
	}
	var out structs.ACLPolicyListResponse
	if err := s.rpc.RPC("ACL.ListPolicies", &args, &out); err != nil {
		return nil, err
	}
	policies, next, err := applyListOptions(lo, out.Policies, func(p *structs.ACLPolicyListStub) string { return p.Name })
	if err != nil {
		return nil, err
	}
	out.NextToken = next
	setMeta(w, &out.QueryMeta)
	return policies, nil
}

// aclPolicySpecificRequest serves /v1/acl/policy/<name>: GET, PUT/POST
// and DELETE; and GET /v1/acl/policy/self, the caller's policies.
func (s *HTTPServer) aclPolicySpecificRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	name := strings.TrimPrefix(r.URL.Path, "/v1/acl/policy/")
	if name == "" || strings.Contains(name, "/") {
		return nil, codedError(http.StatusBadRequest, "Missing policy name")
	}
	if name == "self" {
		// The caller's own policies: for a client token those it holds
		// (ListPolicies shows a client token no other).
		return s.aclPoliciesRequest(w, r)
	}
	switch r.Method {
	case http.MethodGet:
		args := structs.ACLPolicySpecificRequest{Name: name}
		if err := s.parseQueryOptions(r, &args.QueryOptions); err != nil {
			return nil, err
		}
		var out structs.SingleACLPolicyResponse
		if err := s.rpc.RPC("ACL.GetPolicy", &args, &out); err != nil {
			return nil, err
		}
		setMeta(w, &out.QueryMeta)
		if out.Policy == nil {
			return nil, codedError(http.StatusNotFound, "ACL policy not found")
		}
		return out.Policy, nil
	case http.MethodPut, http.MethodPost:
		var policy structs.ACLPolicy
		if err := decodeBody(r, &policy); err != nil {
			return nil, err
		}
		if policy.Name != name {
			return nil, codedError(http.StatusBadRequest, "ACL policy name does not match request path")
		}
		args := structs.ACLPolicyUpsertRequest{Policies: []*structs.ACLPolicy{&policy}}
		s.parseWriteRequest(r, &args.WriteRequest)
		var out structs.GenericResponse
		if err := s.rpc.RPC("ACL.UpsertPolicies", &args, &out); err != nil {
			return nil, err
		}
		setIndex(w, out.Index)
		return nil, nil
	case http.MethodDelete:
		args := structs.ACLPolicyDeleteRequest{Names: []string{name}}
		s.parseWriteRequest(r, &args.WriteRequest)
		var out structs.GenericResponse
		if err := s.rpc.RPC("ACL.DeletePolicies", &args, &out); err != nil {
			return nil, err
		}
		setIndex(w, out.Index)
		return nil, nil
	}
	return nil, errInvalidMethod
}

// aclTokensRequest serves GET /v1/acl/tokens?prefix=&global=: stubs,
// without secrets, oldest first.
func (s *HTTPServer) aclTokensRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	args := structs.ACLTokenListRequest{}
	if err := s.aclRead(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	global, err := boolParam(r, "global")
	if err != nil {
		return nil, err
	}
	args.GlobalOnly = global
	lo, err := takeListOptions(&args.QueryOptions)
	if err != nil {
		return nil, err
	}
	var out structs.ACLTokenListResponse
	if err := s.rpc.RPC("ACL.ListTokens", &args, &out); err != nil {
		return nil, err
	}
	tokens, next, err := applyListOptions(lo, out.Tokens, aclTokenKey)
	if err != nil {
		return nil, err
	}
	out.NextToken = next
	setMeta(w, &out.QueryMeta)
	return tokens, nil
}

// aclTokenKey orders tokens for pagination as the list does: by
// CreateIndex (zero-padded, so that text order is numeric order), then
// AccessorID.
func aclTokenKey(t *structs.ACLTokenListStub) string {
	return fmt.Sprintf("%020d.%s", t.CreateIndex, t.AccessorID)
}

// aclTokenCreateRequest serves PUT/POST /v1/acl/token: a new token.
func (s *HTTPServer) aclTokenCreateRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	if !isACLWrite(r) {
		return nil, errInvalidMethod
	}
	return s.aclTokenUpsert(w, r, "")
}

func (s *HTTPServer) aclTokenUpsert(w http.ResponseWriter, r *http.Request, accessor string) (interface{}, error) {
	var token structs.ACLToken
	if err := decodeBody(r, &token); err != nil {
		return nil, err
	}
	if accessor != "" {
		if token.AccessorID != "" && token.AccessorID != accessor {
			return nil, codedError(http.StatusBadRequest, "ACL token accessor does not match request path")
		}
		token.AccessorID = accessor
	}
	args := structs.ACLTokenUpsertRequest{Tokens: []*structs.ACLToken{&token}}
	s.parseWriteRequest(r, &args.WriteRequest)
	var out structs.ACLTokenUpsertResponse
	if err := s.rpc.RPC("ACL.UpsertTokens", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	if len(out.Tokens) == 0 {
		return nil, nil
	}
	return out.Tokens[0], nil
}

// aclTokenSpecificRequest serves /v1/acl/token/<accessor> (GET, PUT/POST,
// DELETE) and GET /v1/acl/token/self.
func (s *HTTPServer) aclTokenSpecificRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	accessor := strings.TrimPrefix(r.URL.Path, "/v1/acl/token/")
	switch {
	case accessor == "self":
		return s.aclTokenSelfRequest(w, r)
	case accessor == "onetime":
		return s.aclOneTimeTokenRequest(w, r)
	case accessor == "onetime/exchange":
		return s.aclOneTimeTokenExchangeRequest(w, r)
	case accessor == "" || strings.Contains(accessor, "/"):
		return nil, codedError(http.StatusBadRequest, "Missing token accessor")
	}
	switch r.Method {
	case http.MethodGet:
		args := structs.ACLTokenSpecificRequest{AccessorID: accessor}
		if err := s.parseQueryOptions(r, &args.QueryOptions); err != nil {
			return nil, err
		}
		var out structs.SingleACLTokenResponse
		if err := s.rpc.RPC("ACL.GetToken", &args, &out); err != nil {
			return nil, err
		}
		setMeta(w, &out.QueryMeta)
		if out.Token == nil {
			return nil, codedError(http.StatusNotFound, "ACL token not found")
		}
		return out.Token, nil
	case http.MethodPut, http.MethodPost:
		return s.aclTokenUpsert(w, r, accessor)
	case http.MethodDelete:
		args := structs.ACLTokenDeleteRequest{AccessorIDs: []string{accessor}}
		s.parseWriteRequest(r, &args.WriteRequest)
		var out structs.GenericResponse
		if err := s.rpc.RPC("ACL.DeleteTokens", &args, &out); err != nil {
			return nil, err
		}
		setIndex(w, out.Index)
		return nil, nil
	}
	return nil, errInvalidMethod
}

// aclOneTimeTokenRequest serves PUT/POST /v1/acl/token/onetime: a
// one-time token for the caller's token, exchangeable once within ten
// minutes.
func (s *HTTPServer) aclOneTimeTokenRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	if !isACLWrite(r) {
		return nil, errInvalidMethod
	}
	args := structs.OneTimeTokenUpsertRequest{}
	s.parseWriteRequest(r, &args.WriteRequest)
	var out structs.OneTimeTokenUpsertResponse
	if err := s.rpc.RPC("ACL.UpsertOneTimeToken", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return out, nil
}

// aclOneTimeTokenExchangeRequest serves PUT/POST
// /v1/acl/token/onetime/exchange {"OneTimeSecretID"}: the ACL token.
func (s *HTTPServer) aclOneTimeTokenExchangeRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	if !isACLWrite(r) {
		return nil, errInvalidMethod
	}
	args := structs.OneTimeTokenExchangeRequest{}
	if err := decodeBody(r, &args); err != nil {
		return nil, err
	}
	s.parseWriteRequest(r, &args.WriteRequest)
	var out structs.OneTimeTokenExchangeResponse
	if err := s.rpc.RPC("ACL.ExchangeOneTimeToken", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return out, nil
}

// aclTokenSelfRequest serves GET /v1/acl/token/self: the caller's token,
// secret included.
func (s *HTTPServer) aclTokenSelfRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	args := structs.ACLWhoAmIRequest{}
	if err := s.aclRead(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.SingleACLTokenResponse
	if err := s.rpc.RPC("ACL.WhoAmI", &args, &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	if out.Token == nil {
		return nil, codedError(http.StatusNotFound, "ACL token not found")
	}
	return out.Token, nil
}

// aclRolesRequest serves GET /v1/acl/roles?prefix= (a prefix of IDs).
func (s *HTTPServer) aclRolesRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	args := structs.ACLRolesListRequest{}
	if err := s.aclRead(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	lo, err := takeListOptions(&args.QueryOptions)
	if err != nil {
		return nil, err
	}
	var out structs.ACLRolesListResponse
	if err := s.rpc.RPC("ACL.ListRoles", &args, &out); err != nil {
		return nil, err
	}
	roles, next, err := applyListOptions(lo, out.ACLRoles, func(r *structs.ACLRoleListStub) string { return r.ID })
	if err != nil {
		return nil, err
	}
	out.NextToken = next
	setMeta(w, &out.QueryMeta)
	return roles, nil
}

// aclRoleCreateRequest serves PUT/POST /v1/acl/role: a new role.
func (s *HTTPServer) aclRoleCreateRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	if !isACLWrite(r) {
		return nil, errInvalidMethod
	}
	return s.aclRoleUpsert(w, r, "")
}

func (s *HTTPServer) aclRoleUpsert(w http.ResponseWriter, r *http.Request, id string) (interface{}, error) {
	var role structs.ACLRole
	if err := decodeBody(r, &role); err != nil {
		return nil, err
	}
	if id != "" {
		if role.ID != "" && role.ID != id {
			return nil, codedError(http.StatusBadRequest, "ACL role ID does not match request path")
		}
		role.ID = id
	}
	args := structs.ACLRolesUpsertRequest{Roles: []*structs.ACLRole{&role}}
	s.parseWriteRequest(r, &args.WriteRequest)
	var out structs.ACLRolesUpsertResponse
	if err := s.rpc.RPC("ACL.UpsertRoles", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	if len(out.Roles) == 0 {
		return nil, nil
	}
	return out.Roles[0], nil
}

// aclRoleSpecificRequest serves /v1/acl/role/<id> (GET, PUT/POST,
// DELETE) and GET /v1/acl/role/name/<name>.
func (s *HTTPServer) aclRoleSpecificRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	rest := strings.TrimPrefix(r.URL.Path, "/v1/acl/role/")
	if name, ok := strings.CutPrefix(rest, "name/"); ok {
		if name == "" || strings.Contains(name, "/") {
			return nil, codedError(http.StatusBadRequest, "invalid URI")
		}
		args := structs.ACLRoleByNameRequest{RoleName: name}
		if err := s.aclRead(r, &args.QueryOptions); err != nil {
			return nil, err
		}
		return s.aclRoleRead(w, "ACL.GetRoleByName", &args)
	}
	if rest == "" || strings.Contains(rest, "/") {
		return nil, codedError(http.StatusBadRequest, "invalid URI")
	}
	switch r.Method {
	case http.MethodGet:
		args := structs.ACLRoleByIDRequest{RoleID: rest}
		if err := s.parseQueryOptions(r, &args.QueryOptions); err != nil {
			return nil, err
		}
		return s.aclRoleRead(w, "ACL.GetRole", &args)
	case http.MethodPut, http.MethodPost:
		return s.aclRoleUpsert(w, r, rest)
	case http.MethodDelete:
		args := structs.ACLRolesDeleteByIDRequest{ACLRoleIDs: []string{rest}}
		s.parseWriteRequest(r, &args.WriteRequest)
		var out structs.GenericResponse
		if err := s.rpc.RPC("ACL.DeleteRoles", &args, &out); err != nil {
			return nil, err
		}
		setIndex(w, out.Index)
		return nil, nil
	}
	return nil, errInvalidMethod
}

func (s *HTTPServer) aclRoleRead(w http.ResponseWriter, method string, args interface{}) (interface{}, error) {
	var out structs.ACLRoleByIDResponse
	if err := s.rpc.RPC(method, args, &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	if out.ACLRole == nil {
		return nil, codedError(http.StatusNotFound, "ACL role not found")
	}
	return out.ACLRole, nil
}
