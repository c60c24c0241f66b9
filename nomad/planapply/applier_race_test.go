package planapply_test

import (
	"math/rand"
	"sync"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/planapply/planapplytest"
	"github.com/opennomad/nomad/nomad/state/statetest"
	"github.com/opennomad/nomad/structs"
)

// TestPlanApplier_RacingPlansNeverOvercommit throws plans from many
// goroutines at a pipelined applier over a few nodes: placements that
// collide, and moves that stop an alloc to make room for a bigger one.
// Whatever is committed fits every node.
func TestPlanApplier_RacingPlansNeverOvercommit(t *testing.T) {
	s := statetest.NewStore(t)
	raft := planapplytest.NewAutoRaft(t, s, 0, nil)
	h := newApplierHarness(t, s, raft, 4, nil)
	j := s.Job()
	var nodes []*structs.Node
	for range 6 {
		nodes = append(nodes, s.Node())
	}

	var (
		mu       sync.Mutex
		placed   []*structs.Allocation // committed, for later stops
		rejected int
		wg       sync.WaitGroup
	)
	const submitters, plansEach = 8, 40
	for g := range submitters {
		evals := make([]*structs.Evaluation, plansEach)
		for i := range evals {
			evals[i] = s.Eval(j)
		}
		wg.Go(func() {
			rng := rand.New(rand.NewSource(int64(g)))
			for i := range plansEach {
				plan := evals[i].MakePlan(j)
				mu.Lock()
				if len(placed) > 0 && rng.Intn(3) == 0 {
					// Move: stop one alloc and use its room on its node.
					k := rng.Intn(len(placed))
					victim := placed[k]
					placed = append(placed[:k], placed[k+1:]...)
					plan.AppendStoppedAlloc(victim, structs.AllocNotNeeded, "", "")
					node := nodes[0]
					for _, n := range nodes {
						if n.ID == victim.NodeID {
							node = n
						}
					}
					plan.AppendAlloc(statetest.SizedAlloc(j, node, 300+int64(rng.Intn(1500))))
				}
				mu.Unlock()
				for range 1 + rng.Intn(3) {
					plan.AppendAlloc(statetest.SizedAlloc(j, nodes[rng.Intn(len(nodes))], 300+int64(rng.Intn(1500))))
				}
				r, err := h.submitAndWait(plan)
				if err != nil {
					t.Errorf("plan %d of submitter %d: %v", i, g, err)
					return
				}
				mu.Lock()
				for _, allocs := range r.NodeAllocation {
					placed = append(placed, allocs...)
				}
				rejected += len(r.RejectedNodes)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	statetest.NoOvercommit(t, s.StateStore())
	t.Logf("%d node rejections, %d waits for pending stops", rejected, h.waited.Load())
	must.Positive(t, rejected) // the plans did collide

	// Every alloc reported committed is in the store.
	mu.Lock()
	defer mu.Unlock()
	for _, a := range placed {
		stored, err := s.StateStore().AllocByID(nil, a.ID)
		must.NoError(t, err)
		must.NotNil(t, stored)
	}
}

// submitAndWait is submit and answer for goroutines other than the test's.
func (h *applierHarness) submitAndWait(plan *structs.Plan) (*structs.PlanResult, error) {
	token := structs.GenerateUUID()
	h.evals.set(plan.EvalID, token)
	plan.EvalToken = token
	f, err := h.queue.Enqueue(plan)
	if err != nil {
		return nil, err
	}
	return f.Wait()
}
