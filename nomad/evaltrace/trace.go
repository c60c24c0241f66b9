package evaltrace

import (
	"sync"
	"time"
)

// Stages of an evaluation's life as the leader sees them.
const (
	StageEnqueued      = "enqueued"       // ready in the broker
	StageDequeued      = "dequeued"       // handed to a worker (Detail: its ID)
	StagePlanSubmitted = "plan submitted" // Detail: what the plan asks
	StagePlanApplied   = "plan applied"   // Detail: the Raft index, or what was refused
	StagePlanFailed    = "plan failed"    // Detail: the error
	StageBlocked       = "blocked"        // written blocked, waiting for capacity
	StageAcked         = "acked"          // the worker is done
	StageNacked        = "nacked"         // given back; it will be redelivered
)

// Event is one stage passed.
type Event struct {
	Time   time.Time
	Stage  string
	Detail string
}

// DefaultEvals and DefaultEventsPerEval bound a Trace's memory: about 200
// bytes an event, so at most some tens of megabytes.
const (
	DefaultEvals         = 20000
	DefaultEventsPerEval = 32
)

// Trace records events by evaluation ID. Once it holds maxEvals
// evaluations, recording a new one forgets the oldest; an evaluation's
// events past maxEvents keep only the newest (an eval nacked over and
// over keeps its latest story). It is safe for concurrent use.
type Trace struct {
	now       func() time.Time
	maxEvals  int
	maxEvents int

	mu     sync.Mutex
	events map[string][]Event
	// order is a ring of the evaluation IDs in the order first seen.
	order []string
	next  int
}

// New returns an empty Trace; now tells the time of each event.
func New(maxEvals, maxEvents int, now func() time.Time) *Trace {
	return &Trace{now: now, maxEvals: max(maxEvals, 1), maxEvents: max(maxEvents, 1),
		events: map[string][]Event{}, order: make([]string, 0, min(maxEvals, 1024))}
}

// Record notes that evalID passed stage now.
func (t *Trace) Record(evalID, stage, detail string) {
	if t == nil || evalID == "" {
		return
	}
	e := Event{Time: t.now(), Stage: stage, Detail: detail}
	t.mu.Lock()
	defer t.mu.Unlock()
	list, seen := t.events[evalID]
	if !seen {
		t.remember(evalID)
	}
	if len(list) >= t.maxEvents {
		list = append(list[:0:0], list[len(list)-t.maxEvents+1:]...)
	}
	t.events[evalID] = append(list, e)
}

// remember puts a new ID in the ring, forgetting the oldest when full.
func (t *Trace) remember(id string) {
	if len(t.order) < t.maxEvals {
		t.order = append(t.order, id)
		return
	}
	delete(t.events, t.order[t.next])
	t.order[t.next] = id
	t.next = (t.next + 1) % t.maxEvals
}

// Events returns a copy of evalID's events, oldest first; nil when the
// trace holds none (never seen by this leader, or forgotten).
func (t *Trace) Events(evalID string) []Event {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	list := t.events[evalID]
	if list == nil {
		return nil
	}
	return append([]Event(nil), list...)
}

// Len returns how many evaluations the trace holds.
func (t *Trace) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.events)
}
