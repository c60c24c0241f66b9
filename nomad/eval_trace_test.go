package nomad

import (
	"strings"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/evaltrace"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// An evaluation's timeline, as the leader records it while a real
// worker schedules it: enqueued, dequeued by the worker, its plan
// submitted and applied, acked, in that order.
func TestEvalTimeline_RecordsEveryStage(t *testing.T) {
	s := newPipelineServer(t, 1, nil)
	registerNode(t, s, mock.Node())
	job := mock.Job()
	job.TaskGroups[0].Count = 2
	evalID := registerJob(t, s, job).EvalID

	var reply structs.EvalTimelineResponse
	waitFor(t, func() bool {
		reply = structs.EvalTimelineResponse{}
		err := s.RPC("Eval.Timeline", &structs.EvalSpecificRequest{EvalID: evalID,
			QueryOptions: structs.QueryOptions{Namespace: job.Namespace}}, &reply)
		return err == nil && len(reply.Events) > 0 && reply.Events[len(reply.Events)-1].Stage == evaltrace.StageAcked
	})
	var stages []string
	for i, ev := range reply.Events {
		stages = append(stages, ev.Stage)
		if i > 0 {
			must.False(t, ev.Time.Before(reply.Events[i-1].Time), must.Sprint("events in time order"))
		}
	}
	must.Eq(t, []string{evaltrace.StageEnqueued, evaltrace.StageDequeued, evaltrace.StagePlanSubmitted,
		evaltrace.StagePlanApplied, evaltrace.StageAcked}, stages)
	must.StrContains(t, reply.Events[0].Detail, "job-register")
	must.True(t, strings.HasPrefix(reply.Events[1].Detail, "by worker "), must.Sprint(reply.Events[1].Detail))
	must.Eq(t, "2 placements, 0 stops on 1 nodes", reply.Events[2].Detail)
	must.StrContains(t, reply.Events[3].Detail, "2 placements")

	err := s.RPC("Eval.Timeline", &structs.EvalSpecificRequest{EvalID: structs.GenerateUUID()}, &reply)
	must.True(t, structs.IsKind(err, structs.ErrNotFound), must.Sprint(err))
}
