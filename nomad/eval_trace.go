package nomad

import (
	"fmt"

	"github.com/opennomad/nomad/nomad/broker"
	"github.com/opennomad/nomad/nomad/evaltrace"
	"github.com/opennomad/nomad/structs"
)

// traceEnqueues records in the evaluation trace every evaluation the
// leader's broker takes in: from the FSM after each commit, and from the
// blocked-evals tracker when capacity frees. It is handed to those two,
// not kept as the server's broker, whose other methods (and stats) are
// the broker's own.
type traceEnqueues struct {
	broker evalBroker
	trace  *evaltrace.Trace
}

// Enqueue is called on every server after a commit; only the leader's
// broker is enabled and takes the eval.
func (b traceEnqueues) Enqueue(eval *structs.Evaluation) {
	if eval != nil && b.broker.Enabled() {
		b.trace.Record(eval.ID, evaltrace.StageEnqueued, enqueueDetail(eval))
	}
	b.broker.Enqueue(eval)
}

// EnqueueAll is the blocked-evals tracker releasing evals; the broker it
// wraps must be a broker.EvalEnqueuer (the real one is).
func (b traceEnqueues) EnqueueAll(evals map[*structs.Evaluation]string) {
	if b.broker.Enabled() {
		for eval := range evals {
			b.trace.Record(eval.ID, evaltrace.StageEnqueued, "released from blocked: capacity or the cluster changed")
		}
	}
	b.broker.(broker.EvalEnqueuer).EnqueueAll(evals)
}

func enqueueDetail(eval *structs.Evaluation) string {
	switch {
	case eval.Wait > 0:
		return fmt.Sprintf("triggered by %s; delayed %s", eval.TriggeredBy, eval.Wait)
	case !eval.WaitUntil.IsZero():
		return fmt.Sprintf("triggered by %s; delayed until %s", eval.TriggeredBy, eval.WaitUntil.UTC().Format("15:04:05.000"))
	}
	return "triggered by " + eval.TriggeredBy
}

// traceBlocks records an evaluation written blocked: the scheduler could
// not place everything, and the eval waits for capacity.
type traceBlocks struct {
	blockedEvalTracker
	trace *evaltrace.Trace
}

// Block is called on every server after a commit; only the leader's
// tracker is enabled and takes the eval.
func (b traceBlocks) Block(eval *structs.Evaluation) {
	if eval != nil && b.Enabled() {
		b.trace.Record(eval.ID, evaltrace.StageBlocked, fmt.Sprintf("written blocked by eval %s: waiting for capacity", eval.PreviousEval))
	}
	b.blockedEvalTracker.Block(eval)
}

var _ broker.EvalEnqueuer = traceEnqueues{}
