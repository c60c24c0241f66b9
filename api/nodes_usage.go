package api

// NodeUsage is what the live allocations on one node reserve, from
// GET /v1/nodes/usage (an extension of Nomad's API).
type NodeUsage struct {
	NodeID     string
	CPU        int64
	MemoryMB   int64
	DiskMB     int64
	AllocCount int
	// Allocs is set when the request asked for them.
	Allocs []*AllocUsage `json:",omitempty"`
}

// AllocUsage is one live allocation's share of its node.
type AllocUsage struct {
	ID        string
	JobID     string
	Namespace string
	TaskGroup string
	CPU       int64
	MemoryMB  int64
}

// Usage returns, for every node with a live allocation the token may
// read, what those allocations reserve; withAllocs lists each one too.
// It supports blocking queries (q.WaitIndex).
func (n *Nodes) Usage(withAllocs bool, q *QueryOptions) ([]*NodeUsage, *QueryMeta, error) {
	if withAllocs {
		q = withParam(q, "allocs", "true")
	}
	var resp []*NodeUsage
	qm, err := n.client.query("/v1/nodes/usage", &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return resp, qm, nil
}

// withParam returns a copy of q with one more query parameter.
func withParam(q *QueryOptions, key, value string) *QueryOptions {
	c := QueryOptions{}
	if q != nil {
		c = *q
	}
	params := make(map[string]string, len(c.Params)+1)
	for k, v := range c.Params {
		params[k] = v
	}
	params[key] = value
	c.Params = params
	return &c
}
