package api

import "net/http"

// Search contexts: the kinds of object a prefix search looks through.
const (
	SearchContextAll         = "all"
	SearchContextJobs        = "jobs"
	SearchContextEvals       = "evals"
	SearchContextAllocs      = "allocs"
	SearchContextNodes       = "nodes"
	SearchContextDeployments = "deployment"
	SearchContextNodePools   = "node_pools"
	SearchContextNamespaces  = "namespaces"
)

// SearchResponse lists the matching IDs by context; Truncations says
// which contexts had more than the servers return.
type SearchResponse struct {
	Matches     map[string][]string
	Truncations map[string]bool
	QueryMeta
}

// Search is the /v1/search endpoint group.
type Search struct {
	client *Client
}

// Search returns the search endpoint group.
func (c *Client) Search() *Search { return &Search{client: c} }

// PrefixSearch lists the objects of context (SearchContextAll for every
// kind the token may read) whose ID starts with prefix.
func (s *Search) PrefixSearch(prefix, context string, q *QueryOptions) (*SearchResponse, *QueryMeta, error) {
	var out SearchResponse
	req := map[string]string{"Prefix": prefix, "Context": context}
	r := s.client.newRequest(http.MethodPost, "/v1/search")
	r.body = req
	r.repeatable = true
	q.apply(r)
	resp, rtt, err := s.client.do(r)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	qm := &QueryMeta{RequestTime: rtt}
	if err := parseQueryMeta(resp.Header, qm); err != nil {
		return nil, nil, err
	}
	if err := decodeBody(resp.Body, &out); err != nil {
		return nil, nil, err
	}
	return &out, qm, nil
}
