package endpoints

import (
	"fmt"
	"time"

	"github.com/hashicorp/go-metrics"

	"github.com/opennomad/nomad/structs"
)

// UpdateAlloc takes a client's alloc status updates. Updates from all
// clients are gathered for AllocUpdateBatchInterval and written in one
// Raft entry, with a reschedule eval (alloc-failure) for each job whose
// newly failed alloc its reschedule policy allows to be replaced. The
// call returns once that entry is applied.
func (n *Node) UpdateAlloc(args *structs.AllocUpdateRequest, reply *structs.GenericResponse) error {
	if done, err := n.srv.Forward("Node.UpdateAlloc", args, args, reply); done {
		return err
	}
	defer metrics.MeasureSince([]string{"nomad", "client", "update_alloc"}, time.Now())
	if err := validateAllocUpdates(args.Alloc); err != nil {
		return err
	}
	store := n.srv.State()
	now := n.srv.Clock().Now()
	var evals []*structs.Evaluation
	for _, u := range args.Alloc {
		stored, err := store.AllocByID(nil, u.ID)
		if err != nil {
			return err
		}
		if stored == nil {
			// Collected meanwhile; the state store skips it too.
			continue
		}
		if u.NodeID != "" && u.NodeID != stored.NodeID {
			return fmt.Errorf("alloc %q: update from node %q, but it runs on node %q", u.ID, u.NodeID, stored.NodeID)
		}
		node, err := store.NodeByID(nil, stored.NodeID)
		if err != nil {
			return err
		}
		if node == nil {
			return fmt.Errorf("alloc %q: node %q: %w", u.ID, stored.NodeID, structs.ErrUnknownNode)
		}
		if node.Status == structs.NodeStatusDown {
			return fmt.Errorf("node %q is down: it must heartbeat before updating its allocs", node.ID)
		}
		u.ModifyTime = now.UnixNano()
		if u.ClientStatus != structs.AllocClientStatusFailed || stored.FollowupEvalID != "" {
			continue
		}
		job, err := store.JobByID(nil, stored.Namespace, stored.JobID)
		if err != nil {
			return err
		}
		tg := job.LookupTaskGroup(stored.TaskGroup)
		if tg == nil || !stored.RescheduleEligible(tg.ReschedulePolicy, now) {
			continue
		}
		evals = append(evals, newJobEval(job, structs.EvalTriggerRetryFailedAlloc, 0, now))
	}

	index, err := n.srv.BatchAllocUpdates(args.Alloc, evals)
	if err != nil {
		return err
	}
	reply.Index = index
	return nil
}

// validateAllocUpdates lists every problem of a batch of client updates.
func validateAllocUpdates(allocs []*structs.Allocation) error {
	if len(allocs) == 0 {
		return &structs.ValidationError{Problems: []string{"must update at least one allocation"}}
	}
	var problems []string
	for i, a := range allocs {
		switch {
		case a == nil:
			problems = append(problems, fmt.Sprintf("allocation %d: missing", i))
		case a.ID == "":
			problems = append(problems, fmt.Sprintf("allocation %d: missing ID", i))
		case !structs.ValidClientStatus(a.ClientStatus):
			problems = append(problems, fmt.Sprintf("allocation %q: invalid client status %q", a.ID, a.ClientStatus))
		}
	}
	if len(problems) > 0 {
		return &structs.ValidationError{Problems: problems}
	}
	return nil
}
