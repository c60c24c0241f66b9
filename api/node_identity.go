package api

// NodeIdentityGetRequest names the node whose identity claims to read;
// an empty NodeID is the agent's own node.
type NodeIdentityGetRequest struct {
	NodeID string
}

// NodeIdentityGetResponse holds the claims of a node's current identity
// (a JWT the servers signed).
type NodeIdentityGetResponse struct {
	Claims map[string]any
}

// NodeIdentityRenewRequest names the node to renew the identity of.
type NodeIdentityRenewRequest struct {
	NodeID string
}

// NodeIdentityRenewResponse is the (empty) answer of a renewal.
type NodeIdentityRenewResponse struct{}

// NodeIdentity is the node identity endpoint, answered by the agent
// running the node (any agent forwards it there).
type NodeIdentity struct {
	client *Client
}

// Identity returns the node identity endpoint.
func (n *Nodes) Identity() *NodeIdentity { return &NodeIdentity{client: n.client} }

// Get returns the claims of the node's current identity. The query
// options only steer where the request goes; blocking and filtering do
// not apply.
func (n *NodeIdentity) Get(req *NodeIdentityGetRequest, q *QueryOptions) (*NodeIdentityGetResponse, error) {
	qc := QueryOptions{}
	if q != nil {
		qc = *q
	}
	params := map[string]string{}
	for k, v := range qc.Params {
		params[k] = v
	}
	if req.NodeID != "" {
		params["node_id"] = req.NodeID
	}
	qc.Params = params
	var out NodeIdentityGetResponse
	if _, err := n.client.query("/v1/client/identity", &out, &qc); err != nil {
		return nil, err
	}
	return &out, nil
}

// Renew makes the node ask the servers for a new identity with its next
// heartbeat; it returns before the node has one.
func (n *NodeIdentity) Renew(req *NodeIdentityRenewRequest, q *QueryOptions) (*NodeIdentityRenewResponse, error) {
	r := n.client.newRequest("POST", "/v1/client/identity/renew")
	r.body = req
	q.apply(r)
	resp, _, err := n.client.do(r)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out NodeIdentityRenewResponse
	if err := decodeBody(resp.Body, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
