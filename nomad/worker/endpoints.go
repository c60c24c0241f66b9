package worker

import (
	"context"

	"github.com/opennomad/nomad/structs"
)

// Endpoints are the leader-side calls a scheduling worker makes. The
// server implements each with RPC to the leader (Eval.Dequeue, Eval.Ack,
// Eval.Nack, Eval.Update, Eval.Create, Eval.Reblock, Plan.Submit), which
// forwards when this server is not the leader; tests use an in-memory
// twin over a local broker and plan queue.
//
// Each worker calls from its own goroutine, one call at a time; many
// workers call concurrently, so implementations must be safe for
// concurrent use. Errors cross the RPC boundary as text: the worker
// retries the eval-writing calls and SubmitPlan only when the text
// contains structs.ErrNoLeader or structs.ErrPlanQueueDisabled, so
// implementations must keep those texts intact.
type Endpoints interface {
	// Dequeue asks for an evaluation of one of req.Schedulers, waiting up
	// to req.Timeout. A response without an Eval means the wait timed
	// out. ctx is cancelled when the worker is paused or stopped, so an
	// in-process implementation can return early; one that cannot (a
	// network call) simply returns after the timeout.
	Dequeue(ctx context.Context, req *structs.EvalDequeueRequest) (*structs.EvalDequeueResponse, error)
	// Ack reports the eval processed: the broker forgets the delivery.
	Ack(req *structs.EvalAckRequest) error
	// Nack reports the eval failed: the broker redelivers it later.
	Nack(req *structs.EvalAckRequest) error
	// UpdateEval writes the eval being processed (exactly one, in
	// req.Evals) through Raft; the token must be the delivery's.
	UpdateEval(req *structs.EvalUpdateRequest) error
	// CreateEval writes a new eval (blocked, follow-up) through Raft; its
	// PreviousEval is the eval being processed.
	CreateEval(req *structs.EvalUpdateRequest) error
	// ReblockEval puts a blocked eval back in the leader's blocked set
	// without a Raft write.
	ReblockEval(req *structs.EvalUpdateRequest) error
	// SubmitPlan hands a plan to the leader's plan applier and returns its
	// result once committed. It blocks as long as the plan waits in the
	// queue.
	SubmitPlan(req *structs.PlanRequest) (*structs.PlanResponse, error)
}
