package structs

import (
	"maps"
	"slices"
	"time"
)

// Node statuses.
const (
	NodeStatusInit         = "initializing"
	NodeStatusReady        = "ready"
	NodeStatusDown         = "down"
	NodeStatusDisconnected = "disconnected"
)

// Scheduling eligibility values.
const (
	NodeSchedulingEligible   = "eligible"
	NodeSchedulingIneligible = "ineligible"
)

// Drain metadata statuses.
const (
	DrainStatusDraining = "draining"
	DrainStatusComplete = "complete"
	DrainStatusCanceled = "canceled"
)

// ValidNodeStatus reports whether s is a node status clients may report.
func ValidNodeStatus(s string) bool {
	switch s {
	case NodeStatusInit, NodeStatusReady, NodeStatusDown, NodeStatusDisconnected:
		return true
	}
	return false
}

// Node is a client machine that runs allocations.
type Node struct {
	ID         string
	SecretID   string
	Datacenter string
	Name       string
	HTTPAddr   string
	TLSEnabled bool

	Attributes        map[string]string
	NodeResources     *NodeResources
	ReservedResources *NodeReservedResources
	Links             map[string]string
	Meta              map[string]string
	NodeClass         string
	NodePool          string
	// ComputedClass groups nodes that are equal for feasibility purposes;
	// the scheduler checks one node per class and reuses the answer.
	ComputedClass string

	DrainStrategy         *DrainStrategy
	SchedulingEligibility string
	Status                string
	StatusDescription     string
	StatusUpdatedAt       int64
	Events                []*NodeEvent
	Drivers               map[string]*DriverInfo
	LastDrain             *DrainMetadata
	// HostVolumes are the volumes the node offers, by name.
	HostVolumes map[string]*ClientHostVolumeConfig

	// LastMissedHeartbeatIndex is the Raft index at which the node was last
	// marked down or disconnected, and LastAllocUpdateIndex the index of
	// its client's last alloc update. While the first is the newer, the
	// client has not re-synced its allocs since it came back, and the node
	// stays initializing rather than ready.
	LastMissedHeartbeatIndex uint64
	LastAllocUpdateIndex     uint64

	CreateIndex uint64
	ModifyIndex uint64
}

// Canonicalize fills what a registering client may leave out: the default
// node pool, and the scheduling eligibility (ineligible while a drain is
// set, eligible otherwise), then recomputes the computed class. It does not
// touch Status: registration never changes a node's status.
func (n *Node) Canonicalize() {
	if n == nil {
		return
	}
	if n.NodePool == "" {
		n.NodePool = NodePoolDefault
	}
	switch {
	case n.DrainStrategy != nil:
		n.SchedulingEligibility = NodeSchedulingIneligible
	case n.SchedulingEligibility == "":
		n.SchedulingEligibility = NodeSchedulingEligible
	}
	n.ComputeClass()
}

// Ready reports whether new allocations may be placed on the node.
func (n *Node) Ready() bool {
	return n.Status == NodeStatusReady && n.DrainStrategy == nil &&
		n.SchedulingEligibility == NodeSchedulingEligible
}

// TerminalStatus reports whether the node is down; only a down node has its
// allocations replaced.
func (n *Node) TerminalStatus() bool { return n.Status == NodeStatusDown }

// Draining reports whether a drain is in progress.
func (n *Node) Draining() bool { return n.DrainStrategy != nil }

// Copy returns a deep copy.
func (n *Node) Copy() *Node {
	if n == nil {
		return nil
	}
	c := *n
	c.Attributes = maps.Clone(n.Attributes)
	c.NodeResources = n.NodeResources.Copy()
	c.ReservedResources = n.ReservedResources.Copy()
	c.Links = maps.Clone(n.Links)
	c.Meta = maps.Clone(n.Meta)
	c.DrainStrategy = n.DrainStrategy.Copy()
	if n.Events != nil {
		c.Events = make([]*NodeEvent, len(n.Events))
		for i, e := range n.Events {
			c.Events[i] = e.Copy()
		}
	}
	if n.Drivers != nil {
		c.Drivers = make(map[string]*DriverInfo, len(n.Drivers))
		for k, d := range n.Drivers {
			c.Drivers[k] = d.Copy()
		}
	}
	c.HostVolumes = CopyHostVolumes(n.HostVolumes)
	if n.LastDrain != nil {
		ld := *n.LastDrain
		ld.Meta = maps.Clone(n.LastDrain.Meta)
		c.LastDrain = &ld
	}
	return &c
}

// Sanitize returns a copy without the secret, for HTTP responses.
func (n *Node) Sanitize() *Node {
	if n == nil {
		return nil
	}
	c := n.Copy()
	c.SecretID = ""
	return c
}

// Stub returns the list view of the node.
func (n *Node) Stub() *NodeListStub {
	addr, _ := n.Attributes["unique.network.ip-address"]
	drivers := make(map[string]*DriverInfo, len(n.Drivers))
	for k, d := range n.Drivers {
		drivers[k] = d.Copy()
	}
	return &NodeListStub{
		Address:               addr,
		ID:                    n.ID,
		Datacenter:            n.Datacenter,
		Name:                  n.Name,
		NodeClass:             n.NodeClass,
		NodePool:              n.NodePool,
		Version:               n.Attributes["nomad.version"],
		Drain:                 n.DrainStrategy != nil,
		SchedulingEligibility: n.SchedulingEligibility,
		Status:                n.Status,
		StatusDescription:     n.StatusDescription,
		Drivers:               drivers,
		LastDrain:             n.LastDrain,
		CreateIndex:           n.CreateIndex,
		ModifyIndex:           n.ModifyIndex,
	}
}

// NodeListStub is the compact node view of list endpoints.
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

// DriverInfo is the health of one task driver on a node.
type DriverInfo struct {
	Attributes        map[string]string
	Detected          bool
	Healthy           bool
	HealthDescription string
	UpdateTime        time.Time
}

// Copy returns a deep copy.
func (d *DriverInfo) Copy() *DriverInfo {
	if d == nil {
		return nil
	}
	c := *d
	c.Attributes = maps.Clone(d.Attributes)
	return &c
}

// DrainSpec is what an operator asks for when draining a node.
type DrainSpec struct {
	// Deadline < 0 forces an immediate drain, 0 waits forever, > 0 bounds
	// how long migrations may take before remaining allocs are stopped.
	Deadline         time.Duration
	IgnoreSystemJobs bool
}

// DrainStrategy is a drain in progress.
type DrainStrategy struct {
	DrainSpec
	ForceDeadline time.Time
	StartedAt     time.Time
}

// Copy returns a copy.
func (d *DrainStrategy) Copy() *DrainStrategy {
	if d == nil {
		return nil
	}
	c := *d
	return &c
}

// DeadlineTime returns whether the drain has no deadline and, if it has
// one, when it passes.
func (d *DrainStrategy) DeadlineTime() (infinite bool, deadline time.Time) {
	if d == nil {
		return false, time.Time{}
	}
	switch {
	case d.Deadline < 0:
		return false, time.Time{}
	case d.Deadline == 0:
		return true, time.Time{}
	default:
		return false, d.ForceDeadline
	}
}

// DrainMetadata records the latest drain of a node.
type DrainMetadata struct {
	StartedAt  time.Time
	UpdatedAt  time.Time
	Status     string
	AccessorID string
	Meta       map[string]string
}

// Node event subsystems and messages shown by `node status`.
const (
	NodeEventSubsystemCluster   = "Cluster"
	NodeEventSubsystemDrain     = "Drain"
	NodeEventSubsystemDriver    = "Driver"
	NodeEventSubsystemHeartbeat = "Heartbeat"
	NodeEventSubsystemScheduler = "Scheduler"
	NodeEventMsgRegistered      = "Node registered"
	NodeEventMsgHeartbeatMissed = "Node heartbeat missed"
	NodeEventMsgReregistered    = "Node reregistered by heartbeat"
	NodeEventMsgDrainStarted    = "Node drain strategy set"
	NodeEventMsgDrainCanceled   = "Node drain disabled"
	NodeEventMsgDrainComplete   = "Node drain complete"
	NodeEventMsgEligible        = "Node marked as eligible for scheduling"
	NodeEventMsgIneligible      = "Node marked as ineligible for scheduling"
	maxRetainedNodeEvents       = 10
)

// NodeEvent is one entry of a node's history.
type NodeEvent struct {
	Message     string
	Subsystem   string
	Details     map[string]string
	Timestamp   time.Time
	CreateIndex uint64
}

// Copy returns a deep copy.
func (e *NodeEvent) Copy() *NodeEvent {
	if e == nil {
		return nil
	}
	c := *e
	c.Details = maps.Clone(e.Details)
	return &c
}

// NewNodeEvent builds an event stamped now.
func NewNodeEvent(subsystem, msg string, now time.Time) *NodeEvent {
	return &NodeEvent{Subsystem: subsystem, Message: msg, Timestamp: now}
}

// AppendEvents adds events to the node, keeping only the most recent ones
// so a flapping node cannot grow without bound.
func (n *Node) AppendEvents(index uint64, events ...*NodeEvent) {
	for _, e := range events {
		ec := e.Copy()
		ec.CreateIndex = index
		n.Events = append(n.Events, ec)
	}
	if extra := len(n.Events) - maxRetainedNodeEvents; extra > 0 {
		n.Events = slices.Clone(n.Events[extra:])
	}
}

// HasDriver reports whether the driver is detected and healthy on the node.
// Older clients only set the `driver.<name>` attribute, which is honoured.
func (n *Node) HasDriver(name string) bool {
	if d, ok := n.Drivers[name]; ok {
		return d.Detected && d.Healthy
	}
	v, ok := n.Attributes["driver."+name]
	return ok && (v == "1" || v == "true")
}
