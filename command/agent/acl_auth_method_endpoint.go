package agent

import (
	"net/http"
	"strings"
	"time"

	"github.com/opennomad/nomad/structs"
)

// The auth method and binding rule routes, and the client introduction
// token, served by the ACL.* RPCs with Nomad's paths and texts.

// aclAuthMethodsRequest serves GET /v1/acl/auth-methods.
func (s *HTTPServer) aclAuthMethodsRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	args := structs.ACLAuthMethodsListRequest{}
	if err := s.aclRead(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.ACLAuthMethodsListResponse
	if err := s.rpc.RPC("ACL.ListAuthMethods", &args, &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	return out.AuthMethods, nil
}

// aclAuthMethodCreateRequest serves PUT/POST /v1/acl/auth-method.
func (s *HTTPServer) aclAuthMethodCreateRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	if !isACLWrite(r) {
		return nil, errInvalidMethod
	}
	return s.aclAuthMethodUpsert(w, r, "")
}

func (s *HTTPServer) aclAuthMethodUpsert(w http.ResponseWriter, r *http.Request, name string) (interface{}, error) {
	var method structs.ACLAuthMethod
	if err := decodeBody(r, &method); err != nil {
		return nil, err
	}
	if name != "" && method.Name != name {
		return nil, codedError(http.StatusBadRequest, "ACL auth-method name does not match request path")
	}
	args := structs.ACLAuthMethodsUpsertRequest{AuthMethods: []*structs.ACLAuthMethod{&method}}
	s.parseWriteRequest(r, &args.WriteRequest)
	var out structs.ACLAuthMethodsUpsertResponse
	if err := s.rpc.RPC("ACL.UpsertAuthMethods", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	if len(out.AuthMethods) == 0 {
		return nil, nil
	}
	return out.AuthMethods[0], nil
}

// aclAuthMethodSpecificRequest serves /v1/acl/auth-method/<name>: GET,
// PUT/POST and DELETE.
func (s *HTTPServer) aclAuthMethodSpecificRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	name := strings.TrimPrefix(r.URL.Path, "/v1/acl/auth-method/")
	if name == "" || strings.Contains(name, "/") {
		return nil, codedError(http.StatusBadRequest, "Missing ACL auth-method name")
	}
	switch r.Method {
	case http.MethodGet:
		args := structs.ACLAuthMethodGetRequest{MethodName: name}
		if err := s.parseQueryOptions(r, &args.QueryOptions); err != nil {
			return nil, err
		}
		var out structs.ACLAuthMethodGetResponse
		if err := s.rpc.RPC("ACL.GetAuthMethod", &args, &out); err != nil {
			return nil, err
		}
		setMeta(w, &out.QueryMeta)
		if out.AuthMethod == nil {
			return nil, codedError(http.StatusNotFound, "ACL auth-method not found")
		}
		return out.AuthMethod, nil
	case http.MethodPut, http.MethodPost:
		return s.aclAuthMethodUpsert(w, r, name)
	case http.MethodDelete:
		args := structs.ACLAuthMethodsDeleteRequest{Names: []string{name}}
		s.parseWriteRequest(r, &args.WriteRequest)
		var out structs.GenericResponse
		if err := s.rpc.RPC("ACL.DeleteAuthMethods", &args, &out); err != nil {
			return nil, err
		}
		setIndex(w, out.Index)
		return nil, nil
	}
	return nil, errInvalidMethod
}

// aclBindingRulesRequest serves GET /v1/acl/binding-rules?prefix= (a
// prefix of IDs) and ?auth_method=.
func (s *HTTPServer) aclBindingRulesRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	args := structs.ACLBindingRulesListRequest{AuthMethod: r.URL.Query().Get("auth_method")}
	if err := s.aclRead(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	lo, err := takeListOptions(&args.QueryOptions)
	if err != nil {
		return nil, err
	}
	var out structs.ACLBindingRulesListResponse
	if err := s.rpc.RPC("ACL.ListBindingRules", &args, &out); err != nil {
		return nil, err
	}
	rules, next, err := applyListOptions(lo, out.ACLBindingRules, func(b *structs.ACLBindingRuleListStub) string { return b.ID })
	if err != nil {
		return nil, err
	}
	out.NextToken = next
	setMeta(w, &out.QueryMeta)
	return rules, nil
}

// aclBindingRuleCreateRequest serves PUT/POST /v1/acl/binding-rule: a new
// rule.
func (s *HTTPServer) aclBindingRuleCreateRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	if !isACLWrite(r) {
		return nil, errInvalidMethod
	}
	return s.aclBindingRuleUpsert(w, r, "")
}

func (s *HTTPServer) aclBindingRuleUpsert(w http.ResponseWriter, r *http.Request, id string) (interface{}, error) {
	var rule structs.ACLBindingRule
	if err := decodeBody(r, &rule); err != nil {
		return nil, err
	}
	if id != "" {
		if rule.ID != "" && rule.ID != id {
			return nil, codedError(http.StatusBadRequest, "ACL binding rule ID does not match request path")
		}
		rule.ID = id
	}
	args := structs.ACLBindingRulesUpsertRequest{ACLBindingRules: []*structs.ACLBindingRule{&rule}}
	s.parseWriteRequest(r, &args.WriteRequest)
	var out structs.ACLBindingRulesUpsertResponse
	if err := s.rpc.RPC("ACL.UpsertBindingRules", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	if len(out.ACLBindingRules) == 0 {
		return nil, nil
	}
	return out.ACLBindingRules[0], nil
}

// aclBindingRuleSpecificRequest serves /v1/acl/binding-rule/<id>: GET,
// PUT/POST and DELETE.
func (s *HTTPServer) aclBindingRuleSpecificRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	id := strings.TrimPrefix(r.URL.Path, "/v1/acl/binding-rule/")
	if id == "" || strings.Contains(id, "/") {
		return nil, codedError(http.StatusBadRequest, "Missing ACL binding rule ID")
	}
	switch r.Method {
	case http.MethodGet:
		args := structs.ACLBindingRuleRequest{ACLBindingRuleID: id}
		if err := s.parseQueryOptions(r, &args.QueryOptions); err != nil {
			return nil, err
		}
		var out structs.ACLBindingRuleResponse
		if err := s.rpc.RPC("ACL.GetBindingRule", &args, &out); err != nil {
			return nil, err
		}
		setMeta(w, &out.QueryMeta)
		if out.ACLBindingRule == nil {
			return nil, codedError(http.StatusNotFound, "ACL binding rule not found")
		}
		return out.ACLBindingRule, nil
	case http.MethodPut, http.MethodPost:
		return s.aclBindingRuleUpsert(w, r, id)
	case http.MethodDelete:
		args := structs.ACLBindingRulesDeleteRequest{ACLBindingRuleIDs: []string{id}}
		s.parseWriteRequest(r, &args.WriteRequest)
		var out structs.GenericResponse
		if err := s.rpc.RPC("ACL.DeleteBindingRules", &args, &out); err != nil {
			return nil, err
		}
		setIndex(w, out.Index)
		return nil, nil
	}
	return nil, errInvalidMethod
}

// aclClientIntroductionTokenRequest serves PUT/POST
// /v1/acl/identity/client-introduction-token: {"JWT": "..."}.
func (s *HTTPServer) aclClientIntroductionTokenRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	if !isACLWrite(r) {
		return nil, errInvalidMethod
	}
	// The body is the api's request: TTL in nanoseconds.
	var in struct {
		TTL      time.Duration
		NodeName string
		NodePool string
	}
	if err := decodeBody(r, &in); err != nil {
		return nil, err
	}
	args := structs.ACLCreateClientIntroductionTokenRequest{TTL: in.TTL, NodeName: in.NodeName, NodePool: in.NodePool}
	s.parseWriteRequest(r, &args.WriteRequest)
	var out structs.ACLCreateClientIntroductionTokenResponse
	if err := s.rpc.RPC("ACL.CreateClientIntroductionToken", &args, &out); err != nil {
		return nil, err
	}
	return out, nil
}
