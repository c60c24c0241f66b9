package structs

// Plan is a scheduler's proposal for one evaluation: allocs to stop,
// allocs to place or update, and allocs to preempt, keyed by node. Only
// the leader's plan applier decides what of it is committed.
type Plan struct {
	EvalID    string
	EvalToken string
	Priority  int
	AllAtOnce bool
	Job       *Job

	// NodeUpdate holds the stops, per node.
	NodeUpdate map[string][]*AllocStop
	// NodeAllocation holds new allocs and in-place updates, per node.
	NodeAllocation map[string][]*Allocation
	// NodePreemptions holds the evictions that make room, per node.
	NodePreemptions map[string][]*AllocStop

	Annotations       *PlanAnnotations
	Deployment        *Deployment
	DeploymentUpdates []*DeploymentStatusUpdate

	// SnapshotIndex is the state index the scheduler planned against.
	SnapshotIndex uint64

	// Eval, when set, is the plan's eval as the scheduler writes it at the
	// end of its pass if this plan commits whole (see PlanEvalError). A
	// leader whose servers all understand it (MinVersionPlanEval) writes
	// it with the result and says so in PlanResult.EvalWritten; otherwise
	// it is ignored and the scheduler writes the eval itself.
	Eval *Evaluation
}

// AppendStoppedAlloc adds a stop of alloc with the given descriptions.
// The client status is only set when the servers decide it (lost, unknown).
func (p *Plan) AppendStoppedAlloc(alloc *Allocation, desiredDesc, clientStatus, followupEvalID string) {
	p.NodeUpdate[alloc.NodeID] = append(p.NodeUpdate[alloc.NodeID], &AllocStop{
		ID:                 alloc.ID,
		DesiredDescription: desiredDesc,
		ClientStatus:       clientStatus,
		FollowupEvalID:     followupEvalID,
	})
}

// PopUpdate removes the last stop appended for alloc's node if it is this
// alloc; used when a planned stop must be undone after a failed placement.
func (p *Plan) PopUpdate(alloc *Allocation) {
	existing := p.NodeUpdate[alloc.NodeID]
	if n := len(existing); n > 0 && existing[n-1].ID == alloc.ID {
		existing = existing[:n-1]
		if len(existing) > 0 {
			p.NodeUpdate[alloc.NodeID] = existing
		} else {
			delete(p.NodeUpdate, alloc.NodeID)
		}
	}
}

// AppendAlloc adds a new or updated alloc.
func (p *Plan) AppendAlloc(alloc *Allocation) {
	p.NodeAllocation[alloc.NodeID] = append(p.NodeAllocation[alloc.NodeID], alloc)
}

// AppendPreemptedAlloc adds an eviction of alloc in favour of preemptor.
func (p *Plan) AppendPreemptedAlloc(alloc *Allocation, preemptor string) {
	p.NodePreemptions[alloc.NodeID] = append(p.NodePreemptions[alloc.NodeID], &AllocStop{
		ID:                    alloc.ID,
		DesiredDescription:    "Preempted by alloc ID " + preemptor,
		PreemptedByAllocation: preemptor,
	})
}

// IsNoOp reports whether the plan changes nothing.
func (p *Plan) IsNoOp() bool {
	return len(p.NodeUpdate) == 0 && len(p.NodeAllocation) == 0 &&
		p.Deployment == nil && len(p.DeploymentUpdates) == 0
}

// NodeIDs returns every node the plan touches.
func (p *Plan) NodeIDs() []string {
	seen := make(map[string]struct{}, len(p.NodeUpdate)+len(p.NodeAllocation))
	var out []string
	add := func(id string) {
		if _, ok := seen[id]; !ok {
			seen[id] = struct{}{}
			out = append(out, id)
		}
	}
	for id := range p.NodeUpdate {
		add(id)
	}
	for id := range p.NodeAllocation {
		add(id)
	}
	for id := range p.NodePreemptions {
		add(id)
	}
	return out
}

// PlanResult is what the applier committed of a plan: the parts of the
// plan's maps that it kept, node by node.
type PlanResult struct {
	NodeUpdate        map[string][]*AllocStop
	NodeAllocation    map[string][]*Allocation
	NodePreemptions   map[string][]*AllocStop
	Deployment        *Deployment
	DeploymentUpdates []*DeploymentStatusUpdate
	RejectedNodes     []string
	IneligibleNodes   []string
	// RefreshIndex, when set, tells the scheduler its snapshot was stale:
	// wait for this index, re-snapshot and plan again.
	RefreshIndex uint64
	// AllocIndex is the Raft index at which the result was committed.
	AllocIndex uint64
	// EvalWritten says the plan's Eval was written in the same entry, at
	// AllocIndex: the scheduler must not write it again. Unset (an older
	// leader, a partial commit, nothing to commit) the scheduler writes
	// its eval as before.
	EvalWritten bool
}

// IsNoOp reports whether nothing was committed.
func (r *PlanResult) IsNoOp() bool {
	return len(r.IneligibleNodes) == 0 && len(r.NodeUpdate) == 0 && len(r.NodeAllocation) == 0 &&
		len(r.DeploymentUpdates) == 0 && r.Deployment == nil
}

// FullCommit reports whether every placement of the plan was committed,
// and how many were expected and actually committed.
func (r *PlanResult) FullCommit(p *Plan) (bool, int, int) {
	expected, actual := 0, 0
	for node, allocs := range p.NodeAllocation {
		expected += len(allocs)
		actual += len(r.NodeAllocation[node])
	}
	return expected == actual, expected, actual
}

// PlanAnnotations explain a plan for `job plan`.
type PlanAnnotations struct {
	DesiredTGUpdates map[string]*DesiredUpdates
	PreemptedAllocs  []*AllocListStub
}

// Copy returns a deep copy.
func (p *PlanAnnotations) Copy() *PlanAnnotations {
	if p == nil {
		return nil
	}
	n := &PlanAnnotations{PreemptedAllocs: p.PreemptedAllocs}
	if p.DesiredTGUpdates != nil {
		n.DesiredTGUpdates = make(map[string]*DesiredUpdates, len(p.DesiredTGUpdates))
		for k, d := range p.DesiredTGUpdates {
			dc := *d
			n.DesiredTGUpdates[k] = &dc
		}
	}
	return n
}

// DesiredUpdates counts what a plan does to one task group.
type DesiredUpdates struct {
	Ignore            uint64
	Place             uint64
	Migrate           uint64
	Stop              uint64
	InPlaceUpdate     uint64
	DestructiveUpdate uint64
	Canary            uint64
	Preemptions       uint64
	Disconnect        uint64
	Reconnect         uint64
	RescheduleNow     uint64
	RescheduleLater   uint64
}

// DeploymentStatusUpdate changes a deployment's status within a plan.
type DeploymentStatusUpdate struct {
	DeploymentID      string
	Status            string
	StatusDescription string
}
