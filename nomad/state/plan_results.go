package state

import (
	"fmt"
	"slices"
	"time"

	"github.com/opennomad/nomad/structs"
)

// NodeEventMsgPlanRejected is the node event recorded when the plan
// applier marks a node ineligible after repeated plan rejections on it.
const NodeEventMsgPlanRejected = "Node marked as ineligible for scheduling due to repeated plan rejections"

// UpsertPlanResults applies what the plan applier committed of a plan,
// all in this transaction:
//
//   - the plan's new deployment and its deployment status updates;
//   - the eval's ModifyIndex, when EvalID is set (the eval must exist),
//     or, when the request carries the eval, the eval itself, written
//     last as an EvalUpdate of it would be (see writePlanEval);
//   - the stops and preemptions, each a structs.AllocStop applied here
//     to the stored alloc (which must exist; see stoppedAlloc);
//   - the new and updated allocs, with the request's Job (or the stored
//     version its JobRef names, see planJob) attached to those sent
//     without one (see Txn.UpsertAllocs for the merge rules);
//   - the evals for jobs that lost allocs to preemption;
//   - the nodes the applier found repeatedly rejecting plans, marked
//     ineligible with a node event.
//
// UpdatedAt is the applier's clock in unix nanoseconds, and the modify
// time of the stopped and preempted allocs. Every alloc, deployment and
// job event of the result has the type PlanResult.
func (tx *Txn) UpsertPlanResults(req *structs.ApplyPlanResultsRequest) error {
	tx.touch(TableAllocs)
	if req == nil {
		return fmt.Errorf("upsert plan results: request is nil")
	}
	if req.Deployment != nil {
		d, err := tx.mergePlannedDeployment(req.Deployment)
		if err != nil {
			return err
		}
		if err := tx.upsertDeployment(d, structs.TypePlanResult); err != nil {
			return err
		}
	}
	for _, u := range req.DeploymentUpdates {
		if err := tx.updateDeploymentStatus(u, structs.TypePlanResult); err != nil {
			return err
		}
	}
	if req.EvalID != "" && req.Eval == nil {
		if err := tx.touchEval(req.EvalID); err != nil {
			return fmt.Errorf("plan results: %w", err)
		}
	}

	job, err := tx.planJob(req)
	if err != nil {
		return err
	}
	jobs := make(jobStatusUpdates)
	// Stops first: a new alloc replacing a stopped one then links the
	// stopped alloc to itself on top of the stop.
	for _, stop := range req.AllocsStopped {
		if err := tx.applyStop(stop, structs.AllocDesiredStatusStop, req.UpdatedAt, jobs); err != nil {
			return err
		}
	}
	// Alloc is the pre-diff form of the same payload; older writers sent
	// every alloc there.
	for _, list := range [][]*structs.Allocation{req.Alloc, req.AllocsUpdated} {
		for _, a := range list {
			if a != nil && a.Job == nil {
				a.Job = job
			}
			if err := tx.upsertAlloc(a, structs.TypePlanResult, jobs); err != nil {
				return err
			}
		}
	}
	for _, stop := range req.AllocsPreempted {
		if err := tx.applyStop(stop, structs.AllocDesiredStatusEvict, req.UpdatedAt, jobs); err != nil {
			return err
		}
	}
	if err := tx.setJobStatuses(jobs, false, structs.TypePlanResult); err != nil {
		return err
	}

	if err := tx.UpsertEvals(req.PreemptionEvals); err != nil {
		return err
	}
	if err := tx.writePlanEval(req); err != nil {
		return err
	}
	for _, nodeID := range req.IneligibleNodes {
		tx.logger.Warn("marking node ineligible after repeated plan rejections", "node_id", nodeID)
		event := structs.NewNodeEvent(structs.NodeEventSubsystemScheduler, NodeEventMsgPlanRejected,
			time.Unix(0, req.UpdatedAt).UTC())
		if err := tx.UpdateNodeEligibility(nodeID, structs.NodeSchedulingIneligible, req.UpdatedAt/int64(time.Second), event); err != nil {
			return fmt.Errorf("plan results: %w", err)
		}
	}
	return nil
}

// planJob is the job of the allocs a plan result sends without one: the
// one it carries, or the stored version its JobRef names. A reference
// to a version this store does not hold (the job was purged, or the
// version trimmed, after the plan was judged) refuses the whole result:
// writing allocs of a job that is gone, or of another version than the
// scheduler placed, is never right, and the transaction aborts with
// nothing written.
func (tx *Txn) planJob(req *structs.ApplyPlanResultsRequest) (*structs.Job, error) {
	ref := req.JobRef
	if req.Job != nil || ref == nil {
		return req.Job, nil
	}
	stored, err := jobByIDAndVersion(tx.txn, nil, ref.Namespace, ref.ID, ref.Version)
	if err != nil {
		return nil, err
	}
	if !ref.Names(stored) {
		return nil, fmt.Errorf("plan results: job %q in namespace %q version %d (create index %d, job modify index %d): %w",
			ref.ID, ref.Namespace, ref.Version, ref.CreateIndex, ref.JobModifyIndex, structs.ErrUnknownJob)
	}
	return stored, nil
}

// applyStop writes the stored alloc stop names, with the stop applied and
// desiredStatus (stop or evict) set.
func (tx *Txn) applyStop(stop *structs.AllocStop, desiredStatus string, modifyTime int64, jobs jobStatusUpdates) error {
	if stop == nil {
		return fmt.Errorf("plan results: alloc stop is nil")
	}
	stored, err := allocByID(tx.txn, nil, stop.ID)
	if err != nil {
		return err
	}
	if stored == nil {
		verb := "stop"
		if desiredStatus == structs.AllocDesiredStatusEvict {
			verb = "preempt"
		}
		return fmt.Errorf("plan results: alloc %q to %s: %w", stop.ID, verb, structs.ErrUnknownAlloc)
	}
	return tx.upsertAlloc(stoppedAlloc(stored, stop, desiredStatus, modifyTime), structs.TypePlanResult, jobs)
}

// stoppedAlloc is the alloc to write for a stop or preemption: the stored
// alloc with the servers' decision applied. This is the only place a
// structs.AllocStop becomes an alloc again. Only the fields the decision
// owns change, and an empty one changes nothing; the rest, down to the
// reschedule history, is the stored alloc's. modifyTime is the entry's
// UpdatedAt; zero keeps the stored time.
func stoppedAlloc(stored *structs.Allocation, stop *structs.AllocStop, desiredStatus string, modifyTime int64) *structs.Allocation {
	a := *stored
	a.DesiredStatus = desiredStatus
	a.DesiredDescription = stop.DesiredDescription
	if stop.ClientStatus != "" {
		a.ClientStatus = stop.ClientStatus
	}
	if stop.FollowupEvalID != "" {
		a.FollowupEvalID = stop.FollowupEvalID
	}
	if stop.PreemptedByAllocation != "" {
		a.PreemptedByAllocation = stop.PreemptedByAllocation
	}
	if modifyTime != 0 {
		a.ModifyTime = modifyTime
	}
	return &a
}

// UpsertPlanResults applies a plan result at index; see
// Txn.UpsertPlanResults.
func (s *StateStore) UpsertPlanResults(index uint64, req *structs.ApplyPlanResultsRequest) error {
	return s.WithWriteTxn(index, func(tx *Txn) error { return tx.UpsertPlanResults(req) })
}

// mergePlannedDeployment keeps what other writers own when a plan carries
// a deployment that already exists. The scheduler planned against a
// snapshot: its copy holds the desired totals and canary counts it
// decides, but the status (changed through deployment updates), the
// health counters and progress deadline (kept here as allocs and health
// verdicts are written) and the promotion (an operator's) may have moved
// since. Writing the copy as is would lose a health verdict committed in
// between. A new deployment is taken as planned.
func (tx *Txn) mergePlannedDeployment(planned *structs.Deployment) (*structs.Deployment, error) {
	stored, err := deploymentByID(tx.txn, nil, planned.ID)
	if err != nil || stored == nil {
		return planned, err
	}
	d := planned.Copy()
	d.Status, d.StatusDescription = stored.Status, stored.StatusDescription
	for name, st := range d.TaskGroups {
		old, ok := stored.TaskGroups[name]
		if !ok {
			continue
		}
		st.PlacedAllocs = old.PlacedAllocs
		st.HealthyAllocs = old.HealthyAllocs
		st.UnhealthyAllocs = old.UnhealthyAllocs
		st.Promoted = st.Promoted || old.Promoted
		if old.RequireProgressBy.After(st.RequireProgressBy) {
			st.RequireProgressBy = old.RequireProgressBy
		}
		canaries := slices.Clone(old.PlacedCanaries)
		for _, id := range st.PlacedCanaries {
			if !slices.Contains(canaries, id) {
				canaries = append(canaries, id)
			}
		}
		st.PlacedCanaries = canaries
	}
	return d, nil
}
