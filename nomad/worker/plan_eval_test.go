package worker

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// updateCounter counts the eval updates a worker sends.
type updateCounter struct {
	*recordingEndpoints
	updates atomic.Int64
}

func (c *updateCounter) UpdateEval(req *structs.EvalUpdateRequest) error {
	c.updates.Add(1)
	return c.recordingEndpoints.UpdateEval(req)
}

// TestWorker_PlanEval: the service scheduler's plan carries its eval,
// stamped as an eval update would be. A leader that writes it says so
// and the worker sends no update; a result without that word (an older
// leader, or one with an older server) leaves the worker to update the
// eval as before. Either way the eval ends complete and is acked.
func TestWorker_PlanEval(t *testing.T) {
	cases := []struct {
		name        string
		planEvals   bool
		wantUpdates int64
	}{
		{name: "the leader writes the eval with the plan", planEvals: true, wantUpdates: 0},
		{name: "an older leader ignores it: the worker updates the eval", planEvals: false, wantUpdates: 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newWorkerHarness(t)
			h.leader.PlanEvals = c.planEvals
			ep := &updateCounter{recordingEndpoints: h.ep}
			w, err := New(Config{
				Endpoints:         ep,
				State:             func() *state.StateStore { return h.s.StateStore() },
				EnabledSchedulers: []string{structs.JobTypeService},
				Clock:             h.clock,
			})
			must.NoError(t, err)
			ctx, cancel := context.WithCancel(context.Background())
			w.Start(ctx)
			t.Cleanup(func() {
				w.Stop()
				cancel()
				<-w.Done()
			})

			h.s.Node()
			job := h.s.Job(mock.Count(1))
			e := h.register(job)
			plan := receive(t, h.ep.plans, "plan")
			must.Eq(t, e.ID, receive(t, h.ep.acks, "ack"))

			must.NotNil(t, plan.Eval)
			must.Eq(t, e.ID, plan.Eval.ID)
			must.Eq(t, plan.SnapshotIndex, plan.Eval.SnapshotIndex)
			must.Eq(t, testEpoch.UnixNano(), plan.Eval.ModifyTime)
			must.Eq(t, c.wantUpdates, ep.updates.Load())
			stored, err := h.s.StateStore().EvalByID(nil, e.ID)
			must.NoError(t, err)
			must.Eq(t, structs.EvalStatusComplete, stored.Status)
			must.Eq(t, 0, stored.QueuedAllocations[job.TaskGroups[0].Name])
		})
	}
}
