package endpoints

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/go-memdb"
	"github.com/hashicorp/go-metrics"

	"github.com/opennomad/nomad/acl"
	"github.com/opennomad/nomad/nomad/clock"
	"github.com/opennomad/nomad/nomad/evaltrace"
	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// defaultDequeueTimeout is how long Eval.Dequeue waits for work when the
// worker names no timeout.
const defaultDequeueTimeout = time.Second

// Eval serves the Eval.* RPCs: the scheduling workers' protocol
// with the leader's broker (dequeue, ack, nack, and the writes they make
// for the eval they hold), the garbage collector's deletions, and reads.
type Eval struct {
	srv Server
}

// evalRules says what each Eval.* method needs of the caller's token.
// The scheduling workers' and the garbage collector's calls are Internal.
var evalRules = Rules{
	"Dequeue":     Internal(),
	"Ack":         Internal(),
	"Nack":        Internal(),
	"Update":      Internal(),
	"Create":      Internal(),
	"Reblock":     Internal(),
	"Reap":        Internal(),
	"GetEval":     NamespaceAny(acl.NamespaceCapabilityReadJob),
	"Allocations": NamespaceAny(acl.NamespaceCapabilityReadJob),
	"List":        NamespaceAny(acl.NamespaceCapabilityReadJob),
	"Timeline":    NamespaceAny(acl.NamespaceCapabilityReadJob),
	"Delete":      Management(),
}

// Dequeue hands a worker the highest-priority ready eval among the
// scheduler types it runs, with a delivery token, waiting up to Timeout
// for one. WaitIndex tells the worker how far its state must have caught
// up before it schedules: the newest ModifyIndex among the job's evals.
// While the scheduler configuration pauses the broker, the call waits for
// the broker to be resumed within its timeout, and otherwise returns no
// eval once the timeout passed.
func (e *Eval) Dequeue(args *structs.EvalDequeueRequest, reply *structs.EvalDequeueResponse) error {
	return Dequeue(e.srv.ShutdownContext(), e.srv, args, reply)
}

// Dequeue is Eval.Dequeue ending early when ctx ends: the server's
// shutdown for callers over RPC, also a pause or stop for the server's
// own workers, which call it in process. It is a function, not a method,
// so that the registry does not serve it.
func Dequeue(ctx context.Context, srv Server, args *structs.EvalDequeueRequest, reply *structs.EvalDequeueResponse) error {
	e := &Eval{srv: srv}
	if done, err := e.srv.Forward("Eval.Dequeue", args, args, reply); done {
		return err
	}
	if len(args.Schedulers) == 0 {
		return &structs.ValidationError{Problems: []string{"dequeue requires at least one scheduler type"}}
	}
	if args.SchedulerVersion != structs.SchedulerVersion {
		return fmt.Errorf("%w: worker runs version %d, this server %d",
			structs.ErrSchedulerVersion, args.SchedulerVersion, structs.SchedulerVersion)
	}
	broker := e.srv.EvalBroker()
	if broker == nil {
		return structs.ErrBrokerDisabled
	}
	timeout := args.Timeout
	if timeout <= 0 {
		timeout = defaultDequeueTimeout
	}
	wctx, cancel := clock.WithTimeout(ctx, e.srv.Clock(), timeout)
	defer cancel()
	for {
		eval, token, err := broker.Dequeue(wctx, args.Schedulers, 0)
		switch {
		case err == nil:
			e.srv.EvalTrace().Record(eval.ID, evaltrace.StageDequeued, workerDetail(args.WorkerID))
			return e.answerDequeue(broker, eval, token, reply)
		case clock.TimedOut(wctx):
			return e.answerDequeue(broker, nil, "", reply)
		case errors.Is(err, structs.ErrBrokerDisabled) && e.srv.IsEstablishedLeader():
			// Paused by the operator: wait for a resume rather than
			// erroring, so workers neither spin nor log.
			select {
			case <-broker.EnabledNotify():
			case <-wctx.Done():
				if clock.TimedOut(wctx) {
					return e.answerDequeue(broker, nil, "", reply)
				}
				return ctx.Err()
			}
		default:
			return err
		}
	}
}

// answerDequeue fills the reply for a dequeued eval (nil: none).
func (e *Eval) answerDequeue(broker EvalBroker, eval *structs.Evaluation, token string, reply *structs.EvalDequeueResponse) error {
	if eval != nil {
		waitIndex, err := evalWaitIndex(e.srv.State(), eval)
		if err != nil {
			// The delivery is outstanding; without an answer the worker
			// never acks it, so give it back now.
			_ = broker.Nack(eval.ID, token)
			return err
		}
		reply.Eval, reply.Token, reply.WaitIndex = eval, token, waitIndex
	}
	e.srv.SetQueryMeta(&reply.QueryMeta)
	return nil
}

// evalWaitIndex is the newest ModifyIndex among eval and its job's evals:
// a worker scheduling before its state reaches it could miss the effect
// of an earlier eval of the same job.
func evalWaitIndex(store *state.StateStore, eval *structs.Evaluation) (uint64, error) {
	index := eval.ModifyIndex
	evals, err := store.EvalsByJob(nil, eval.Namespace, eval.JobID)
	if err != nil {
		return 0, err
	}
	for _, e := range evals {
		if e.ModifyIndex > index {
			index = e.ModifyIndex
		}
	}
	return index, nil
}

// Ack reports a delivery processed. It also wakes the reaper that
// cancels evals this one superseded: scheduler progress paces it.
func (e *Eval) Ack(args *structs.EvalAckRequest, reply *structs.GenericResponse) error {
	if done, err := e.srv.Forward("Eval.Ack", args, args, reply); done {
		return err
	}
	if err := validateAck(args); err != nil {
		return err
	}
	broker := e.srv.EvalBroker()
	if broker == nil {
		return structs.ErrBrokerDisabled
	}
	if err := broker.Ack(args.EvalID, args.Token); err != nil {
		return fmt.Errorf("ack of eval %q: %w", args.EvalID, err)
	}
	e.srv.EvalTrace().Record(args.EvalID, evaltrace.StageAcked, "")
	e.srv.KickCancelableReaper()
	return nil
}

// Nack gives a delivery back; the broker redelivers it after a delay.
func (e *Eval) Nack(args *structs.EvalAckRequest, reply *structs.GenericResponse) error {
	if done, err := e.srv.Forward("Eval.Nack", args, args, reply); done {
		return err
	}
	if err := validateAck(args); err != nil {
		return err
	}
	broker := e.srv.EvalBroker()
	if broker == nil {
		return structs.ErrBrokerDisabled
	}
	if err := broker.Nack(args.EvalID, args.Token); err != nil {
		return fmt.Errorf("nack of eval %q: %w", args.EvalID, err)
	}
	e.srv.EvalTrace().Record(args.EvalID, evaltrace.StageNacked, "the worker gave it back; redelivered after a delay")
	return nil
}

// workerDetail names a dequeuing worker in the timeline.
func workerDetail(id string) string {
	if id == "" {
		return "by a worker"
	}
	return "by worker " + id
}

// Timeline returns what the leader recorded of an evaluation's life:
// enqueued, dequeued by which worker, plan submitted and applied, acked.
// Only the leader records it, in memory (package evaltrace), so the call
// is always answered by the leader, and the timeline of an evaluation
// handled by an earlier leader is empty.
func (e *Eval) Timeline(args *structs.EvalSpecificRequest, reply *structs.EvalTimelineResponse) error {
	args.AllowStale = false
	if done, err := e.srv.Forward("Eval.Timeline", args, args, reply); done {
		return err
	}
	eval, err := e.srv.State().EvalByID(nil, args.EvalID)
	if err != nil {
		return err
	}
	if eval == nil {
		return fmt.Errorf("evaluation %q: %w", args.EvalID, structs.ErrNotFound)
	}
	// The rule checked the request's namespace; the eval may be in
	// another one.
	aclObj, err := e.srv.ResolveACL(args.AuthToken)
	if err != nil {
		return err
	}
	if !aclObj.AllowNsOpAny(eval.Namespace, acl.NamespaceCapabilityReadJob) {
		return structs.ErrPermissionDenied
	}
	reply.EvalID = eval.ID
	for _, ev := range e.srv.EvalTrace().Events(eval.ID) {
		reply.Events = append(reply.Events, structs.EvalTimelineEvent{Time: ev.Time, Stage: ev.Stage, Detail: ev.Detail})
	}
	e.srv.SetQueryMeta(&reply.QueryMeta)
	return nil
}

func validateAck(args *structs.EvalAckRequest) error {
	var problems []string
	if args.EvalID == "" {
		problems = append(problems, "missing eval ID")
	}
	if args.Token == "" {
		problems = append(problems, "missing eval token")
	}
	if len(problems) > 0 {
		return &structs.ValidationError{Problems: problems}
	}
	return nil
}

// singleEval returns the one eval a worker write must carry.
func singleEval(args *structs.EvalUpdateRequest, what string) (*structs.Evaluation, error) {
	if len(args.Evals) != 1 || args.Evals[0] == nil {
		return nil, &structs.ValidationError{Problems: []string{fmt.Sprintf("only a single eval can be %s", what)}}
	}
	if args.EvalToken == "" {
		return nil, &structs.ValidationError{Problems: []string{"missing eval token"}}
	}
	return args.Evals[0], nil
}

// writtenEval returns the one eval a worker's Update or Create carries,
// which must have a known status.
func writtenEval(args *structs.EvalUpdateRequest, what string) (*structs.Evaluation, error) {
	eval, err := singleEval(args, what)
	if err != nil {
		return nil, err
	}
	if !structs.ValidEvalStatus(eval.Status) {
		return nil, &structs.ValidationError{Problems: []string{fmt.Sprintf("eval %q: invalid status %q", eval.ID, eval.Status)}}
	}
	return eval, nil
}

// Update writes the eval a worker holds (its outcome). The worker must
// hold it under the token; the write also restarts its nack timer.
func (e *Eval) Update(args *structs.EvalUpdateRequest, reply *structs.GenericResponse) error {
	if done, err := e.srv.Forward("Eval.Update", args, args, reply); done {
		return err
	}
	defer metrics.MeasureSince([]string{"nomad", "eval", "update"}, time.Now())
	eval, err := writtenEval(args, "updated")
	if err != nil {
		return err
	}
	broker := e.srv.EvalBroker()
	if broker == nil {
		return structs.ErrBrokerDisabled
	}
	if err := broker.OutstandingReset(eval.ID, args.EvalToken); err != nil {
		return fmt.Errorf("update of eval %q: %w", eval.ID, err)
	}
	_, index, err := e.srv.RaftApply(structs.EvalUpdateRequestType, args)
	if err != nil {
		return err
	}
	reply.Index = index
	return nil
}

// Create writes an eval a worker's scheduler made (a blocked eval, a
// follow-up): its PreviousEval must be the eval the worker holds under
// the token, and it must be new.
func (e *Eval) Create(args *structs.EvalUpdateRequest, reply *structs.GenericResponse) error {
	if done, err := e.srv.Forward("Eval.Create", args, args, reply); done {
		return err
	}
	defer metrics.MeasureSince([]string{"nomad", "eval", "create"}, time.Now())
	eval, err := writtenEval(args, "created")
	if err != nil {
		return err
	}
	broker := e.srv.EvalBroker()
	if broker == nil {
		return structs.ErrBrokerDisabled
	}
	if err := broker.OutstandingReset(eval.PreviousEval, args.EvalToken); err != nil {
		return fmt.Errorf("create of eval %q after eval %q: %w", eval.ID, eval.PreviousEval, err)
	}
	existing, err := e.srv.State().EvalByID(nil, eval.ID)
	if err != nil {
		return err
	}
	if existing != nil {
		return fmt.Errorf("eval %q: evaluation already exists", eval.ID)
	}
	_, index, err := e.srv.RaftApply(structs.EvalUpdateRequestType, args)
	if err != nil {
		return err
	}
	reply.Index = index
	return nil
}

// Reblock puts a blocked eval the worker holds back into the blocked set
// without a Raft write: it could still not place everything.
func (e *Eval) Reblock(args *structs.EvalUpdateRequest, reply *structs.GenericResponse) error {
	if done, err := e.srv.Forward("Eval.Reblock", args, args, reply); done {
		return err
	}
	eval, err := singleEval(args, "reblocked")
	if err != nil {
		return err
	}
	broker, blocked := e.srv.EvalBroker(), e.srv.BlockedEvals()
	if broker == nil || blocked == nil {
		return structs.ErrBrokerDisabled
	}
	if err := broker.OutstandingReset(eval.ID, args.EvalToken); err != nil {
		return fmt.Errorf("reblock of eval %q: %w", eval.ID, err)
	}
	stored, err := e.srv.State().EvalByID(nil, eval.ID)
	if err != nil {
		return err
	}
	if stored == nil {
		return fmt.Errorf("reblock of eval %q: %w", eval.ID, structs.ErrUnknownEval)
	}
	if stored.Status != structs.EvalStatusBlocked {
		return fmt.Errorf("eval %q is not already in a blocked state", eval.ID)
	}
	blocked.Reblock(eval, args.EvalToken)
	reply.Index = stored.ModifyIndex
	return nil
}

// Reap deletes evals and allocs; the garbage collector calls it.
func (e *Eval) Reap(args *structs.EvalDeleteRequest, reply *structs.GenericResponse) error {
	if done, err := e.srv.Forward("Eval.Reap", args, args, reply); done {
		return err
	}
	if len(args.Evals) == 0 && len(args.Allocs) == 0 {
		return &structs.ValidationError{Problems: []string{"nothing to reap: no eval or alloc IDs"}}
	}
	_, index, err := e.srv.RaftApply(structs.EvalDeleteRequestType, args)
	if err != nil {
		return err
	}
	reply.Index = index
	return nil
}

// GetEval returns an eval, nil when unknown; with IncludeRelated, the
// stubs of every eval linked to it through next, previous and blocked
// evals.
func (e *Eval) GetEval(args *structs.EvalSpecificRequest, reply *structs.SingleEvalResponse) error {
	if done, err := e.srv.Forward("Eval.GetEval", args, args, reply); done {
		return err
	}
	return blockingQuery(e.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		eval, err := store.EvalByID(ws, args.EvalID)
		if err != nil {
			return 0, err
		}
		reply.Eval = eval
		if eval == nil {
			return store.Index(state.TableEvals)
		}
		if args.IncludeRelated {
			related, err := relatedEvals(ws, store, eval)
			if err != nil {
				return 0, err
			}
			c := eval.Copy()
			c.RelatedEvals = related
			reply.Eval = c
		}
		return eval.ModifyIndex, nil
	})
}

// relatedEvals walks the links from eval to every eval reachable through
// NextEval, PreviousEval and BlockedEval.
func relatedEvals(ws memdb.WatchSet, store *state.StateStore, eval *structs.Evaluation) ([]*structs.EvaluationStub, error) {
	seen := map[string]bool{eval.ID: true}
	queue := []*structs.Evaluation{eval}
	var out []*structs.EvaluationStub
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, id := range []string{cur.NextEval, cur.PreviousEval, cur.BlockedEval} {
			if id == "" || seen[id] {
				continue
			}
			seen[id] = true
			e, err := store.EvalByID(ws, id)
			if err != nil {
				return nil, err
			}
			if e == nil {
				continue
			}
			out = append(out, e.Stub())
			queue = append(queue, e)
		}
	}
	return out, nil
}

// List returns evals, optionally only a job's or only those of a status,
// with an ID prefix.
func (e *Eval) List(args *structs.EvalListRequest, reply *structs.EvalListResponse) error {
	if done, err := e.srv.Forward("Eval.List", args, args, reply); done {
		return err
	}
	ns := args.RequestNamespace()
	return blockingQuery(e.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		var (
			evals []*structs.Evaluation
			err   error
		)
		if args.FilterJobID != "" {
			evals, err = store.EvalsByJob(ws, ns, args.FilterJobID)
		} else {
			evals, err = store.EvalsByIDPrefix(ws, ns, args.Prefix)
		}
		if err != nil {
			return 0, err
		}
		out := make([]*structs.Evaluation, 0, len(evals))
		for _, ev := range evals {
			if args.FilterEvalStatus != "" && ev.Status != args.FilterEvalStatus {
				continue
			}
			if args.FilterJobID != "" && args.Prefix != "" && !strings.HasPrefix(ev.ID, args.Prefix) {
				continue
			}
			out = append(out, ev)
		}
		reply.Evaluations = out
		return store.Index(state.TableEvals)
	})
}

// Allocations returns the stubs of the allocs an eval placed or changed.
func (e *Eval) Allocations(args *structs.EvalSpecificRequest, reply *structs.EvalAllocationsResponse) error {
	if done, err := e.srv.Forward("Eval.Allocations", args, args, reply); done {
		return err
	}
	return blockingQuery(e.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		allocs, err := store.AllocsByEval(ws, args.EvalID)
		if err != nil {
			return 0, err
		}
		stubs := make([]*structs.AllocListStub, 0, len(allocs))
		for _, a := range allocs {
			stubs = append(stubs, a.Stub())
		}
		reply.Allocations = stubs
		return store.Index(state.TableAllocs)
	})
}
