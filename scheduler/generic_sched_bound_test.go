package scheduler

import (
	"math"
	"testing"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// A pass asks to place at most MaxPlacementsPerPass new allocs of a group,
// whatever count the job asks for: the rest stay queued, explained either
// by the group's blocked eval (no room) or by a continuation eval (room,
// but more than one pass places).
func TestServiceCountBeyondOnePass(t *testing.T) {
	cases := []struct {
		name  string
		nodes int
		count int
		bound int
		// what the first pass leaves
		// placed -1: not checked beyond placed+queued == count
		placed, queued        int
		continuation, blocked bool
	}{
		{name: "count within the bound: one pass, nothing left",
			nodes: 5, count: 8, bound: 10, placed: 8},
		{name: "room for all: the bound's worth now, a continuation for the rest",
			nodes: 10, count: 25, bound: 10, placed: 10, queued: 15, continuation: true},
		{name: "no room for the rest: blocked, the deferred counted as coalesced failures",
			// a default node holds 8 allocs of the default group
			nodes: 1, count: 30, bound: 10, placed: 8, queued: 22, blocked: true},
		{name: "count of 2^31-1 on a small cluster: bounded, blocked",
			nodes: 1, count: math.MaxInt32, bound: 0, placed: -1, blocked: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := NewHarness(t)
			h.MaxPlacementsPerPass = tc.bound
			addNodes(h, tc.nodes)
			job := mock.Job(mock.Count(10), mock.NoPorts())
			job.TaskGroups[0].Count = tc.count
			h.UpsertJob(job)
			eval := mock.Eval(mock.EvalForJob(job), mock.TriggeredBy(structs.EvalTriggerJobRegister))
			if err := h.Process(eval); err != nil {
				t.Fatal(err)
			}
			placed := len(h.liveAllocs(job))
			e := h.lastEval(t)
			if e.Status != structs.EvalStatusComplete {
				t.Fatalf("eval status %q: %s", e.Status, e.StatusDescription)
			}
			queued := e.QueuedAllocations["web"]
			if placed+queued != tc.count {
				t.Fatalf("placed %d + queued %d != count %d", placed, queued, tc.count)
			}
			if tc.placed >= 0 && (placed != tc.placed || queued != tc.queued) {
				t.Fatalf("placed %d queued %d, want %d and %d", placed, queued, tc.placed, tc.queued)
			}
			var continuation, blocked *structs.Evaluation
			for _, c := range h.Created {
				switch c.Status {
				case structs.EvalStatusPending:
					continuation = c
				case structs.EvalStatusBlocked:
					blocked = c
				}
			}
			if (continuation != nil) != tc.continuation || (blocked != nil) != tc.blocked {
				t.Fatalf("continuation %v blocked %v, want %v and %v", continuation, blocked, tc.continuation, tc.blocked)
			}
			if continuation != nil {
				if continuation.TriggeredBy != structs.EvalTriggerQueuedAllocs || e.NextEval != continuation.ID ||
					continuation.PreviousEval != eval.ID {
					t.Fatalf("continuation %+v, eval's next %q", continuation, e.NextEval)
				}
			}
			if blocked != nil {
				m := e.FailedTGAllocs["web"]
				if m == nil {
					t.Fatal("no failure metric for the group")
				}
				// Every queued alloc is explained: the one that failed and
				// the rest coalesced into it.
				if m.CoalescedFailures+1 != queued {
					t.Fatalf("coalesced %d, queued %d", m.CoalescedFailures, queued)
				}
			}
		})
	}
}

// Continuation evals run one after the other place the whole count.
func TestServiceCountPlacedByContinuations(t *testing.T) {
	h := NewHarness(t)
	h.MaxPlacementsPerPass = 7
	addNodes(h, 10)
	job := mock.Job(mock.Count(10), mock.NoPorts())
	job.TaskGroups[0].Count = 30
	h.UpsertJob(job)
	eval := mock.Eval(mock.EvalForJob(job), mock.TriggeredBy(structs.EvalTriggerJobRegister))
	passes := 0
	for eval != nil {
		passes++
		created := len(h.Created)
		if err := h.Process(eval); err != nil {
			t.Fatal(err)
		}
		eval = nil
		if len(h.Created) > created {
			eval = h.Created[len(h.Created)-1]
		}
		if passes > 10 {
			t.Fatal("continuations never end")
		}
	}
	if placed := len(h.liveAllocs(job)); placed != 30 || passes != 5 {
		t.Fatalf("placed %d in %d passes, want 30 in 5", placed, passes)
	}
	if e := h.lastEval(t); e.QueuedAllocations["web"] != 0 || e.NextEval != "" {
		t.Fatalf("last eval %+v", e)
	}
}
