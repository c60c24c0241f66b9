package agent

import (
	"net/http"

	"github.com/opennomad/nomad/structs"
)

// searchRequest serves PUT/POST /v1/search: {"Prefix","Context"}, IDs
// that begin with Prefix, by context.
func (s *HTTPServer) searchRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	if err := requireMethod(r, http.MethodPut, http.MethodPost); err != nil {
		return nil, err
	}
	var args structs.SearchRequest
	if err := decodeBody(r, &args); err != nil {
		return nil, err
	}
	if err := s.parseQueryOptions(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.SearchResponse
	if err := s.rpc.RPC("Search.PrefixSearch", &args, &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	return out, nil
}

// fuzzySearchRequest serves PUT/POST /v1/search/fuzzy: {"Text","Context"},
// names containing Text, by context, each with its scope.
func (s *HTTPServer) fuzzySearchRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	if err := requireMethod(r, http.MethodPut, http.MethodPost); err != nil {
		return nil, err
	}
	var args structs.FuzzySearchRequest
	if err := decodeBody(r, &args); err != nil {
		return nil, err
	}
	if err := s.parseQueryOptions(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.FuzzySearchResponse
	if err := s.rpc.RPC("Search.FuzzySearch", &args, &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	return out, nil
}
