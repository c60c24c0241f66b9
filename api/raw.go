package api

import (
	"io"
	"net/http"
)

// Raw reaches endpoints this package has no typed call for, as Nomad's
// api package does: the answer is decoded into any value, or handed over
// as a stream.
type Raw struct {
	client *Client
}

// Raw returns the raw endpoint access.
func (c *Client) Raw() *Raw { return &Raw{client: c} }

// Query GETs endpoint (a path that may carry a query string) and decodes
// the JSON answer into out.
func (raw *Raw) Query(endpoint string, out any, q *QueryOptions) (*QueryMeta, error) {
	return raw.client.query(endpoint, out, q)
}

// Response GETs endpoint and returns the body unread; the caller closes
// it. A status other than 2xx is an *UnexpectedResponseError.
func (raw *Raw) Response(endpoint string, q *QueryOptions) (io.ReadCloser, error) {
	r := raw.client.newRequest(http.MethodGet, endpoint)
	q.apply(r)
	resp, _, err := raw.client.do(r)
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}
