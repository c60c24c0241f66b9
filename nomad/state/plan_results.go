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
//   - the eval's ModifyIndex, when EvalID is set (the eval must exist);
//   - the stopped and preempted allocs, sent as trimmed AllocationDiffs
//     and re-hydrated here from the stored allocs (each must exist);
//   - the new and updated allocs, with the request's Job attached to
//     those sent without one (see Txn.UpsertAllocs for the merge rules);
//   - the evals for jobs that lost allocs to preemption;
//   - the nodes the applier found repeatedly rejecting plans, marked
//     ineligible with a node event.
//
// UpdatedAt is the applier's clock in unix nanoseconds. Every alloc,
// deployment and job event of the result has the type PlanResult.
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
	if req.EvalID != "" {
		if err := tx.touchEval(req.EvalID); err != nil {
			return fmt.Errorf("plan results: %w", err)
		}
	}

	jobs := make(jobStatusUpdates)
	// Stops first: a new alloc replacing a stopped one then links the
	// stopped alloc to itself on top of the stop.
	for _, diff := range req.AllocsStopped {
		a, err := tx.rehydrate(diff, false)
		if err != nil {
			return err
		}
		if err := tx.upsertAlloc(a, structs.TypePlanResult, jobs); err != nil {
			return err
		}
	}
	// Alloc is the pre-diff form of the same payload; older writers sent
	// every alloc there.
	for _, list := range [][]*structs.Allocation{req.Alloc, req.AllocsUpdated} {
		for _, a := range list {
			if a != nil && a.Job == nil {
				a.Job = req.Job
			}
			if err := tx.upsertAlloc(a, structs.TypePlanResult, jobs); err != nil {
				return err
			}
		}
	}
	for _, diff := range req.AllocsPreempted {
		a, err := tx.rehydrate(diff, true)
		if err != nil {
			return err
		}
		if err := tx.upsertAlloc(a, structs.TypePlanResult, jobs); err != nil {
			return err
		}
	}
	if err := tx.setJobStatuses(jobs, false, structs.TypePlanResult); err != nil {
		return err
	}

	if err := tx.UpsertEvals(req.PreemptionEvals); err != nil {
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

// rehydrate rebuilds a stopped or preempted alloc from the stored one and
// the few fields the plan sent.
func (tx *Txn) rehydrate(diff *structs.AllocationDiff, preempted bool) (*structs.Allocation, error) {
	if diff == nil {
		return nil, fmt.Errorf("plan results: alloc diff is nil")
	}
	stored, err := allocByID(tx.txn, nil, diff.ID)
	if err != nil {
		return nil, err
	}
	if stored == nil {
		verb := "stop"
		if preempted {
			verb = "preempt"
		}
		return nil, fmt.Errorf("plan results: alloc %q to %s: %w", diff.ID, verb, structs.ErrUnknownAlloc)
	}
	a := *stored
	a.DesiredDescription = diff.DesiredDescription
	if preempted {
		a.DesiredStatus = structs.AllocDesiredStatusEvict
		a.PreemptedByAllocation = diff.PreemptedByAllocation
	} else {
		a.DesiredStatus = structs.AllocDesiredStatusStop
		if diff.ClientStatus != "" {
			a.ClientStatus = diff.ClientStatus
		}
		if diff.FollowupEvalID != "" {
			a.FollowupEvalID = diff.FollowupEvalID
		}
	}
	if diff.ModifyTime != 0 {
		a.ModifyTime = diff.ModifyTime
	}
	return &a, nil
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
