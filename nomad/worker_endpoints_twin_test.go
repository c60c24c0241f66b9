package nomad

import (
	"context"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/clock"
	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/nomad/worker"
	"github.com/opennomad/nomad/nomad/worker/workertest"
	"github.com/opennomad/nomad/structs"
)

var _ worker.Endpoints = (*workertest.Leader)(nil)

// newLocalLeader starts the in-memory twin of the leader's worker
// endpoints over s, with this package's plan queue and applier in place
// of its serial one: the applier commits through an autoPlanRaft (no
// commit latency) with the given pipeline depth, and the Raft twin plays
// the FSM's leader-side effects of each plan result.
func newLocalLeader(t testing.TB, s *testState, c clock.Clock, pipeline int) *workertest.Leader {
	t.Helper()
	l := workertest.NewLeader(t, twinStore{s}, c)
	q := NewPlanQueue(c)
	q.SetEnabled(true)
	raft := newAutoPlanRaft(t, s, 0, l.AfterPlanResults)
	applier, err := NewPlanApplier(PlanApplierConfig{
		Queue: q, Evals: l.Broker, Raft: raft,
		State: func() *state.StateStore { return s.store },
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

// twinStore lets the leader twin write the package's testState.
type twinStore struct{ s *testState }

func (t twinStore) Write(fn func(tx *state.Txn) error) (uint64, error) { return t.s.write(fn) }
func (t twinStore) Latest() uint64                                     { return t.s.latest() }
func (t twinStore) StateStore() *state.StateStore                      { return t.s.store }
