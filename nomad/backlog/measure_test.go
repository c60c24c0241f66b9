package backlog

import (
	"testing"
	"time"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// memStore is the in-memory Store of the tests. It answers every
// question by a scan of all it holds, as Measure did before the state
// store kept the totals: it is also the reference the store's answers
// are checked against.
type memStore struct {
	summaries []*structs.JobSummary
	evals     map[string]*structs.Evaluation
}

func (m *memStore) BacklogCounts() (state.BacklogCounts, error) {
	var c state.BacklogCounts
	for _, s := range m.summaries {
		for _, tg := range s.Summary {
			c.Queued += tg.Queued
			c.Starting += tg.Starting
		}
	}
	for _, e := range m.evals {
		if pendingNow(e) {
			c.Pending++
		}
	}
	return c, nil
}

// pendingNow reports whether e is pending, not delayed and not the core
// scheduler's.
func pendingNow(e *structs.Evaluation) bool {
	return e.Status == structs.EvalStatusPending && e.Type != structs.JobTypeCore && e.WaitUntil.IsZero()
}

func (m *memStore) OldestPendingEval() (*structs.Evaluation, error) {
	var oldest *structs.Evaluation
	for _, e := range m.evals {
		if !pendingNow(e) || e.CreateTime <= 0 {
			continue
		}
		if oldest == nil || e.CreateTime < oldest.CreateTime {
			oldest = e
		}
	}
	return oldest, nil
}

func (m *memStore) DelayedEvals() ([]*structs.Evaluation, error) {
	var out []*structs.Evaluation
	for _, e := range m.evals {
		if e.Status == structs.EvalStatusPending && e.Type != structs.JobTypeCore && !e.WaitUntil.IsZero() {
			out = append(out, e)
		}
	}
	return out, nil
}

func (m *memStore) EvalsByStatus(_ memdb.WatchSet, status string) ([]*structs.Evaluation, error) {
	var out []*structs.Evaluation
	for _, e := range m.evals {
		if e.Status == status {
			out = append(out, e)
		}
	}
	return out, nil
}

func (m *memStore) EvalByID(_ memdb.WatchSet, id string) (*structs.Evaluation, error) {
	return m.evals[id], nil
}

var t0 = time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)

// at is t0 plus s seconds, as an eval's CreateTime.
func at(s int) int64 { return t0.Add(time.Duration(s) * time.Second).UnixNano() }

func summary(job string, queued, starting int) *structs.JobSummary {
	return &structs.JobSummary{JobID: job, Namespace: "default",
		Summary: map[string]structs.TaskGroupSummary{"web": {Queued: queued, Starting: starting}}}
}

func eval(id, job, status string, created int64, prev string) *structs.Evaluation {
	return &structs.Evaluation{ID: id, JobID: job, Namespace: "default", Type: structs.JobTypeService,
		Status: status, CreateTime: created, PreviousEval: prev}
}

func blockedOn(e *structs.Evaluation, queued int, m *structs.AllocMetric) *structs.Evaluation {
	e.FailedTGAllocs = map[string]*structs.AllocMetric{"web": m}
	e.QueuedAllocations = map[string]int{"web": queued}
	return e
}

func store(summaries []*structs.JobSummary, evals ...*structs.Evaluation) *memStore {
	m := &memStore{summaries: summaries, evals: map[string]*structs.Evaluation{}}
	for _, e := range evals {
		m.evals[e.ID] = e
	}
	return m
}

func TestReason(t *testing.T) {
	cases := []struct {
		name string
		m    *structs.AllocMetric
		want string
	}{
		{"no metric", nil, ReasonOther},
		{"no node evaluated, filtered or exhausted", &structs.AllocMetric{}, ReasonNoNodes},
		{"every node filtered", &structs.AllocMetric{NodesEvaluated: 3, NodesFiltered: 3}, ReasonConstraints},
		{"memory on 2 nodes beats cpu on 1", &structs.AllocMetric{NodesEvaluated: 3, NodesExhausted: 3,
			DimensionExhausted: map[string]int{"memory": 2, "cpu": 1}}, ReasonExhaustedMemory},
		{"a tie goes to the first name: cpu < memory", &structs.AllocMetric{NodesEvaluated: 2, NodesExhausted: 2,
			DimensionExhausted: map[string]int{"memory": 1, "cpu": 1}}, ReasonExhaustedCPU},
		{"network problems by their prefix", &structs.AllocMetric{NodesEvaluated: 1, NodesExhausted: 1,
			DimensionExhausted: map[string]int{"network: reserved port collision": 1}}, ReasonExhaustedNetwork},
		{"an unknown dimension", &structs.AllocMetric{NodesEvaluated: 1, NodesExhausted: 1,
			DimensionExhausted: map[string]int{"quota": 1}}, ReasonOther},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			must.Eq(t, c.want, Reason(c.m))
		})
	}
}

func TestMeasure(t *testing.T) {
	now := t0.Add(100 * time.Second)
	memory := &structs.AllocMetric{NodesEvaluated: 2, NodesExhausted: 2, DimensionExhausted: map[string]int{"memory": 2}}
	filtered := &structs.AllocMetric{NodesEvaluated: 2, NodesFiltered: 2, CoalescedFailures: 1}

	cases := []struct {
		name  string
		store *memStore
		want  Backlog
	}{
		{
			name:  "an idle cluster",
			store: store(nil),
			want:  Backlog{QueuedByReason: map[string]int{}, Evals: map[string]Stage{}},
		},
		{
			// 5 queued for memory since the register eval at t0+10 (the
			// chain: register -> blocked at 40 -> re-blocked at 70).
			name: "a wait is measured from the start of its chain",
			store: store([]*structs.JobSummary{summary("big", 5, 0)},
				eval("reg", "big", structs.EvalStatusComplete, at(10), ""),
				eval("b1", "big", structs.EvalStatusComplete, at(40), "reg"),
				blockedOn(eval("b2", "big", structs.EvalStatusBlocked, at(70), "b1"), 5, memory)),
			want: Backlog{
				QueuedAllocs:   5,
				QueuedByReason: map[string]int{ReasonExhaustedMemory: 5},
				LongestWait:    90 * time.Second, // 100 - 10
				Evals:          map[string]Stage{StageBlocked: {Count: 1, Oldest: 30 * time.Second}},
			},
		},
		{
			// Without QueuedAllocations the failures coalesced into the
			// metric count: 1 + 1. 3 more queued are explained by no
			// blocked eval: not yet evaluated.
			name: "queued beyond what blocked evals explain",
			store: store([]*structs.JobSummary{summary("c", 5, 2)},
				blockedOn(eval("b", "c", structs.EvalStatusBlocked, at(90), ""), 0, filtered)),
			want: Backlog{
				QueuedAllocs:     5,
				QueuedByReason:   map[string]int{ReasonConstraints: 2, ReasonNotYetEvaluated: 3},
				LongestWait:      10 * time.Second,
				PlacedNotRunning: 2,
				Evals:            map[string]Stage{StageBlocked: {Count: 1, Oldest: 10 * time.Second}},
			},
		},
		{
			// A pending eval written at t0+20 has waited 80 s; a delayed
			// one is not waiting to be placed yet; core evals are not
			// the users'.
			name: "pending, delayed and core evaluations",
			store: func() *memStore {
				delayed := eval("d", "x", structs.EvalStatusPending, at(0), "")
				delayed.WaitUntil = now.Add(time.Minute)
				core := eval("gc", "job-gc", structs.EvalStatusPending, at(0), "")
				core.Type = structs.JobTypeCore
				return store(nil, eval("p", "y", structs.EvalStatusPending, at(20), ""), delayed, core)
			}(),
			want: Backlog{
				QueuedByReason: map[string]int{},
				LongestWait:    80 * time.Second,
				Evals: map[string]Stage{
					StagePending: {Count: 1, Oldest: 80 * time.Second},
					StageDelayed: {Count: 1, Oldest: 100 * time.Second},
				},
			},
		},
		{
			// A previous eval of another job (a bad link) ends the walk.
			name: "a chain stops at another job's eval",
			store: store([]*structs.JobSummary{summary("a", 1, 0)},
				eval("other", "b", structs.EvalStatusComplete, at(0), ""),
				blockedOn(eval("blk", "a", structs.EvalStatusBlocked, at(50), "other"), 1, memory)),
			want: Backlog{
				QueuedAllocs:   1,
				QueuedByReason: map[string]int{ReasonExhaustedMemory: 1},
				LongestWait:    50 * time.Second,
				Evals:          map[string]Stage{StageBlocked: {Count: 1, Oldest: 50 * time.Second}},
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Measure(c.store, now)
			must.NoError(t, err)
			must.Eq(t, c.want, *got)
		})
	}
}
