package api

// NodeMetaApplyRequest changes a node's dynamic metadata: a key with a
// value sets it, a key with nil removes it from the node's meta (static
// or not). NodeID empty means the node of the agent asked.
type NodeMetaApplyRequest struct {
	NodeID string
	Meta   map[string]*string
}

// NodeMetaResponse is a node's metadata: Meta is what the node
// registers, Static comes from the agent's configuration and Dynamic was
// applied at run time (nil values are removals).
type NodeMetaResponse struct {
	Meta    map[string]string
	Dynamic map[string]*string
	Static  map[string]string
}

// NodeMeta is the /v1/client/metadata endpoint, answered by the client
// agent running the node.
type NodeMeta struct {
	client *Client
}

// Meta returns the node metadata endpoint.
func (n *Nodes) Meta() *NodeMeta { return &NodeMeta{client: n.client} }

// Apply changes the dynamic metadata of meta.NodeID (or of the agent's
// own node) and returns the metadata after the change. It takes query
// options, as Nomad's does: the answer is a read of the node's metadata.
func (n *NodeMeta) Apply(meta *NodeMetaApplyRequest, q *QueryOptions) (*NodeMetaResponse, error) {
	r := n.client.newRequest("POST", "/v1/client/metadata")
	r.body = meta
	q.apply(r)
	resp, _, err := n.client.do(r)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out NodeMetaResponse
	if err := decodeBody(resp.Body, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Read returns the metadata of nodeID (or of the agent's own node when
// empty).
func (n *NodeMeta) Read(nodeID string, q *QueryOptions) (*NodeMetaResponse, error) {
	if q == nil {
		q = &QueryOptions{}
	}
	if nodeID != "" {
		params := map[string]string{"node_id": nodeID}
		for k, v := range q.Params {
			params[k] = v
		}
		qc := *q
		qc.Params = params
		q = &qc
	}
	var out NodeMetaResponse
	if _, err := n.client.query("/v1/client/metadata", &out, q); err != nil {
		return nil, err
	}
	return &out, nil
}
