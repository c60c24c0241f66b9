package state

import (
	"fmt"
	"slices"
	"time"

	"github.com/hashicorp/go-memdb"

	"github.com/opennomad/nomad/structs"
)

// ---- reads -----------------------------------------------------------------

func allocByID(txn *memdb.Txn, ws memdb.WatchSet, id string) (*structs.Allocation, error) {
	raw, err := first(txn, ws, TableAllocs, indexID, id)
	if err != nil || raw == nil {
		return nil, err
	}
	return raw.(*structs.Allocation), nil
}

// AllocByID returns the alloc or nil.
func (s *StateStore) AllocByID(ws memdb.WatchSet, id string) (*structs.Allocation, error) {
	return allocByID(s.db.Txn(false), ws, id)
}

// Allocs returns the allocs of a namespace, grouped by job, or of every
// namespace for "*", sorted by ID.
func (s *StateStore) Allocs(ws memdb.WatchSet, namespace string) ([]*structs.Allocation, error) {
	txn := s.db.Txn(false)
	if namespace == structs.AllNamespaces {
		it, err := get(txn, ws, TableAllocs, indexID)
		if err != nil {
			return nil, err
		}
		return collect[structs.Allocation](it, nil), nil
	}
	it, err := get(txn, ws, TableAllocs, indexJob+"_prefix", namespace, "")
	if err != nil {
		return nil, err
	}
	return collect[structs.Allocation](it, nil), nil
}

// AllocsByIDPrefix returns the allocs of a namespace ("*" for all) whose
// ID starts with prefix.
func (s *StateStore) AllocsByIDPrefix(ws memdb.WatchSet, namespace, prefix string) ([]*structs.Allocation, error) {
	it, err := get(s.db.Txn(false), ws, TableAllocs, indexID+"_prefix", prefix)
	if err != nil {
		return nil, err
	}
	return collect(it, func(a *structs.Allocation) bool {
		return namespace == structs.AllNamespaces || a.Namespace == namespace
	}), nil
}

func allocsByNode(txn *memdb.Txn, ws memdb.WatchSet, nodeID string) ([]*structs.Allocation, error) {
	// A one-argument scan of the (node, terminal) index is a prefix scan
	// of the node ID: keep exact matches only.
	it, err := get(txn, ws, TableAllocs, "node_prefix", nodeID)
	if err != nil {
		return nil, err
	}
	return collect(it, func(a *structs.Allocation) bool { return a.NodeID == nodeID }), nil
}

// NodeAllocIndex returns the Raft index of the last write that added,
// changed (server-side) or removed an allocation on the node, 0 if none
// is recorded,
// and watches that alone in ws: a node's blocking query then wakes for
// its own allocations, not for every plan.
func (s *StateStore) NodeAllocIndex(ws memdb.WatchSet, nodeID string) (uint64, error) {
	raw, err := first(s.db.Txn(false), ws, TableNodeAllocIndex, indexID, nodeID)
	if err != nil || raw == nil {
		return 0, err
	}
	return raw.(*NodeAllocIndex).Index, nil
}

// AllocsByNode returns every alloc on the node, terminal or not.
func (s *StateStore) AllocsByNode(ws memdb.WatchSet, nodeID string) ([]*structs.Allocation, error) {
	return allocsByNode(s.db.Txn(false), ws, nodeID)
}

func allocsByNodeTerminal(txn *memdb.Txn, ws memdb.WatchSet, nodeID string, terminal bool) ([]*structs.Allocation, error) {
	it, err := get(txn, ws, TableAllocs, "node", nodeID, terminal)
	if err != nil {
		return nil, err
	}
	return collect[structs.Allocation](it, nil), nil
}

// AllocsByNodeTerminal returns the node's allocs whose TerminalStatus
// equals terminal, sorted by ID; with false, the allocs using the node's
// resources. The live list (false) is shared with every other reader of
// the store: the caller must not modify it.
func (s *StateStore) AllocsByNodeTerminal(ws memdb.WatchSet, nodeID string, terminal bool) ([]*structs.Allocation, error) {
	if !terminal {
		return nodeLiveAllocsRow(s.db.Txn(false), ws, nodeID)
	}
	return allocsByNodeTerminal(s.db.Txn(false), ws, nodeID, terminal)
}

func allocsByJob(txn *memdb.Txn, ws memdb.WatchSet, namespace, jobID string, anyCreateIndex bool) ([]*structs.Allocation, error) {
	it, err := get(txn, ws, TableAllocs, indexJob, namespace, jobID)
	if err != nil {
		return nil, err
	}
	var job *structs.Job
	if !anyCreateIndex {
		if job, err = jobByID(txn, ws, namespace, jobID); err != nil {
			return nil, err
		}
	}
	return collect(it, func(a *structs.Allocation) bool {
		return job == nil || a.Job == nil || a.Job.CreateIndex == job.CreateIndex
	}), nil
}

// AllocsByJob returns a job's allocs. Unless anyCreateIndex, allocs of an
// earlier, purged job with the same ID are left out (when the job no
// longer exists at all, every alloc with its ID is returned).
func (s *StateStore) AllocsByJob(ws memdb.WatchSet, namespace, jobID string, anyCreateIndex bool) ([]*structs.Allocation, error) {
	return allocsByJob(s.db.Txn(false), ws, namespace, jobID, anyCreateIndex)
}

// AllocsByEval returns the allocs an eval placed or updated, sorted by ID.
func (s *StateStore) AllocsByEval(ws memdb.WatchSet, evalID string) ([]*structs.Allocation, error) {
	txn := s.db.Txn(false)
	e, err := evalByID(txn, nil, evalID)
	if err != nil {
		return nil, err
	}
	var ns, jobID string
	if e != nil {
		ns, jobID = e.Namespace, e.JobID
	}
	return allocsOfJobWhere(txn, ws, ns, jobID, func(a *structs.Allocation) bool { return a.EvalID == evalID })
}

// AllocsByDeployment returns the allocs of a deployment, sorted by ID.
func (s *StateStore) AllocsByDeployment(ws memdb.WatchSet, deploymentID string) ([]*structs.Allocation, error) {
	txn := s.db.Txn(false)
	d, err := deploymentByID(txn, nil, deploymentID)
	if err != nil {
		return nil, err
	}
	var ns, jobID string
	if d != nil {
		ns, jobID = d.Namespace, d.JobID
	}
	return allocsOfJobWhere(txn, ws, ns, jobID, func(a *structs.Allocation) bool { return a.DeploymentID == deploymentID })
}

// allocsOfJobWhere returns the allocs of a job that keep accepts, sorted
// by ID. The allocs of an eval or a deployment are all of the same job
// as it, which spares the allocs table an index by each (two index
// entries per alloc). Allocs may outlive their eval or deployment (the
// garbage collector and Eval.Delete remove those first): with no job
// given, for an eval or deployment that is gone, every alloc is read.
func allocsOfJobWhere(txn *memdb.Txn, ws memdb.WatchSet, namespace, jobID string, keep func(*structs.Allocation) bool) ([]*structs.Allocation, error) {
	var (
		it  memdb.ResultIterator
		err error
	)
	if jobID == "" {
		it, err = get(txn, ws, TableAllocs, indexID)
	} else {
		it, err = get(txn, ws, TableAllocs, indexJob, namespace, jobID)
	}
	if err != nil {
		return nil, err
	}
	return collect(it, keep), nil
}

// ---- server-side writes ------------------------------------------------------

// UpsertAllocs writes allocations decided by the servers (the plan
// applier). For an existing alloc the client stays the authority on its
// task states and client status: those are kept unless the servers mark
// the alloc lost or unknown. A nil Job is taken from the stored alloc.
// CreateIndex is set once; ModifyIndex and AllocModifyIndex move to this
// index. A new, non-terminal alloc whose job no longer exists, is
// stopped, or was registered again since (another CreateIndex) is
// skipped: the plan that placed it is out of date. Job summaries,
// deployment counters and job statuses follow.
func (tx *Txn) UpsertAllocs(allocs []*structs.Allocation) error {
	tx.touch(TableAllocs)
	jobs := make(jobStatusUpdates)
	for _, a := range allocs {
		if err := tx.upsertAlloc(a, "", jobs); err != nil {
			return err
		}
	}
	return tx.setJobStatuses(jobs, false, structs.TypeAllocationUpdated)
}

// upsertAlloc writes one server-side alloc; eventType "" reports
// AllocationCreated or AllocationUpdated.
func (tx *Txn) upsertAlloc(a *structs.Allocation, eventType string, jobs jobStatusUpdates) error {
	if a == nil {
		return fmt.Errorf("upsert alloc: alloc is nil")
	}
	if a.ID == "" {
		return fmt.Errorf("upsert alloc: ID is required")
	}
	if a.NodeID == "" || a.JobID == "" || a.Namespace == "" {
		return fmt.Errorf("alloc %q: NodeID, JobID and Namespace are required", a.ID)
	}
	existing, err := allocByID(tx.txn, nil, a.ID)
	if err != nil {
		return err
	}
	if existing == nil {
		if a.Job == nil {
			return fmt.Errorf("alloc %q: a new allocation must carry its job", a.ID)
		}
		if !a.TerminalStatus() {
			job, err := jobByID(tx.txn, nil, a.Namespace, a.JobID)
			if err != nil {
				return err
			}
			if job == nil || job.Stop || job.CreateIndex != a.Job.CreateIndex {
				tx.logger.Debug("skipping new allocation of a stopped or purged job",
					"alloc_id", a.ID, "job_id", a.JobID, "namespace", a.Namespace)
				return nil
			}
		}
		if err := tx.shareStoredJob(a); err != nil {
			return err
		}
		a.CreateIndex = tx.index
		if a.DeploymentStatus != nil {
			a.DeploymentStatus.ModifyIndex = tx.index
		}
	} else {
		a.CreateIndex = existing.CreateIndex
		a.TaskStates = existing.TaskStates
		if a.NetworkStatus == nil {
			// Reported by the client; a server-side change keeps it.
			a.NetworkStatus = existing.NetworkStatus
		}
		if a.ClientStatus != structs.AllocClientStatusLost && a.ClientStatus != structs.AllocClientStatusUnknown {
			a.ClientStatus = existing.ClientStatus
			a.ClientDescription = existing.ClientDescription
		}
		if a.Job == nil {
			a.Job = existing.Job
		}
	}
	a.ModifyIndex = tx.index
	a.AllocModifyIndex = tx.index

	if err := tx.updateDeploymentWithAlloc(a, existing); err != nil {
		return err
	}
	if err := tx.updateSummaryWithAlloc(a, existing); err != nil {
		return err
	}
	tx.internAlloc(a, existing)
	if err := tx.insertAlloc(a, existing); err != nil {
		return fmt.Errorf("alloc %q: %w", a.ID, err)
	}
	if err := tx.dropServicesOfTerminalAlloc(a); err != nil {
		return fmt.Errorf("alloc %q: %w", a.ID, err)
	}
	if err := tx.linkPreviousAlloc(a); err != nil {
		return err
	}
	if eventType == "" {
		eventType = structs.TypeAllocationUpdated
		if existing == nil {
			eventType = structs.TypeAllocationCreated
		}
	}
	tx.emitAlloc(eventType, a)
	jobs.addAlloc(a)
	return nil
}

// shareStoredJob points a new alloc at the stored version of its job when
// it was placed for exactly that version, instead of keeping the copy
// decoded from the Raft entry: one job object per version, however many
// plans placed its allocs. Stored jobs are never changed in place, so the
// alloc keeps the job it was placed for.
func (tx *Txn) shareStoredJob(a *structs.Allocation) error {
	stored, err := jobByIDAndVersion(tx.txn, nil, a.Namespace, a.JobID, a.Job.Version)
	if err != nil {
		return err
	}
	if stored != nil && stored != a.Job && stored.CreateIndex == a.Job.CreateIndex && stored.JobModifyIndex == a.Job.JobModifyIndex {
		a.Job = stored
	}
	return nil
}

// linkPreviousAlloc points the alloc a replaces at its replacement.
func (tx *Txn) linkPreviousAlloc(a *structs.Allocation) error {
	if a.PreviousAllocation == "" {
		return nil
	}
	prev, err := allocByID(tx.txn, nil, a.PreviousAllocation)
	if err != nil || prev == nil || prev.NextAllocation == a.ID {
		return err
	}
	c := *prev
	c.NextAllocation = a.ID
	c.ModifyIndex = tx.index
	if err := tx.insertAlloc(&c, prev); err != nil {
		return fmt.Errorf("alloc %q: %w", c.ID, err)
	}
	return nil
}

// UpdateAllocsDesiredTransitions merges desired transitions (migrate,
// reschedule) into allocs and writes the evals that act on them. Unknown
// allocs are skipped. This is a server-side change: AllocModifyIndex
// moves, so the clients see it.
func (tx *Txn) UpdateAllocsDesiredTransitions(transitions map[string]*structs.DesiredTransition, evals []*structs.Evaluation) error {
	tx.touch(TableAllocs)
	for _, id := range sortedKeys(transitions) {
		t := transitions[id]
		existing, err := allocByID(tx.txn, nil, id)
		if err != nil {
			return err
		}
		if existing == nil || t == nil {
			continue
		}
		c := *existing
		c.DesiredTransition.Merge(t)
		c.ModifyIndex = tx.index
		c.AllocModifyIndex = tx.index
		if err := tx.insertAlloc(&c, existing); err != nil {
			return fmt.Errorf("alloc %q: %w", id, err)
		}
		tx.emitAlloc(structs.TypeAllocationUpdateDesiredStatus, &c)
	}
	return tx.UpsertEvals(evals)
}

// ---- client-side writes ------------------------------------------------------

// UpdateAllocsFromClient merges what clients are the authority on (client
// status and description, task states, deployment health) into the
// stored allocs. Unknown allocs are skipped, since the servers may have
// garbage collected them. ModifyIndex moves; AllocModifyIndex does not,
// so a client is not woken by its own update. A node whose client reports
// for the first time since it missed a heartbeat records the index in
// LastAllocUpdateIndex: its client has re-synced its allocs (see
// structs.Node). Later reports leave the node alone, so routine status
// updates never rewrite nodes.
func (tx *Txn) UpdateAllocsFromClient(allocs []*structs.Allocation) error {
	tx.touch(TableAllocs)
	jobs := make(jobStatusUpdates)
	var nodes []string
	for _, update := range allocs {
		if update == nil {
			return fmt.Errorf("update alloc from client: alloc is nil")
		}
		if !structs.ValidClientStatus(update.ClientStatus) {
			return fmt.Errorf("alloc %q: invalid client status %q", update.ID, update.ClientStatus)
		}
		existing, err := allocByID(tx.txn, nil, update.ID)
		if err != nil {
			return err
		}
		if existing == nil {
			continue
		}
		c := *existing
		c.ClientStatus = update.ClientStatus
		c.ClientDescription = update.ClientDescription
		c.TaskStates = update.TaskStates
		if update.NetworkStatus != nil {
			c.NetworkStatus = update.NetworkStatus.Copy()
		}
		if update.DeploymentStatus != nil && !sameHealth(existing.DeploymentStatus, update.DeploymentStatus) {
			ds := *update.DeploymentStatus
			if existing.DeploymentStatus != nil {
				// The client only reports health; canary is the servers'.
				ds.Canary = existing.DeploymentStatus.Canary
			}
			ds.ModifyIndex = tx.index
			c.DeploymentStatus = &ds
		}
		c.ModifyIndex = tx.index
		c.ModifyTime = update.ModifyTime
		if t := tx.intern; t != nil {
			// What the client reported is decoded afresh each time.
			t.set(&c.ClientStatus)
			t.set(&c.ClientDescription)
			tx.internTaskStates(c.TaskStates)
		}

		if err := tx.updateDeploymentWithAlloc(&c, existing); err != nil {
			return err
		}
		if err := tx.updateSummaryWithAlloc(&c, existing); err != nil {
			return err
		}
		if err := tx.insertAlloc(&c, existing); err != nil {
			return fmt.Errorf("alloc %q: %w", c.ID, err)
		}
		if err := tx.dropServicesOfTerminalAlloc(&c); err != nil {
			return fmt.Errorf("alloc %q: %w", c.ID, err)
		}
		tx.emitAlloc(structs.TypeAllocationUpdated, &c)
		jobs.addAlloc(&c)
		if !slices.Contains(nodes, c.NodeID) {
			nodes = append(nodes, c.NodeID)
		}
	}
	for _, id := range nodes {
		if err := tx.markAllocsSynced(id); err != nil {
			return err
		}
	}
	return tx.setJobStatuses(jobs, false, structs.TypeAllocationUpdated)
}

// sameHealth reports whether a client's health report repeats the verdict
// the alloc already has. Such a report keeps the stored status, its
// timestamp and its ModifyIndex: the deployment watcher writes an eval for
// every verdict newer than the job's last eval, and the servers often
// judge an alloc healthy just before its client says so too, so moving the
// index would make a second eval of the job that only repeats the first.
func sameHealth(stored, reported *structs.AllocDeploymentStatus) bool {
	return stored != nil && stored.Healthy != nil && reported.Healthy != nil &&
		*stored.Healthy == *reported.Healthy
}

// markAllocsSynced records that the node's client reported its allocs
// after the node's last missed heartbeat.
func (tx *Txn) markAllocsSynced(nodeID string) error {
	n, err := nodeByID(tx.txn, nil, nodeID)
	if err != nil || n == nil || n.LastAllocUpdateIndex > n.LastMissedHeartbeatIndex {
		return err
	}
	c := n.Copy()
	c.LastAllocUpdateIndex = tx.index
	c.ModifyIndex = tx.index
	if err := tx.insert(TableNodes, c); err != nil {
		return fmt.Errorf("node %q: %w", nodeID, err)
	}
	return nil
}

// updateDeploymentWithAlloc counts a placement or a health change of an
// alloc in its deployment's task group state, and moves the group's
// progress deadline.
func (tx *Txn) updateDeploymentWithAlloc(a, existing *structs.Allocation) error {
	if a.DeploymentID == "" {
		return nil
	}
	d, err := deploymentByID(tx.txn, nil, a.DeploymentID)
	if err != nil || d == nil {
		return err
	}
	if _, ok := d.TaskGroups[a.TaskGroup]; !ok {
		return nil // the group is not part of the rollout
	}
	placed, healthy, unhealthy := 0, 0, 0
	hasHealth := a.DeploymentStatus != nil && a.DeploymentStatus.Healthy != nil
	hadHealth := existing != nil && existing.DeploymentStatus != nil && existing.DeploymentStatus.Healthy != nil
	switch {
	case existing == nil || existing.DeploymentID != a.DeploymentID:
		placed = 1
		if hasHealth {
			if *a.DeploymentStatus.Healthy {
				healthy = 1
			} else {
				unhealthy = 1
			}
		}
	case !hadHealth && hasHealth:
		if *a.DeploymentStatus.Healthy {
			healthy = 1
		} else {
			unhealthy = 1
		}
	case hadHealth && hasHealth && *existing.DeploymentStatus.Healthy && !*a.DeploymentStatus.Healthy:
		healthy, unhealthy = -1, 1
	}
	st := d.TaskGroups[a.TaskGroup]
	newCanary := a.DeploymentStatus != nil && a.DeploymentStatus.Canary && !slices.Contains(st.PlacedCanaries, a.ID)
	if placed == 0 && healthy == 0 && unhealthy == 0 && !newCanary {
		return nil
	}

	c := d.Copy()
	st = c.TaskGroups[a.TaskGroup]
	st.PlacedAllocs += placed
	st.HealthyAllocs += healthy
	st.UnhealthyAllocs += unhealthy
	if newCanary {
		st.PlacedCanaries = append(st.PlacedCanaries, a.ID)
	}
	if pd := st.ProgressDeadline; pd != 0 {
		switch {
		case placed != 0 && st.RequireProgressBy.IsZero():
			// Modify time, not create time: an in-place update can move
			// an existing alloc into a new deployment.
			st.RequireProgressBy = time.Unix(0, a.ModifyTime).UTC().Add(pd)
		case healthy > 0:
			if by := a.DeploymentStatus.Timestamp.Add(pd); by.After(st.RequireProgressBy) {
				st.RequireProgressBy = by
			}
		}
	}
	c.ModifyIndex = tx.index
	if err := tx.insert(TableDeployment, c); err != nil {
		return fmt.Errorf("deployment %q: %w", c.ID, err)
	}
	return nil
}

func (tx *Txn) emitAlloc(eventType string, a *structs.Allocation) {
	// The payload is the stored alloc itself, which never changes: a copy
	// without the job, as the event stream serves it, would be kept by
	// the broker's buffer beside it. The agent leaves the job out when it
	// writes the event (subscribers read it from the Job topic or the API).
	tx.emit(structs.Event{
		Topic:      structs.TopicAllocation,
		Type:       eventType,
		Key:        a.ID,
		Namespace:  a.Namespace,
		FilterKeys: filterKeys(a.JobID, a.DeploymentID),
		Payload:    &structs.AllocationEvent{Allocation: a},
	})
}

// ---- store wrappers ----------------------------------------------------------

// UpsertAllocs writes server-side allocs at index; see Txn.UpsertAllocs.
func (s *StateStore) UpsertAllocs(index uint64, allocs []*structs.Allocation) error {
	return s.WithWriteTxn(index, func(tx *Txn) error { return tx.UpsertAllocs(allocs) })
}

// UpdateAllocsFromClient merges client updates at index; see
// Txn.UpdateAllocsFromClient.
func (s *StateStore) UpdateAllocsFromClient(index uint64, allocs []*structs.Allocation) error {
	return s.WithWriteTxn(index, func(tx *Txn) error { return tx.UpdateAllocsFromClient(allocs) })
}

// UpdateAllocsDesiredTransitions sets desired transitions and writes evals
// at index; see Txn.UpdateAllocsDesiredTransitions.
func (s *StateStore) UpdateAllocsDesiredTransitions(index uint64, transitions map[string]*structs.DesiredTransition, evals []*structs.Evaluation) error {
	return s.WithWriteTxn(index, func(tx *Txn) error { return tx.UpdateAllocsDesiredTransitions(transitions, evals) })
}
