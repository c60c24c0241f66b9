package structs

// NodeUsageRequest asks, for every node, what its live allocations
// reserve (Node.Usage; GET /v1/nodes/usage, an extension of Nomad's
// API). The UI's node list and topology read it instead of the whole
// allocation list, which at 10,000 allocations is megabytes to fetch and
// parse for a few numbers per node.
type NodeUsageRequest struct {
	// Allocs asks for each node's allocations as well (the topology
	// draws one slice per allocation).
	Allocs bool
	QueryOptions
}

// NodeUsageResponse has one entry per node that holds a live allocation
// the token may read; nodes with none are left out.
type NodeUsageResponse struct {
	Nodes []*NodeUsage
	QueryMeta
}

// NodeUsage is what the live (not terminal) allocations on one node
// reserve, summed as the scheduler sums them when it checks a fit.
type NodeUsage struct {
	NodeID string
	// CPU is in MHz shares.
	CPU      int64
	MemoryMB int64
	DiskMB   int64
	// AllocCount is how many allocations the sums cover.
	AllocCount int
	// Allocs is set when the request asked for it, in allocation ID
	// order.
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
