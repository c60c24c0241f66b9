package api

import (
	"net/http"
	"time"
)

// Node statuses and scheduling eligibility.
const (
	NodeStatusInit         = "initializing"
	NodeStatusReady        = "ready"
	NodeStatusDown         = "down"
	NodeStatusDisconnected = "disconnected"

	NodeSchedulingEligible   = "eligible"
	NodeSchedulingIneligible = "ineligible"
)

// Node is a client machine as registered with the servers. The server never
// returns the node's secret.
type Node struct {
	ID         string
	Datacenter string
	Name       string
	HTTPAddr   string
	TLSEnabled bool
	Attributes map[string]string
	// Resources and Reserved are the pre-0.9 resource shapes, kept for old
	// servers; NodeResources and ReservedResources are current.
	Resources         *Resources
	Reserved          *Resources
	NodeResources     *NodeResources
	ReservedResources *NodeReservedResources
	Links             map[string]string
	Meta              map[string]string
	NodeClass         string
	NodePool          string
	CgroupParent      string
	// Drain is the legacy "is draining" flag; DrainStrategy is current.
	Drain                 bool
	DrainStrategy         *DrainStrategy
	SchedulingEligibility string
	Status                string
	StatusDescription     string
	// StatusUpdatedAt is in Unix seconds.
	StatusUpdatedAt int64
	Events          []*NodeEvent
	Drivers         map[string]*DriverInfo
	HostVolumes     map[string]*HostVolumeInfo
	LastDrain       *DrainMetadata
	CreateIndex     uint64
	ModifyIndex     uint64
}

// NodeListStub is the compact form of a node returned by GET /v1/nodes.
type NodeListStub struct {
	Address               string
	ID                    string
	Attributes            map[string]string `json:",omitempty"`
	Datacenter            string
	Name                  string
	NodeClass             string
	NodePool              string
	Version               string
	Drain                 bool
	SchedulingEligibility string
	Status                string
	StatusDescription     string
	Drivers               map[string]*DriverInfo
	NodeResources         *NodeResources         `json:",omitempty"`
	ReservedResources     *NodeReservedResources `json:",omitempty"`
	LastDrain             *DrainMetadata
	CreateIndex           uint64
	ModifyIndex           uint64
}

// NodeResources is a node's total capacity.
type NodeResources struct {
	Cpu            NodeCpuResources
	Memory         NodeMemoryResources
	Disk           NodeDiskResources
	Networks       []*NetworkResource
	MinDynamicPort int
	MaxDynamicPort int
}

// NodeCpuResources is CPU capacity in MHz shares and cores.
type NodeCpuResources struct {
	CpuShares          int64
	TotalCpuCores      uint16
	ReservableCpuCores []uint16
}

// NodeMemoryResources is memory capacity in MB.
type NodeMemoryResources struct {
	MemoryMB int64
}

// NodeDiskResources is disk capacity in MB.
type NodeDiskResources struct {
	DiskMB int64
}

// NodeReservedResources is capacity held back from scheduling.
type NodeReservedResources struct {
	Cpu      NodeReservedCpuResources
	Memory   NodeReservedMemoryResources
	Disk     NodeReservedDiskResources
	Networks NodeReservedNetworkResources
}

// NodeReservedCpuResources is reserved CPU in MHz.
type NodeReservedCpuResources struct {
	CpuShares uint64
}

// NodeReservedMemoryResources is reserved memory in MB.
type NodeReservedMemoryResources struct {
	MemoryMB uint64
}

// NodeReservedDiskResources is reserved disk in MB.
type NodeReservedDiskResources struct {
	DiskMB uint64
}

// NodeReservedNetworkResources lists reserved host ports ("22,80,8000-8100").
type NodeReservedNetworkResources struct {
	ReservedHostPorts string
}

// DriverInfo is a task driver's state on a node.
type DriverInfo struct {
	Attributes        map[string]string
	Detected          bool
	Healthy           bool
	HealthDescription string
	UpdateTime        time.Time
}

// HostVolumeInfo is a host volume a node offers.
type HostVolumeInfo struct {
	Path     string
	ReadOnly bool
	ID       string
}

// NodeEvent is one entry of a node's event history.
type NodeEvent struct {
	Message     string
	Subsystem   string
	Details     map[string]string
	Timestamp   time.Time
	CreateIndex uint64
}

// DrainSpec is a drain request: Deadline < 0 forces an immediate drain, 0
// means no deadline.
type DrainSpec struct {
	Deadline         time.Duration
	IgnoreSystemJobs bool
}

// DrainStrategy is an active drain. DrainSpec's fields are embedded in the
// JSON (Deadline, IgnoreSystemJobs alongside ForceDeadline).
type DrainStrategy struct {
	DrainSpec
	ForceDeadline time.Time
	StartedAt     time.Time
}

// Drain statuses of DrainMetadata.
const (
	DrainStatusDraining = "draining"
	DrainStatusComplete = "complete"
	DrainStatusCanceled = "canceled"
)

// DrainMetadata describes the node's most recent drain.
type DrainMetadata struct {
	StartedAt  time.Time
	UpdatedAt  time.Time
	Status     string
	AccessorID string
	Meta       map[string]string
}

// NodeUpdateDrainRequest is the body of POST /v1/node/:id/drain. A nil
// DrainSpec cancels the drain.
type NodeUpdateDrainRequest struct {
	NodeID       string
	DrainSpec    *DrainSpec
	MarkEligible bool
	Meta         map[string]string
}

// NodeDrainUpdateResponse answers a drain update.
type NodeDrainUpdateResponse struct {
	NodeModifyIndex uint64
	EvalIDs         []string
	EvalCreateIndex uint64
}

// NodeUpdateEligibilityRequest is the body of POST /v1/node/:id/eligibility.
type NodeUpdateEligibilityRequest struct {
	NodeID      string
	Eligibility string
}

// NodeEligibilityUpdateResponse answers an eligibility update.
type NodeEligibilityUpdateResponse struct {
	NodeModifyIndex uint64
	EvalIDs         []string
	EvalCreateIndex uint64
}

// NodeEvaluateResponse answers POST /v1/node/:id/evaluate.
type NodeEvaluateResponse struct {
	NodeModifyIndex uint64
	EvalIDs         []string
	EvalCreateIndex uint64
}

// Nodes is the /v1/nodes and /v1/node/:id endpoint group.
type Nodes struct {
	client *Client
}

// Nodes returns the nodes endpoint group.
func (c *Client) Nodes() *Nodes { return &Nodes{client: c} }

// List returns every node (Params "resources" and "os" add detail).
func (n *Nodes) List(q *QueryOptions) ([]*NodeListStub, *QueryMeta, error) {
	var resp []*NodeListStub
	qm, err := n.client.query("/v1/nodes", &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return resp, qm, nil
}

// PrefixList lists the nodes whose ID starts with prefix.
func (n *Nodes) PrefixList(prefix string) ([]*NodeListStub, *QueryMeta, error) {
	return n.List(&QueryOptions{Prefix: prefix})
}

// Info returns one node in full.
func (n *Nodes) Info(nodeID string, q *QueryOptions) (*Node, *QueryMeta, error) {
	var resp Node
	qm, err := n.client.query("/v1/node/"+escape(nodeID), &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return &resp, qm, nil
}

// Allocations returns the allocations placed on a node, in full.
func (n *Nodes) Allocations(nodeID string, q *QueryOptions) ([]*Allocation, *QueryMeta, error) {
	var resp []*Allocation
	qm, err := n.client.query("/v1/node/"+escape(nodeID)+"/allocations", &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return resp, qm, nil
}

// UpdateDrain starts (spec non-nil) or cancels (spec nil) a drain;
// markEligible makes the node eligible again when cancelling.
func (n *Nodes) UpdateDrain(nodeID string, spec *DrainSpec, markEligible bool, q *WriteOptions) (*NodeDrainUpdateResponse, *WriteMeta, error) {
	return n.UpdateDrainOpts(nodeID, &NodeUpdateDrainRequest{DrainSpec: spec, MarkEligible: markEligible}, q)
}

// UpdateDrainOpts updates a drain with a full request (including Meta).
func (n *Nodes) UpdateDrainOpts(nodeID string, req *NodeUpdateDrainRequest, q *WriteOptions) (*NodeDrainUpdateResponse, *WriteMeta, error) {
	body := NodeUpdateDrainRequest{NodeID: nodeID}
	if req != nil {
		body.DrainSpec = req.DrainSpec
		body.MarkEligible = req.MarkEligible
		body.Meta = req.Meta
	}
	var resp NodeDrainUpdateResponse
	wm, err := n.client.write(http.MethodPut, "/v1/node/"+escape(nodeID)+"/drain", &body, &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return &resp, wm, nil
}

// ToggleEligibility marks a node eligible or ineligible for new placements.
func (n *Nodes) ToggleEligibility(nodeID string, eligible bool, q *WriteOptions) (*NodeEligibilityUpdateResponse, *WriteMeta, error) {
	e := NodeSchedulingIneligible
	if eligible {
		e = NodeSchedulingEligible
	}
	req := &NodeUpdateEligibilityRequest{NodeID: nodeID, Eligibility: e}
	var resp NodeEligibilityUpdateResponse
	wm, err := n.client.write(http.MethodPut, "/v1/node/"+escape(nodeID)+"/eligibility", req, &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return &resp, wm, nil
}

// ForceEvaluate creates evaluations for every job with work on the node and
// returns their IDs.
func (n *Nodes) ForceEvaluate(nodeID string, q *WriteOptions) (*NodeEvaluateResponse, *WriteMeta, error) {
	var resp NodeEvaluateResponse
	wm, err := n.client.write(http.MethodPut, "/v1/node/"+escape(nodeID)+"/evaluate", nil, &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return &resp, wm, nil
}
