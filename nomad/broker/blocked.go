package broker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/opennomad/nomad/nomad/clock"
	"github.com/opennomad/nomad/structs"
)

// EvalEnqueuer is what the blocked-evals tracker needs of the eval broker.
//
// EnqueueAll is called from the tracker's own goroutine (or from the
// goroutine of whoever forces processing), never while the tracker holds
// its state lock, with a batch of released evals mapped to the delivery
// token they were blocked with ("" when the FSM blocked them). The
// implementation must enqueue an eval that is still outstanding under
// that token only once that delivery is acked (see Broker.EnqueueAll),
// and must not call back into the tracker.
type EvalEnqueuer interface {
	EnqueueAll(evals map[*structs.Evaluation]string)
}

// BlockedEvalsConfig tunes a BlockedEvals. DefaultBlockedEvalsConfig
// returns Nomad's values.
type BlockedEvalsConfig struct {
	// PruneInterval is how often unblock records and empty resource stats
	// older than PruneThreshold are dropped.
	PruneInterval  time.Duration
	PruneThreshold time.Duration
	// FailedUnblockInterval is how often evals blocked after the scheduler
	// ran out of plan attempts (TriggeredBy "max-plan-attempts") are
	// released to try again, whether or not capacity changed.
	FailedUnblockInterval time.Duration

	// Clock arms the periodic timers; clock.Real{} when nil.
	Clock clock.Clock
	// Logger; a null logger when nil.
	Logger hclog.Logger
}

// DefaultBlockedEvalsConfig prunes every 5 min what is older than 15 min
// and releases max-plan-attempts evals every minute.
func DefaultBlockedEvalsConfig() BlockedEvalsConfig {
	return BlockedEvalsConfig{
		PruneInterval:         5 * time.Minute,
		PruneThreshold:        15 * time.Minute,
		FailedUnblockInterval: time.Minute,
		Clock:                 clock.Real{},
	}
}

func (c BlockedEvalsConfig) validate() error {
	var errs []error
	if c.PruneInterval <= 0 {
		errs = append(errs, fmt.Errorf("PruneInterval must be positive, got %v", c.PruneInterval))
	}
	if c.PruneThreshold <= 0 {
		errs = append(errs, fmt.Errorf("PruneThreshold must be positive, got %v", c.PruneThreshold))
	}
	if c.FailedUnblockInterval <= 0 {
		errs = append(errs, fmt.Errorf("FailedUnblockInterval must be positive, got %v", c.FailedUnblockInterval))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("blocked evals config: %w", err)
	}
	return nil
}

// BlockedEvals holds evaluations that could not place everything for lack
// of capacity (status "blocked") until a change in the cluster could let
// them make progress, then releases them into the eval broker. It lives on
// the leader only and is rebuilt from the state store on every leadership
// change (SetEnabled(true), then Block for each blocked eval).
//
// Rules:
//   - At most one blocked eval per job. Of two, the one with the larger
//     max(CreateIndex, SnapshotIndex) is kept (the newer on a tie); the
//     other is handed to the leader through GetDuplicates to be written
//     back as canceled.
//   - A "captured" eval (its constraints are described by computed node
//     classes) is released by a capacity change in any class it did not
//     mark ineligible, including classes it never saw. An "escaped" eval
//     (EscapedComputedClass) is released by a change in any class.
//   - A blocked system-job eval is also indexed by its NodeID and released
//     when that node's capacity changes (UnblockNode).
//   - Missed unblocks: an eval whose SnapshotIndex predates a capacity
//     change that would have released it is released at once on Block.
//
// Concurrency: the FSM calls Block, Untrack and the Unblock methods from
// its apply goroutine, and none of them ever blocks or waits on another
// goroutine. Each call appends to an inbox under a lock held only for the
// append, and a single goroutine applies the inbox in call order; runs of
// capacity changes are coalesced into one pass over the blocked set.
// Unlike a bounded channel the inbox applies no back-pressure to Raft.
// Calls made while the tracker is disabled (every follower) are dropped.
// All methods are safe for concurrent use.
type BlockedEvals struct {
	broker         EvalEnqueuer
	clock          clock.Clock
	logger         hclog.Logger
	pruneInterval  time.Duration
	pruneThreshold time.Duration
	failedInterval time.Duration

	// enabled mirrors the state under mu for the lock-free check at the
	// top of every FSM-facing call.
	enabled atomic.Bool

	inboxMu     sync.Mutex
	inbox       []blockedOp
	inboxSignal chan struct{}

	// procMu serialises processing so batches apply in call order and
	// their releases reach the broker in that order; spare is the other
	// half of the inbox's double buffer and belongs to whoever holds it.
	procMu sync.Mutex
	spare  []blockedOp

	mu sync.Mutex
	// on is the authoritative enabled flag.
	on bool
	// captured and escaped hold every tracked eval by ID.
	captured map[string]wrappedEval
	escaped  map[string]wrappedEval
	// system indexes tracked system-job evals by node.
	system systemBlockedIndex
	// jobs maps each job to its one tracked eval.
	jobs map[structs.NamespacedID]string
	// classUnblocks and quotaUnblocks record the last capacity change per
	// computed class and per quota, for the missed-unblock check.
	classUnblocks map[string]unblockEvent
	quotaUnblocks map[string]unblockEvent
	// duplicates are evals that lost the one-per-job rule.
	duplicates  []*structs.Evaluation
	duplicateCh chan struct{}

	totalQuotaLimit int
	resources       *BlockedResourcesStats

	// stop and done bound the processing goroutine of the current term;
	// timerGen invalidates the periodic timers of earlier terms.
	stop        chan struct{}
	done        chan struct{}
	pruneTimer  clock.Timer
	failedTimer clock.Timer
	timerGen    uint64
}

// wrappedEval is a tracked eval and the token it was blocked with.
type wrappedEval struct {
	eval  *structs.Evaluation
	token string
}

// unblockEvent is the index and time of the last capacity change of a
// class or quota.
type unblockEvent struct {
	index uint64
	at    time.Time
}

// NewBlockedEvals returns a disabled tracker that releases evals into
// broker.
func NewBlockedEvals(broker EvalEnqueuer, cfg BlockedEvalsConfig) (*BlockedEvals, error) {
	if broker == nil {
		return nil, errors.New("blocked evals: a broker to release evals into is required")
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	b := &BlockedEvals{
		broker:         broker,
		clock:          cfg.Clock,
		logger:         cfg.Logger.Named("blocked_evals"),
		pruneInterval:  cfg.PruneInterval,
		pruneThreshold: cfg.PruneThreshold,
		failedInterval: cfg.FailedUnblockInterval,
		inboxSignal:    make(chan struct{}, 1),
		duplicateCh:    make(chan struct{}, 1),
	}
	b.resetLocked()
	return b, nil
}

func (b *BlockedEvals) resetLocked() {
	b.captured = make(map[string]wrappedEval)
	b.escaped = make(map[string]wrappedEval)
	b.system = newSystemBlockedIndex()
	b.jobs = make(map[structs.NamespacedID]string)
	b.classUnblocks = make(map[string]unblockEvent)
	b.quotaUnblocks = make(map[string]unblockEvent)
	b.duplicates = nil
	b.totalQuotaLimit = 0
	b.resources = newBlockedResourcesStats()
}

// Enabled reports whether the tracker is on.
func (b *BlockedEvals) Enabled() bool {
	return b.enabled.Load()
}

// SetEnabled turns the tracker on (leader, broker not paused) or off.
// Turning it on starts the processing goroutine and the periodic timers;
// turning it off stops them, waits for the goroutine to finish its batch,
// and forgets every tracked eval, duplicate and unblock record (Flush).
// The leader calls it from one goroutine.
func (b *BlockedEvals) SetEnabled(enabled bool) {
	b.mu.Lock()
	if b.on == enabled {
		b.mu.Unlock()
		return
	}
	b.on = enabled
	b.enabled.Store(enabled)
	if enabled {
		b.stop = make(chan struct{})
		b.done = make(chan struct{})
		go b.run(b.stop, b.done)
		b.timerGen++
		b.armPruneLocked(b.timerGen)
		b.armFailedLocked(b.timerGen)
		b.mu.Unlock()
		return
	}
	stop, done := b.stop, b.done
	b.timerGen++
	b.pruneTimer.Stop()
	b.failedTimer.Stop()
	b.mu.Unlock()

	close(stop)
	<-done
	b.Flush()
}

// Flush forgets everything the tracker holds, including calls not yet
// applied. SetEnabled(false) calls it.
func (b *BlockedEvals) Flush() {
	b.procMu.Lock()
	defer b.procMu.Unlock()
	b.inboxMu.Lock()
	clear(b.inbox)
	b.inbox = b.inbox[:0]
	b.inboxMu.Unlock()
	b.mu.Lock()
	b.resetLocked()
	b.mu.Unlock()
}

// Sync applies every call made so far before it returns, on the caller's
// goroutine, rather than waiting for the tracker's own goroutine to get to
// them. Releases reach the broker before Sync returns. It is for callers
// (tests, mostly) that need a settled view, as Stats right after Block.
func (b *BlockedEvals) Sync() {
	b.processInbox()
}

// run applies the inbox whenever it is signalled, until stop closes.
func (b *BlockedEvals) run(stop, done chan struct{}) {
	defer close(done)
	for {
		select {
		case <-stop:
			return
		case <-b.inboxSignal:
			b.processInbox()
		}
	}
}

// blockedOpKind names an FSM- or leader-facing call waiting in the inbox.
type blockedOpKind uint8

const (
	opBlock blockedOpKind = iota
	opUntrack
	opUnblock
	opUnblockNode
	opUnblockFailed
)

// blockedOp is one call waiting in the inbox.
type blockedOp struct {
	kind  blockedOpKind
	eval  *structs.Evaluation // opBlock
	token string              // opBlock
	job   structs.NamespacedID
	// class and quota of an opUnblock; "" means none.
	class, quota string
	nodeID       string // opUnblockNode
	index        uint64
	at           time.Time
}

// post appends op to the inbox and signals the processing goroutine. It
// never blocks beyond the append.
func (b *BlockedEvals) post(op blockedOp) {
	if !b.enabled.Load() {
		return
	}
	b.inboxMu.Lock()
	b.inbox = append(b.inbox, op)
	b.inboxMu.Unlock()
	select {
	case b.inboxSignal <- struct{}{}:
	default:
	}
}

// Block tracks a blocked eval written by the FSM until a capacity change
// releases it. Never blocks; applied asynchronously.
func (b *BlockedEvals) Block(eval *structs.Evaluation) {
	if eval != nil {
		b.post(blockedOp{kind: opBlock, eval: eval})
	}
}

// Reblock is Block for the eval a worker holds outstanding under token
// (the Eval.Reblock endpoint): if released while still outstanding, the
// broker holds it until that delivery is acked instead of dropping it as
// a duplicate.
func (b *BlockedEvals) Reblock(eval *structs.Evaluation, token string) {
	if eval != nil {
		b.post(blockedOp{kind: opBlock, eval: eval, token: token})
	}
}

// Untrack forgets the job's blocked eval; the FSM calls it when an eval of
// the job completes with nothing left to place, so the blocked one is moot.
func (b *BlockedEvals) Untrack(jobID, namespace string) {
	b.post(blockedOp{kind: opUntrack, job: structs.NamespacedID{ID: jobID, Namespace: namespace}})
}

// Unblock records a capacity change at Raft index in nodes of
// computedClass (a node became ready or eligible, or an alloc on it
// finished) and releases every escaped eval and every captured eval that
// did not mark the class ineligible.
func (b *BlockedEvals) Unblock(computedClass string, index uint64) {
	b.post(blockedOp{kind: opUnblock, class: computedClass, index: index, at: b.clock.Now()})
}

// UnblockQuota records a change of quota at index and releases the evals
// blocked on that quota. A "" quota is a no-op.
func (b *BlockedEvals) UnblockQuota(quota string, index uint64) {
	if quota == "" {
		return
	}
	b.post(blockedOp{kind: opUnblock, quota: quota, index: index, at: b.clock.Now()})
}

// UnblockClassAndQuota records a capacity change in class that also frees
// quota (an alloc finished). With quota "" it is Unblock. Otherwise, as in
// Nomad, it releases every escaped eval and the captured evals blocked on
// that quota whose class eligibility allows class.
func (b *BlockedEvals) UnblockClassAndQuota(class, quota string, index uint64) {
	b.post(blockedOp{kind: opUnblock, class: class, quota: quota, index: index, at: b.clock.Now()})
}

// UnblockNode releases the system-job evals blocked on nodeID.
func (b *BlockedEvals) UnblockNode(nodeID string, index uint64) {
	b.post(blockedOp{kind: opUnblockNode, nodeID: nodeID, index: index})
}

// UnblockFailed releases every eval blocked after its scheduler ran out
// of plan attempts (TriggeredBy "max-plan-attempts"): such evals may
// succeed on a retry without any capacity change. The tracker calls it
// every FailedUnblockInterval while enabled.
func (b *BlockedEvals) UnblockFailed() {
	b.post(blockedOp{kind: opUnblockFailed})
}

// GetDuplicates waits until at least one eval lost the one-per-job rule,
// then removes and returns all of them. It returns nil when timeout (on
// the tracker's clock; <= 0 waits without limit) passes or ctx ends first.
// The leader's reaper loops on it and writes each returned eval back,
// copied, with Status structs.EvalStatusCanceled and StatusDescription
// fmt.Sprintf(structs.EvalDescDuplicateBlock, eval.JobID).
func (b *BlockedEvals) GetDuplicates(ctx context.Context, timeout time.Duration) []*structs.Evaluation {
	var timeoutCh <-chan struct{}
	for {
		b.mu.Lock()
		if len(b.duplicates) > 0 {
			dups := b.duplicates
			b.duplicates = nil
			b.mu.Unlock()
			return dups
		}
		b.mu.Unlock()

		if timeout > 0 && timeoutCh == nil {
			ch := make(chan struct{})
			timeoutCh = ch
			t := b.clock.AfterFunc(timeout, func() { close(ch) })
			defer t.Stop()
		}
		select {
		case <-b.duplicateCh:
		case <-timeoutCh:
			return nil
		case <-ctx.Done():
			return nil
		}
	}
}

// processInbox applies every call posted so far, then hands the released
// evals to the broker. When it returns, every call posted before it was
// called has been applied, whichever goroutine applied it.
func (b *BlockedEvals) processInbox() {
	b.procMu.Lock()
	defer b.procMu.Unlock()

	b.inboxMu.Lock()
	ops := b.inbox
	b.inbox = b.spare[:0]
	b.inboxMu.Unlock()
	if len(ops) == 0 {
		b.spare = ops
		return
	}

	released := b.apply(ops)
	clear(ops)
	b.spare = ops[:0]
	if len(released) > 0 {
		b.broker.EnqueueAll(released)
	}
}

func (b *BlockedEvals) armPruneLocked(gen uint64) {
	b.pruneTimer = b.clock.AfterFunc(b.pruneInterval, func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		if gen != b.timerGen {
			return
		}
		b.pruneLocked(b.clock.Now().Add(-b.pruneThreshold))
		b.armPruneLocked(gen)
	})
}

func (b *BlockedEvals) armFailedLocked(gen uint64) {
	b.failedTimer = b.clock.AfterFunc(b.failedInterval, func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		if gen != b.timerGen {
			return
		}
		b.UnblockFailed()
		b.armFailedLocked(gen)
	})
}
