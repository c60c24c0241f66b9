package nomad

import (
	"context"
	"time"

	"github.com/opennomad/nomad/nomad/broker"
	"github.com/opennomad/nomad/nomad/evaltrace"
	"github.com/opennomad/nomad/nomad/fsm"
	"github.com/opennomad/nomad/nomad/planapply"
	"github.com/opennomad/nomad/structs"
)

// The leader-only components of the scheduling pipeline, as the server
// uses them. broker.Broker, broker.BlockedEvals and planapply.Queue
// implement them; tests substitute recorders. Every method must be safe for
// concurrent use: endpoints, the FSM goroutine and the leader's loops call
// them at once.

// evalBroker is the leader's queue of evaluations (broker.Broker).
type evalBroker interface {
	fsm.EvalBroker
	Enabled() bool
	// SetEnabled(false) flushes everything; the state store still holds
	// every eval and the next leader restores them.
	SetEnabled(enabled bool)
	// EnabledNotify returns a channel closed once the broker is enabled
	// (already closed while it is); a waiter re-checks after it closes.
	EnabledNotify() <-chan struct{}
	// Restore is Enqueue for evals read back from state on a new leader.
	Restore(eval *structs.Evaluation)
	Dequeue(ctx context.Context, schedulers []string, timeout time.Duration) (*structs.Evaluation, string, error)
	Ack(evalID, token string) error
	Nack(evalID, token string) error
	OutstandingReset(evalID, token string) error
	PauseNackTimeout(evalID, token string) error
	ResumeNackTimeout(evalID, token string) error
	// Cancelable removes and returns up to batchSize pending evals that a
	// newer eval of their job superseded; the leader writes them back as
	// canceled. CancelableNotify signals when some were added.
	Cancelable(batchSize int) []*structs.Evaluation
	CancelableNotify() <-chan struct{}
	// TotalReady counts the evals ready to be dequeued, every scheduler's.
	TotalReady() int
}

// blockedEvalTracker is the leader's set of evals waiting for capacity
// (broker.BlockedEvals).
type blockedEvalTracker interface {
	fsm.BlockedEvals
	SetEnabled(enabled bool)
	Enabled() bool
	// Reblock re-tracks the eval a worker holds under token.
	Reblock(eval *structs.Evaluation, token string)
	// GetDuplicates waits for evals that lost the one-blocked-eval-per-job
	// rule and returns them; nil when ctx ends or timeout passes.
	GetDuplicates(ctx context.Context, timeout time.Duration) []*structs.Evaluation
	// TotalBlocked counts the tracked evals.
	TotalBlocked() int
}

// planQueue is the leader's queue of plans for the plan applier
// (planapply.Queue).
type planQueue interface {
	SetEnabled(enabled bool)
	// Enqueue queues a plan; structs.ErrPlanQueueDisabled off the leader.
	Enqueue(plan *structs.Plan) (planapply.Future, error)
}

// statsEmitter is a component that publishes its gauges periodically
// while the server leads.
type statsEmitter interface {
	EmitStats(ctx context.Context, period time.Duration)
}

// pipeline holds the leader-only components a server runs. Any of them
// may be nil: the server then refuses the calls that need it (a broker
// call answers structs.ErrBrokerDisabled, a plan submission
// structs.ErrPlanQueueDisabled).
type pipeline struct {
	broker  evalBroker
	blocked blockedEvalTracker
	plans   planQueue
	// trace is the leader's timeline of evaluations; nil records nothing.
	trace *evaltrace.Trace
}

// newPipeline builds the real components, on the server's clock.
func newPipeline(c *Config) (pipeline, error) {
	eb, err := broker.New(broker.Config{
		NackTimeout:         c.EvalNackTimeout,
		DeliveryLimit:       c.EvalDeliveryLimit,
		InitialNackDelay:    c.EvalNackInitialReenqueueDelay,
		SubsequentNackDelay: c.EvalNackSubsequentReenqueueDelay,
		Clock:               c.Clock,
		Logger:              c.Logger,
	})
	if err != nil {
		return pipeline{}, err
	}
	trace := evaltrace.New(evaltrace.DefaultEvals, evaltrace.DefaultEventsPerEval, c.Clock.Now)
	blockedCfg := broker.DefaultBlockedEvalsConfig()
	blockedCfg.Clock, blockedCfg.Logger = c.Clock, c.Logger
	blocked, err := broker.NewBlockedEvals(traceEnqueues{broker: eb, trace: trace}, blockedCfg)
	if err != nil {
		return pipeline{}, err
	}
	return pipeline{broker: eb, blocked: blocked, plans: planapply.NewQueue(c.Clock), trace: trace}, nil
}

// The real components must keep fitting the server's view of them.
var (
	_ evalBroker         = (*broker.Broker)(nil)
	_ blockedEvalTracker = (*broker.BlockedEvals)(nil)
	_ planQueue          = (*planapply.Queue)(nil)
	_ statsEmitter       = (*broker.Broker)(nil)
	_ statsEmitter       = (*broker.BlockedEvals)(nil)
	_ statsEmitter       = (*planapply.Queue)(nil)
)

// LeadershipObserver is a component that works only while this server
// leads, or that must change how it works then: the plan applier runs on
// the leader only; the scheduling workers pause most of themselves there
// to leave CPU to the broker and the applier.
//
// The server calls LeadershipGained from its leadership goroutine once
// the broker, blocked evals and plan queue are enabled and restored, with
// a context that ends when leadership is lost; it must not block (start a
// goroutine). LeadershipLost follows once that context has ended, before
// the components are disabled. The two alternate, starting with
// LeadershipGained.
type LeadershipObserver interface {
	LeadershipGained(ctx context.Context)
	LeadershipLost()
}

// The plan applier (planapply.Applier) follows leadership.
var _ LeadershipObserver = (*planapply.Applier)(nil)
