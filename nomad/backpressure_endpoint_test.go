package nomad

import (
	"errors"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/metricstest"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// With an eval backlog limit of 2, the fake broker (which no worker
// drains) fills with the first two registrations' evals; then every
// write that would add an eval is refused, with nothing written, and the
// writes that add none, or drain, still pass.
func TestJobEndpoint_BackpressureRefusesWritesThatAddEvals(t *testing.T) {
	sink := metricstest.WithInmem(t)
	p, broker, _, _ := fakePipeline()
	s := newTestServerWith(t, func(c *Config) { c.DefaultSchedulerConfig.EvalBacklogLimit = 2 }, p)

	// The parameterized parent is a template: no eval, not refused.
	parent := parameterizedJob()
	registerJob(t, s, parent)
	first, second := mock.Job(), mock.Job()
	registerJob(t, s, first)
	registerJob(t, s, second)
	must.Eq(t, 2, broker.TotalReady())

	one := int64(1)
	refused := []struct {
		method string
		args   interface{}
		reply  interface{}
	}{
		{"Job.Register", &structs.JobRegisterRequest{Job: mock.Job()}, &structs.JobRegisterResponse{}},
		{"Job.Register", &structs.JobRegisterRequest{Job: first}, &structs.JobRegisterResponse{}},
		{"Job.Dispatch", &structs.JobDispatchRequest{JobID: parent.ID, Payload: []byte("x"),
			Meta: map[string]string{"input": "a"}}, &structs.JobDispatchResponse{}},
		{"Job.Scale", scaleReq(first, first.TaskGroups[0].Name, &one), &structs.JobRegisterResponse{}},
	}
	for _, tc := range refused {
		t.Run(tc.method, func(t *testing.T) {
			before := latestIndex(t, s)
			err := s.RPC(tc.method, tc.args, tc.reply)
			must.True(t, structs.IsKind(err, structs.ErrBackpressure), must.Sprintf("%v", err))
			var bp *structs.BackpressureError
			if errors.As(err, &bp) {
				must.Eq(t, 2, bp.Backlog)
				must.Eq(t, 2, bp.Limit)
			}
			wait, ok := structs.RetryAfterOf(err)
			must.True(t, ok)
			must.Eq(t, time.Second, wait)
			must.Eq(t, before, latestIndex(t, s), must.Sprint("a refused write reaches no Raft entry"))
		})
	}

	must.Eq(t, 4.0, metricstest.Counter(t, sink, "nomad.nomad.backpressure.refused"))
	must.Eq(t, 1.0, metricstest.Counter(t, sink, "nomad.nomad.backpressure.refused;method=Job.Dispatch"))
	backlog, _ := metricstest.Gauge(t, sink, "nomad.nomad.backpressure.eval_backlog")
	limit, _ := metricstest.Gauge(t, sink, "nomad.nomad.backpressure.eval_backlog_limit")
	must.Eq(t, []float32{2, 2}, []float32{backlog, limit})

	// A scaling without a count only records an event; a template adds
	// no eval; a deregistration drains.
	must.NoError(t, s.RPC("Job.Scale", scaleReq(first, first.TaskGroups[0].Name, nil), &structs.JobRegisterResponse{}))
	registerJob(t, s, parameterizedJob())
	must.NoError(t, s.RPC("Job.Deregister", &structs.JobDeregisterRequest{JobID: second.ID,
		WriteRequest: structs.WriteRequest{Namespace: second.Namespace}}, &structs.JobDeregisterResponse{}))

	// Raising the limit lets registrations through again.
	var get structs.SchedulerConfigurationResponse
	must.NoError(t, s.RPC("Operator.SchedulerGetConfiguration", &structs.GenericRequest{}, &get))
	cfg := *get.SchedulerConfig
	must.Eq(t, 2, cfg.EvalBacklogLimit)
	cfg.EvalBacklogLimit = 0
	must.NoError(t, s.RPC("Operator.SchedulerSetConfiguration", &structs.SchedulerSetConfigRequest{Config: cfg},
		&structs.SchedulerSetConfigurationResponse{}))
	registerJob(t, s, mock.Job())
}
