package nomad

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

func TestEvalEndpoint_DeleteOnlyWhileBrokerPaused(t *testing.T) {
	s := newTestServer(t, nil)
	job := mock.Job()
	reg := registerJob(t, s, job)
	var out structs.EvalUserDeleteResponse

	err := s.RPC("Eval.Delete", &structs.EvalUserDeleteRequest{EvalIDs: []string{reg.EvalID}}, &out)
	must.ErrorContains(t, err, "eval broker is enabled")

	var get structs.SchedulerConfigurationResponse
	must.NoError(t, s.RPC("Operator.SchedulerGetConfiguration", &structs.GenericRequest{}, &get))
	cfg := *get.SchedulerConfig
	cfg.PauseEvalBroker = true
	var set structs.SchedulerSetConfigurationResponse
	must.NoError(t, s.RPC("Operator.SchedulerSetConfiguration", &structs.SchedulerSetConfigRequest{Config: cfg}, &set))

	err = s.RPC("Eval.Delete", &structs.EvalUserDeleteRequest{EvalIDs: []string{structs.GenerateUUID()}}, &out)
	must.ErrorIs(t, err, structs.ErrUnknownEval)
	err = s.RPC("Eval.Delete", &structs.EvalUserDeleteRequest{}, &out)
	must.True(t, structs.IsValidationError(err))

	must.NoError(t, s.RPC("Eval.Delete", &structs.EvalUserDeleteRequest{EvalIDs: []string{reg.EvalID}}, &out))
	must.Eq(t, 1, out.Count)
	must.Positive(t, out.Index)
	gone, _ := s.State().EvalByID(nil, reg.EvalID)
	must.Nil(t, gone)
}
