package scheduler

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// TestPlanEvalIsSetStatusEval: the eval a plan carries is, field for
// field, the one the scheduler writes through UpdateEval after that plan
// commits whole (the harness plays an older leader, which ignores the
// plan's eval, so both are made); and a plan after which Process has more
// to do carries none.
func TestPlanEvalIsSetStatusEval(t *testing.T) {
	register := structs.EvalTriggerJobRegister
	cases := []struct {
		name  string
		setup func(h *Harness) *structs.Evaluation
		// folds: the last plan carries the eval.
		folds bool
	}{
		{name: "service placements, annotated", folds: true, setup: func(h *Harness) *structs.Evaluation {
			addNodes(h, 4)
			job := mock.Job(mock.Count(3), mock.NoPorts())
			h.UpsertJob(job)
			e := mock.Eval(mock.EvalForJob(job), mock.TriggeredBy(register))
			e.AnnotatePlan = true
			return e
		}},
		{name: "service with failed placements and a blocked eval", folds: true, setup: func(h *Harness) *structs.Evaluation {
			h.UpsertNode(mock.Node(mock.Unreserved(), mock.CPUShares(1000)))
			job := mock.Job(mock.Count(3), mock.NoPorts())
			job.TaskGroups[0].Tasks[0].Resources.CPU = 600
			h.UpsertJob(job)
			return mock.Eval(mock.EvalForJob(job), mock.TriggeredBy(register))
		}},
		{name: "batch placements", folds: true, setup: func(h *Harness) *structs.Evaluation {
			addNodes(h, 2)
			job := mock.BatchJob(mock.Count(2), mock.NoPorts())
			h.UpsertJob(job)
			return mock.Eval(mock.EvalForJob(job), mock.TriggeredBy(register))
		}},
		{name: "service stopped", folds: true, setup: func(h *Harness) *structs.Evaluation {
			nodes := addNodes(h, 1)
			job := mock.Job(mock.Count(1), mock.NoPorts())
			h.UpsertJob(job)
			h.UpsertAllocs(mock.Alloc(mock.ForJob(job, 0), mock.OnNode(nodes[0]), mock.ClientStatus(structs.AllocClientStatusRunning)))
			stopped := job.Copy()
			stopped.Stop = true
			h.UpsertJob(stopped)
			return mock.Eval(mock.EvalForJob(job), mock.TriggeredBy(structs.EvalTriggerJobDeregister))
		}},
		{name: "system placements", folds: true, setup: func(h *Harness) *structs.Evaluation {
			addNodes(h, 3)
			job := mock.SystemJob(mock.GroupName("web"))
			h.UpsertJob(job)
			return mock.Eval(mock.EvalForJob(job), mock.TriggeredBy(register))
		}},
		{name: "system with a node short of room: blocked evals come after", setup: func(h *Harness) *structs.Evaluation {
			h.UpsertNode(mock.Node(mock.Unreserved()), mock.Node(mock.Unreserved(), mock.CPUShares(200)))
			job := mock.SystemJob(mock.GroupName("web"))
			h.UpsertJob(job)
			return mock.Eval(mock.EvalForJob(job), mock.TriggeredBy(register))
		}},
		{name: "service beyond the pass bound: a continuation eval comes after", setup: func(h *Harness) *structs.Evaluation {
			h.MaxPlacementsPerPass = 2
			addNodes(h, 4)
			job := mock.Job(mock.Count(5), mock.NoPorts())
			h.UpsertJob(job)
			return mock.Eval(mock.EvalForJob(job), mock.TriggeredBy(register))
		}},
		{name: "blocked eval still short of room: it is put back", setup: func(h *Harness) *structs.Evaluation {
			h.UpsertNode(mock.Node(mock.Unreserved(), mock.CPUShares(1000)))
			job := mock.Job(mock.Count(3), mock.NoPorts())
			h.UpsertJob(job)
			e := mock.Eval(mock.EvalForJob(job), mock.TriggeredBy(structs.EvalTriggerQueuedAllocs))
			e.Status = structs.EvalStatusBlocked
			return e
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := NewHarness(t)
			h.OldLeader = true
			must.NoError(t, h.Process(c.setup(h)))
			must.SliceNotEmpty(t, h.Plans)
			planned := h.Plans[len(h.Plans)-1].Eval
			for _, r := range h.Results {
				must.False(t, r.EvalWritten)
			}
			if !c.folds {
				must.Nil(t, planned)
				return
			}
			must.NotNil(t, planned)
			written := h.lastEval(t).Copy()
			// The store stamped its indexes on what UpdateEval wrote; it
			// stamps its own on the plan's eval too.
			written.CreateIndex, written.ModifyIndex = planned.CreateIndex, planned.ModifyIndex
			must.Eq(t, written, planned)
			must.Eq(t, structs.EvalStatusComplete, planned.Status)
		})
	}
}

// TestPlanEvalWrittenWithPlan: when the leader writes the eval with a
// plan that committed whole, the scheduler writes nothing more; a plan
// committed in part leaves the eval to the next plan, and the eval is
// stored as UpdateEval would have written it.
func TestPlanEvalWrittenWithPlan(t *testing.T) {
	cases := []struct {
		name string
		// rejectFirst refuses a node of the first plan.
		rejectFirst bool
	}{
		{name: "whole commit"},
		{name: "partial commit, then a whole one", rejectFirst: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := NewHarness(t)
			addNodes(h, 4)
			job := mock.Job(mock.Count(4), mock.NoPorts())
			h.UpsertJob(job)
			if c.rejectFirst {
				h.Reject = func(n int, plan *structs.Plan) []string {
					if n == 0 {
						return plan.NodeIDs()[:1]
					}
					return nil
				}
			}
			eval := mock.Eval(mock.EvalForJob(job), mock.TriggeredBy(structs.EvalTriggerJobRegister))
			must.NoError(t, h.Process(eval))

			last := len(h.Results) - 1
			for i, r := range h.Results {
				must.NotNil(t, h.Plans[i].Eval, must.Sprintf("plan %d carries the eval", i))
				must.Eq(t, i == last, r.EvalWritten, must.Sprintf("result %d", i))
			}
			if c.rejectFirst {
				must.Len(t, 2, h.Results)
			}
			must.Len(t, 1, h.Folded)
			must.Eq(t, h.Folded, h.Updated, must.Sprint("no UpdateEval after the fold"))
			stored, err := h.Snapshot().EvalByID(eval.ID)
			must.NoError(t, err)
			must.Eq(t, structs.EvalStatusComplete, stored.Status)
			must.Eq(t, 0, stored.QueuedAllocations["web"])
			must.Eq(t, h.Results[last].AllocIndex, stored.ModifyIndex)
			must.Len(t, 4, h.liveAllocs(job))
		})
	}
}
