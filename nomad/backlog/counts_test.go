package backlog

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// scanned copies everything Measure could read from s into a memStore,
// whose answers come from a full scan.
func scanned(t *testing.T, s *state.StateStore) *memStore {
	t.Helper()
	summaries, err := s.JobSummaries(nil)
	must.NoError(t, err)
	evals, err := s.Evals(nil, structs.AllNamespaces)
	must.NoError(t, err)
	return store(summaries, evals...)
}

// sameAsScan checks that the store's kept totals measure what a full
// scan of it measures, at several times (delayed evals change stage as
// time passes).
func sameAsScan(t *testing.T, s *state.StateStore, step int) {
	t.Helper()
	ref := scanned(t, s)
	for _, now := range []time.Time{t0, t0.Add(30 * time.Second), t0.Add(time.Hour)} {
		want, err := Measure(ref, now)
		must.NoError(t, err)
		got, err := Measure(s, now)
		must.NoError(t, err)
		must.Eq(t, *want, *got, must.Sprintf("step %d, at %s", step, now))
	}
}

// TestMeasure_CountsMatchScan applies random writes of every kind that
// moves a total (jobs registered and purged, evals written, rewritten,
// cancelled and collected, allocs placed and reported, summaries
// reconciled, several of them in one transaction) and checks after each
// that the totals the store keeps measure the same backlog as a scan;
// and at the end for a snapshot taken halfway, and for the store
// persisted and restored, which recounts.
func TestMeasure_CountsMatchScan(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			randomWrites(t, rand.New(rand.NewPCG(seed, seed)), 400)
		})
	}
}

func randomWrites(t *testing.T, r *rand.Rand, steps int) {
	s, err := state.NewStateStore(nil)
	must.NoError(t, err)
	node := mock.Node()
	index := uint64(1)
	must.NoError(t, s.WithWriteTxn(index, func(tx *state.Txn) error { return tx.UpsertNode(node) }))

	var (
		jobs   []*structs.Job
		evals  []*structs.Evaluation
		allocs []*structs.Allocation
	)
	pick := func(n int) int { return r.IntN(n) }
	memory := &structs.AllocMetric{NodesEvaluated: 1, NodesExhausted: 1, DimensionExhausted: map[string]int{"memory": 1}}

	newEval := func(j *structs.Job) *structs.Evaluation {
		e := mock.Eval(mock.EvalForJob(j))
		e.CreateTime = at(pick(60) - 5)
		if pick(8) == 0 {
			e.CreateTime = 0
		}
		return e
	}
	// setStatus gives e a random status with what goes with it.
	setStatus := func(e *structs.Evaluation, j *structs.Job) {
		e.Status = []string{structs.EvalStatusPending, structs.EvalStatusPending, structs.EvalStatusBlocked,
			structs.EvalStatusComplete, structs.EvalStatusFailed}[pick(5)]
		e.Type = structs.JobTypeService
		if pick(10) == 0 {
			e.Type = structs.JobTypeCore
		}
		e.WaitUntil = time.Time{}
		if pick(4) == 0 {
			e.WaitUntil = t0.Add(time.Duration(pick(120)-30) * time.Second)
		}
		e.FailedTGAllocs, e.QueuedAllocations = nil, nil
		if pick(2) == 0 {
			e.QueuedAllocations = map[string]int{j.TaskGroups[0].Name: pick(4)}
		}
		if e.Status == structs.EvalStatusBlocked || pick(6) == 0 {
			e.FailedTGAllocs = map[string]*structs.AllocMetric{j.TaskGroups[0].Name: memory}
		}
	}

	write := func(tx *state.Txn) error {
		switch op := pick(10); {
		case op == 0 || len(jobs) == 0:
			j := mock.Job(mock.Count(1 + pick(3)))
			jobs = append(jobs, j)
			return tx.UpsertJob(j)
		case op <= 3:
			j := jobs[pick(len(jobs))]
			e := newEval(j)
			if len(evals) > 0 && pick(2) == 0 {
				c := *evals[pick(len(evals))] // a rewrite of a known eval
				e = &c
				if job, _ := tx.JobByID(e.Namespace, e.JobID); job != nil {
					j = job
				}
			}
			setStatus(e, j)
			evals = append(evals, e)
			return tx.UpsertEvals([]*structs.Evaluation{e})
		case op <= 5:
			j, err := tx.JobByID(jobs[pick(len(jobs))].Namespace, jobs[pick(len(jobs))].ID)
			if err != nil || j == nil {
				return err
			}
			a := mock.SizedAlloc(j, node, 1, 1)
			allocs = append(allocs, a)
			return tx.UpsertAllocs([]*structs.Allocation{a})
		case op == 6 && len(allocs) > 0:
			stored, err := tx.AllocByID(allocs[pick(len(allocs))].ID)
			if err != nil || stored == nil {
				return err
			}
			c := stored.Copy()
			c.ClientStatus = []string{structs.AllocClientStatusRunning, structs.AllocClientStatusComplete,
				structs.AllocClientStatusFailed, structs.AllocClientStatusPending}[pick(4)]
			return tx.UpdateAllocsFromClient([]*structs.Allocation{c})
		case op == 7 && len(evals) > 0:
			ids := []string{evals[pick(len(evals))].ID}
			var allocIDs []string
			if len(allocs) > 0 {
				allocIDs = []string{allocs[pick(len(allocs))].ID}
			}
			return tx.DeleteEvals(ids, allocIDs)
		case op == 8:
			j := jobs[pick(len(jobs))]
			if stored, err := tx.JobByID(j.Namespace, j.ID); err != nil || stored == nil {
				return err
			}
			return tx.DeleteJob(j.Namespace, j.ID)
		default:
			if pick(4) == 0 {
				return tx.ReconcileJobSummaries()
			}
			return nil
		}
	}

	var snap *state.StateSnapshot
	for step := 0; step < steps; step++ {
		if step == steps/2 {
			snap = s.Snapshot() // its totals stay its own as the store moves on
		}
		index++
		err := s.WithWriteTxn(index, func(tx *state.Txn) error {
			for n := 1 + pick(3); n > 0; n-- {
				if err := write(tx); err != nil {
					return err
				}
			}
			return nil
		})
		// A write the store refuses (an alloc of a purged job's group,
		// say) changes nothing, the totals included.
		_ = err
		sameAsScan(t, s, step)
	}

	sameAsScan(t, &snap.StateStore, steps)

	var buf bytes.Buffer
	must.NoError(t, s.Snapshot().Persist(&buf))
	restored, err := state.Restore(&buf, nil)
	must.NoError(t, err)
	sameAsScan(t, restored, steps)
	want, err := s.BacklogCounts()
	must.NoError(t, err)
	got, err := restored.BacklogCounts()
	must.NoError(t, err)
	must.Eq(t, want, got)
}
