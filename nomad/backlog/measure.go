package backlog

import (
	"strings"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// Store is the read-only part of the state store Measure needs. The
// store keeps the totals as it applies writes, so that a measurement
// reads the blocked and delayed evaluations only, not every job and
// every pending evaluation.
type Store interface {
	// BacklogCounts returns the summaries' Queued and Starting totals and
	// the count of pending evaluations that are neither delayed nor the
	// core scheduler's.
	BacklogCounts() (state.BacklogCounts, error)
	// OldestPendingEval returns the oldest of those pending evaluations,
	// nil when there is none.
	OldestPendingEval() (*structs.Evaluation, error)
	// DelayedEvals returns the pending evaluations with a WaitUntil, the
	// core scheduler's excepted.
	DelayedEvals() ([]*structs.Evaluation, error)
	// EvalsByStatus returns the evaluations with the given status.
	EvalsByStatus(ws memdb.WatchSet, status string) ([]*structs.Evaluation, error)
	// EvalByID returns one evaluation, nil when there is none.
	EvalByID(ws memdb.WatchSet, id string) (*structs.Evaluation, error)
}

// Why allocations are queued. A blocked evaluation explains its queued
// allocations per group by its failed placement's metric; what no blocked
// evaluation explains has not been through a scheduler yet.
const (
	ReasonNoNodes          = "no_nodes"
	ReasonConstraints      = "constraints"
	ReasonExhaustedCPU     = "exhausted_cpu"
	ReasonExhaustedCores   = "exhausted_cores"
	ReasonExhaustedMemory  = "exhausted_memory"
	ReasonExhaustedDisk    = "exhausted_disk"
	ReasonExhaustedNetwork = "exhausted_network"
	ReasonExhaustedDevices = "exhausted_devices"
	ReasonOther            = "other"
	ReasonNotYetEvaluated  = "not_yet_evaluated"
)

// Reasons lists every reason, so that a gauge is published (as 0) for
// one that no allocation has right now instead of keeping a stale value.
var Reasons = []string{
	ReasonNoNodes, ReasonConstraints, ReasonExhaustedCPU, ReasonExhaustedCores,
	ReasonExhaustedMemory, ReasonExhaustedDisk, ReasonExhaustedNetwork,
	ReasonExhaustedDevices, ReasonOther, ReasonNotYetEvaluated,
}

// Evaluation stages measured from the state store. The broker's ready
// and unacked queues are published by the broker itself.
const (
	StagePending = "pending" // written, waiting for the broker or a worker
	StageDelayed = "delayed" // pending with a WaitUntil in the future
	StageBlocked = "blocked" // waiting for capacity or a change
)

// Stages lists every stage.
var Stages = []string{StagePending, StageDelayed, StageBlocked}

// Stage counts the evaluations at one stage and the age of the oldest.
type Stage struct {
	Count  int
	Oldest time.Duration
}

// Backlog is one measurement.
type Backlog struct {
	// QueuedAllocs is the sum of the job summaries' queued counts.
	QueuedAllocs int
	// QueuedByReason splits QueuedAllocs by why they wait.
	QueuedByReason map[string]int
	// LongestWait is how long the allocations that have waited longest
	// have been waiting to be placed: since the first evaluation of the
	// chain that ends in a blocked evaluation, or since a pending
	// evaluation was written.
	LongestWait time.Duration
	// PlacedNotRunning counts allocations placed on a node whose tasks
	// have not all started (the summaries' Starting).
	PlacedNotRunning int
	// Evals holds each stage of StageXxx.
	Evals map[string]Stage
}

// maxChain bounds the walk back along an evaluation's PreviousEval links.
const maxChain = 64

// Measure reads the backlog from store as of now.
func Measure(store Store, now time.Time) (*Backlog, error) {
	b := &Backlog{QueuedByReason: map[string]int{}, Evals: map[string]Stage{}}
	counts, err := store.BacklogCounts()
	if err != nil {
		return nil, err
	}
	b.QueuedAllocs = counts.Queued
	b.PlacedNotRunning = counts.Starting

	blocked, err := store.EvalsByStatus(nil, structs.EvalStatusBlocked)
	if err != nil {
		return nil, err
	}
	explained := 0
	for _, e := range blocked {
		b.Evals[StageBlocked] = older(b.Evals[StageBlocked], now, e.CreateTime)
		queued := 0
		for tg, m := range e.FailedTGAllocs {
			n := e.QueuedAllocations[tg]
			if n <= 0 && m != nil {
				n = m.CoalescedFailures + 1
			}
			b.QueuedByReason[Reason(m)] += n
			queued += n
		}
		explained += queued
		if queued > 0 {
			since, err := chainStart(store, e)
			if err != nil {
				return nil, err
			}
			b.LongestWait = max(b.LongestWait, age(now, since))
		}
	}
	if rest := b.QueuedAllocs - explained; rest > 0 {
		b.QueuedByReason[ReasonNotYetEvaluated] += rest
	}

	if counts.Pending > 0 {
		oldest, err := store.OldestPendingEval()
		if err != nil {
			return nil, err
		}
		st := Stage{Count: counts.Pending}
		if oldest != nil {
			st.Oldest = age(now, oldest.CreateTime)
		}
		b.Evals[StagePending] = st
		b.LongestWait = max(b.LongestWait, st.Oldest)
	}
	delayed, err := store.DelayedEvals()
	if err != nil {
		return nil, err
	}
	for _, e := range delayed {
		if e.WaitUntil.After(now) {
			b.Evals[StageDelayed] = older(b.Evals[StageDelayed], now, e.CreateTime)
			continue
		}
		b.Evals[StagePending] = older(b.Evals[StagePending], now, e.CreateTime)
		b.LongestWait = max(b.LongestWait, age(now, e.CreateTime))
	}
	return b, nil
}

// Reason names why the placements a metric describes failed: no node to
// try, every node filtered out, or the dimension most nodes lacked.
func Reason(m *structs.AllocMetric) string {
	if m == nil {
		return ReasonOther
	}
	if m.NodesEvaluated == 0 && m.NodesFiltered == 0 && m.NodesExhausted == 0 {
		return ReasonNoNodes
	}
	if m.NodesExhausted == 0 {
		if m.NodesFiltered > 0 {
			return ReasonConstraints
		}
		return ReasonOther
	}
	top, most := "", 0
	for dim, n := range m.DimensionExhausted {
		// Ties go to the name that sorts first, so the answer is stable.
		if n > most || (n == most && dim < top) {
			top, most = dim, n
		}
	}
	return exhaustedReason(top)
}

// exhaustedReason maps a dimension ("memory", "network: port collision")
// to its reason.
func exhaustedReason(dim string) string {
	head, _, _ := strings.Cut(dim, ":")
	switch strings.TrimSpace(head) {
	case structs.DimensionCPU:
		return ReasonExhaustedCPU
	case structs.DimensionCores:
		return ReasonExhaustedCores
	case structs.DimensionMemory, "memory max":
		return ReasonExhaustedMemory
	case structs.DimensionDisk:
		return ReasonExhaustedDisk
	case structs.DimensionNetwork:
		return ReasonExhaustedNetwork
	case "devices", "device":
		return ReasonExhaustedDevices
	}
	return ReasonOther
}

// chainStart follows e's PreviousEval links back to the evaluation that
// started the wait and returns its creation time (unix nanoseconds).
// Collected evaluations end the walk early: the wait is then measured
// from the oldest one still stored.
func chainStart(store Store, e *structs.Evaluation) (int64, error) {
	start := e.CreateTime
	for i := 0; i < maxChain && e.PreviousEval != ""; i++ {
		prev, err := store.EvalByID(nil, e.PreviousEval)
		if err != nil {
			return 0, err
		}
		if prev == nil || prev.JobID != e.JobID || prev.Namespace != e.Namespace {
			break
		}
		if prev.CreateTime != 0 && prev.CreateTime < start {
			start = prev.CreateTime
		}
		e = prev
	}
	return start, nil
}

func older(s Stage, now time.Time, created int64) Stage {
	s.Count++
	s.Oldest = max(s.Oldest, age(now, created))
	return s
}

// age is how long ago created (unix nanoseconds) was; 0 when unknown or
// in the future (another server's clock).
func age(now time.Time, created int64) time.Duration {
	if created <= 0 {
		return 0
	}
	return max(now.Sub(time.Unix(0, created)), 0)
}
