package nomad

import (
	"context"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/clock"
	"github.com/opennomad/nomad/nomad/planapply"
	"github.com/opennomad/nomad/nomad/planapply/planapplytest"
	"github.com/opennomad/nomad/nomad/state/statetest"
	"github.com/opennomad/nomad/nomad/worker"
	"github.com/opennomad/nomad/nomad/worker/workertest"
	"github.com/opennomad/nomad/structs"
)

var _ worker.Endpoints = (*workertest.Leader)(nil)

// newLocalLeader starts the in-memory twin of the leader's worker
// endpoints over s, with the real plan queue and applier in place of its
// serial one: the applier commits through a planapplytest.AutoRaft (no
// commit latency) with the given pipeline depth, and the Raft twin plays
// the FSM's leader-side effects of each plan result.
func newLocalLeader(t testing.TB, s *statetest.Store, c clock.Clock, pipeline int) *workertest.Leader {
	t.Helper()
	l := workertest.NewLeader(t, s, c)
	q := planapply.NewQueue(c)
	q.SetEnabled(true)
	raft := planapplytest.NewAutoRaft(t, s, 0, l.AfterPlanResults)
	applier, err := planapply.New(planapply.Config{
		Queue: q, Evals: l.Broker, Raft: raft,
		State: s.StateStore,
		Clock: c, Pipeline: pipeline,
	})
	must.NoError(t, err)
	l.SetPlanApplier(func(plan *structs.Plan) (*structs.PlanResult, error) {
		f, err := q.Enqueue(plan)
		if err != nil {
			return nil, err
		}
		return f.Wait()
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- applier.Run(ctx) }()
	t.Cleanup(func() {
		q.SetEnabled(false)
		cancel()
		must.NoError(t, <-done)
	})
	return l
}
