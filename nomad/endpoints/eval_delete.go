package endpoints

import (
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/go-metrics"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// maxEvalDeleteIDs bounds one user deletion, as Nomad's does.
const maxEvalDeleteIDs = 7281

// errEvalBrokerEnabled refuses a user deletion while the broker runs: a
// deleted eval could be in a worker's hands. The text is Nomad's.
var errEvalBrokerEnabled = errors.New("eval broker is enabled; eval broker must be paused to delete evals")

// Delete removes evaluations an operator names, for clearing a backlog:
// only while the scheduler configuration pauses the eval broker, and only
// evals whose job is gone or none of whose allocations still run.
// Deleting by filter is not built.
func (e *Eval) Delete(args *structs.EvalUserDeleteRequest, reply *structs.EvalUserDeleteResponse) error {
	if done, err := e.srv.Forward("Eval.Delete", args, args, reply); done {
		return err
	}
	defer metrics.MeasureSince([]string{"nomad", "eval", "delete"}, time.Now())
	switch {
	case len(args.EvalIDs) == 0:
		return &structs.ValidationError{Problems: []string{"evals must be deleted by either ID or filter"}}
	case len(args.EvalIDs) > maxEvalDeleteIDs:
		return &structs.ValidationError{Problems: []string{fmt.Sprintf("request includes %d evaluation IDs, must be %d or fewer",
			len(args.EvalIDs), maxEvalDeleteIDs)}}
	}
	store := e.srv.State()
	if _, cfg, err := store.SchedulerConfig(nil); err != nil {
		return err
	} else if cfg == nil || !cfg.PauseEvalBroker {
		return errEvalBrokerEnabled
	}
	for _, id := range args.EvalIDs {
		if err := evalDeletable(store, id); err != nil {
			return err
		}
	}
	_, index, err := e.srv.RaftApply(structs.EvalDeleteRequestType, &structs.EvalDeleteRequest{Evals: args.EvalIDs})
	if err != nil {
		return err
	}
	reply.Count = len(args.EvalIDs)
	reply.Index = index
	return nil
}

// evalDeletable refuses an eval that does not exist, or whose job exists
// and still has a running allocation the eval placed.
func evalDeletable(store *state.StateStore, id string) error {
	eval, err := store.EvalByID(nil, id)
	if err != nil {
		return err
	}
	if eval == nil {
		return fmt.Errorf("eval %q: %w", id, structs.ErrUnknownEval)
	}
	job, err := store.JobByID(nil, eval.Namespace, eval.JobID)
	if err != nil || job == nil {
		return err
	}
	allocs, err := store.AllocsByEval(nil, id)
	if err != nil {
		return err
	}
	for _, a := range allocs {
		if !a.ClientTerminalStatus() && !a.ServerTerminalStatus() {
			return &structs.ValidationError{Problems: []string{
				fmt.Sprintf("eval %q: its allocation %q is still running; it is not safe to delete", id, a.ID)}}
		}
	}
	return nil
}
