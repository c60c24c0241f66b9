package agent

import (
	"net/http"

	"github.com/opennomad/nomad/api"
)

// nodeIdentityClient is the part of the agent's client that keeps the
// node identity the servers issued.
type nodeIdentityClient interface {
	NodeID() string
	NodeIdentityClaims() (map[string]any, error)
	RenewNodeIdentity()
}

// clientIdentityRequest serves GET /v1/client/identity?node_id=: the
// claims of the node's current identity, {"Claims":{...}}.
func (s *HTTPServer) clientIdentityRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	if err := requireMethod(r, http.MethodGet); err != nil {
		return nil, err
	}
	c, err := localNodeClient[nodeIdentityClient](s, r.URL.Query().Get("node_id"), "the node identity")
	if err != nil {
		return nil, err
	}
	claims, err := c.NodeIdentityClaims()
	if err != nil {
		return nil, clientError(err)
	}
	return &api.NodeIdentityGetResponse{Claims: claims}, nil
}

// clientIdentityRenewRequest serves PUT/POST /v1/client/identity/renew
// ({"NodeID"}): the node asks the servers for a new identity with its
// next heartbeat. It answers {} at once.
func (s *HTTPServer) clientIdentityRenewRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	if err := requireMethod(r, http.MethodPut, http.MethodPost); err != nil {
		return nil, err
	}
	var body api.NodeIdentityRenewRequest
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	nodeID := r.URL.Query().Get("node_id")
	if body.NodeID != "" {
		nodeID = body.NodeID
	}
	c, err := localNodeClient[nodeIdentityClient](s, nodeID, "the node identity")
	if err != nil {
		return nil, err
	}
	c.RenewNodeIdentity()
	return &api.NodeIdentityRenewResponse{}, nil
}
