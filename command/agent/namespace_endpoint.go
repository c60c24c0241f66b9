package agent

import (
	"net/http"
	"strings"

	"github.com/opennomad/nomad/structs"
)

// The namespaces API: /v1/namespaces, /v1/namespace and
// /v1/namespace/<name>, served by the Namespace.* RPCs with Nomad's
// paths, statuses and texts. Writes answer an empty body and the index.

// namespacesRequest serves GET /v1/namespaces?prefix=: the namespaces the
// caller's token may use, by name.
func (s *HTTPServer) namespacesRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	if err := requireMethod(r, http.MethodGet); err != nil {
		return nil, err
	}
	args := structs.NamespaceListRequest{}
	if err := s.parseQueryOptions(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	lo, err := takeListOptions(&args.QueryOptions)
	if err != nil {
		return nil, err
	}
	var out structs.NamespaceListResponse
	if err := s.rpc.RPC("Namespace.ListNamespaces", &args, &out); err != nil {
		return nil, err
	}
	list, next, err := applyListOptions(lo, out.Namespaces, func(n *structs.Namespace) string { return n.Name })
	if err != nil {
		return nil, err
	}
	out.NextToken = next
	setMeta(w, &out.QueryMeta)
	return list, nil
}

// namespaceCreateRequest serves PUT/POST /v1/namespace: the body names the
// namespace.
func (s *HTTPServer) namespaceCreateRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	if r.Method != http.MethodPut && r.Method != http.MethodPost {
		return nil, errInvalidMethod
	}
	return s.namespaceUpsert(w, r, "")
}

// namespaceSpecificRequest serves /v1/namespace/<name>: GET, PUT/POST and
// DELETE.
func (s *HTTPServer) namespaceSpecificRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	name := strings.TrimPrefix(r.URL.Path, "/v1/namespace/")
	if name == "" || strings.Contains(name, "/") {
		return nil, codedError(http.StatusBadRequest, "Missing namespace name")
	}
	switch r.Method {
	case http.MethodGet:
		args := structs.NamespaceSpecificRequest{Name: name}
		if err := s.parseQueryOptions(r, &args.QueryOptions); err != nil {
			return nil, err
		}
		var out structs.SingleNamespaceResponse
		if err := s.rpc.RPC("Namespace.GetNamespace", &args, &out); err != nil {
			return nil, err
		}
		setMeta(w, &out.QueryMeta)
		if out.Namespace == nil {
			return nil, codedError(http.StatusNotFound, "Namespace not found")
		}
		return out.Namespace, nil
	case http.MethodPut, http.MethodPost:
		return s.namespaceUpsert(w, r, name)
	case http.MethodDelete:
		args := structs.NamespaceDeleteRequest{Namespaces: []string{name}}
		s.parseWriteRequest(r, &args.WriteRequest)
		var out structs.GenericResponse
		if err := s.rpc.RPC("Namespace.DeleteNamespaces", &args, &out); err != nil {
			return nil, err
		}
		setIndex(w, out.Index)
		return nil, nil
	}
	return nil, errInvalidMethod
}

// namespaceUpsert writes the namespace in the body; name, when the path
// gives one, must be the body's.
func (s *HTTPServer) namespaceUpsert(w http.ResponseWriter, r *http.Request, name string) (interface{}, error) {
	var ns structs.Namespace
	if err := decodeBody(r, &ns); err != nil {
		return nil, err
	}
	if name != "" && ns.Name != name {
		return nil, codedError(http.StatusBadRequest, "Namespace name does not match request path")
	}
	// Indexes and the hash are the server's to set.
	ns.CreateIndex, ns.ModifyIndex, ns.Hash = 0, 0, nil
	args := structs.NamespaceUpsertRequest{Namespaces: []*structs.Namespace{&ns}}
	s.parseWriteRequest(r, &args.WriteRequest)
	var out structs.GenericResponse
	if err := s.rpc.RPC("Namespace.UpsertNamespaces", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return nil, nil
}
