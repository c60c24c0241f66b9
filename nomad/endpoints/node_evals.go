package endpoints

import (
	"maps"
	"path"
	"slices"
	"time"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// When a node changes in a way that may change what runs on it, every job
// with work on it is re-evaluated (and every system job that targets it):
// allocs of a node gone down are replaced elsewhere, a node back up gets
// its system jobs, a node with new attributes may now fit other jobs.

// statusChangeNeedsEvals reports whether a node moving from old to next
// status must have its jobs re-evaluated: it went down, it became ready
// (from initializing or down), or it entered or left the disconnected
// state.
func statusChangeNeedsEvals(old, next string) bool {
	switch {
	case next == structs.NodeStatusDown:
		return true
	case next == structs.NodeStatusReady && (old == structs.NodeStatusInit || old == structs.NodeStatusDown):
		return true
	case (old == structs.NodeStatusDisconnected) != (next == structs.NodeStatusDisconnected):
		return true
	}
	return false
}

// registrationNeedsEvals reports whether a (re-)registration must
// re-evaluate the node's jobs: a new node registering as ready, a status
// change that needs it, or a change to what feasibility checks read.
// Resources are left out: more capacity releases blocked evals instead.
func registrationNeedsEvals(old, node *structs.Node) bool {
	if old == nil {
		return statusChangeNeedsEvals(structs.NodeStatusInit, node.Status)
	}
	if statusChangeNeedsEvals(old.Status, node.Status) {
		return true
	}
	return old.Datacenter != node.Datacenter || old.Name != node.Name || old.NodeClass != node.NodeClass ||
		old.NodePool != node.NodePool ||
		!maps.Equal(old.Attributes, node.Attributes) || !maps.Equal(old.Meta, node.Meta) ||
		!sameDriverHealth(old.Drivers, node.Drivers) || !structs.SameHostVolumes(old.HostVolumes, node.HostVolumes)
}

// sameDriverHealth compares what feasibility reads of the drivers, not
// when they were last fingerprinted.
func sameDriverHealth(a, b map[string]*structs.DriverInfo) bool {
	if len(a) != len(b) {
		return false
	}
	for name, da := range a {
		db, ok := b[name]
		if !ok || da.Detected != db.Detected || da.Healthy != db.Healthy || !maps.Equal(da.Attributes, db.Attributes) {
			return false
		}
	}
	return true
}

// nodeEvals returns one pending node-update eval per job that has work on
// the node, plus one per running system or sysbatch job that targets the
// node (by node pool and datacenter). A service alloc counts unless it is
// terminal both server- and client-side (a stopped alloc still running
// must be marked lost); a batch alloc counts until its client finished it
// (finished batch work must not run again).
func nodeEvals(store *state.StateStore, node *structs.Node, now time.Time) ([]*structs.Evaluation, error) {
	allocs, err := store.AllocsByNode(nil, node.ID)
	if err != nil {
		return nil, err
	}
	seen := make(map[structs.NamespacedID]bool)
	var evals []*structs.Evaluation
	add := func(job *structs.Job) {
		key := job.NamespacedID()
		if seen[key] {
			return
		}
		seen[key] = true
		e := newJobEval(job, structs.EvalTriggerNodeUpdate, 0, now)
		e.NodeID = node.ID
		e.NodeModifyIndex = node.ModifyIndex
		evals = append(evals, e)
	}
	for _, a := range allocs {
		if a.Job == nil {
			continue
		}
		switch a.Job.Type {
		case structs.JobTypeBatch, structs.JobTypeSysBatch:
			if a.ClientTerminalStatus() {
				continue
			}
		default:
			if a.ServerTerminalStatus() && a.ClientTerminalStatus() {
				continue
			}
		}
		// Evaluate the job as registered now; the alloc's copy may be an
		// older version.
		job, err := store.JobByID(nil, a.Namespace, a.JobID)
		if err != nil {
			return nil, err
		}
		if job == nil {
			job = a.Job
		}
		add(job)
	}
	for _, typ := range []string{structs.JobTypeSystem, structs.JobTypeSysBatch} {
		jobs, err := store.JobsByType(nil, typ)
		if err != nil {
			return nil, err
		}
		for _, job := range jobs {
			if !job.Stop && jobTargetsNode(job, node) {
				add(job)
			}
		}
	}
	return evals, nil
}

// jobTargetsNode reports whether a job may place on the node: its node
// pool and one of its datacenter patterns ("*" wildcards allowed) match.
func jobTargetsNode(job *structs.Job, node *structs.Node) bool {
	if job.NodePool != structs.NodePoolAll && job.NodePool != node.NodePool {
		return false
	}
	return slices.ContainsFunc(job.Datacenters, func(pattern string) bool {
		ok, err := path.Match(pattern, node.Datacenter)
		return err == nil && ok
	})
}

// evalIDs lists the IDs of evals.
func evalIDs(evals []*structs.Evaluation) []string {
	ids := make([]string, len(evals))
	for i, e := range evals {
		ids[i] = e.ID
	}
	return ids
}
