package agent

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/api"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// seed writes a job, a node, an eval and one alloc of it.
func seed(t *testing.T, h *testHTTP) (*structs.Evaluation, *structs.Allocation) {
	t.Helper()
	job := mock.Job()
	must.NoError(t, h.rpc.state.UpsertJob(5, job))
	node := mock.Node()
	must.NoError(t, h.rpc.state.UpsertNode(6, node))
	eval := mock.Eval(mock.EvalForJob(job))
	must.NoError(t, h.rpc.state.UpsertEvals(7, []*structs.Evaluation{eval}))
	alloc := mock.Alloc(mock.ForJob(job, 0), mock.OnNode(node))
	alloc.EvalID = eval.ID
	must.NoError(t, h.rpc.state.UpsertAllocs(8, []*structs.Allocation{alloc}))
	return eval, alloc
}

func TestEvals(t *testing.T) {
	h := newTestHTTP(t)
	eval, alloc := seed(t, h)

	resp, body := h.do("GET", "/v1/evaluations?job="+eval.JobID+"&status="+eval.Status, "")
	must.Eq(t, http.StatusOK, resp.StatusCode)
	must.Eq(t, "7", resp.Header.Get("X-Nomad-Index"))
	var evals []api.Evaluation
	must.NoError(t, json.Unmarshal([]byte(body), &evals))
	must.Len(t, 1, evals)
	args := h.rpc.lastCall(t, "Eval.List").(*structs.EvalListRequest)
	must.Eq(t, eval.JobID, args.FilterJobID)
	must.Eq(t, eval.Status, args.FilterEvalStatus)

	_, body = h.do("GET", "/v1/evaluations?status=nope", "")
	must.Eq(t, "[]\n", body)

	_, body = h.do("GET", "/v1/evaluation/"+eval.ID+"?related=true", "")
	var got api.Evaluation
	must.NoError(t, json.Unmarshal([]byte(body), &got))
	must.Eq(t, eval.ID, got.ID)
	must.True(t, h.rpc.lastCall(t, "Eval.GetEval").(*structs.EvalSpecificRequest).IncludeRelated)

	_, body = h.do("GET", "/v1/evaluation/"+eval.ID+"/allocations", "")
	var stubs []api.AllocationListStub
	must.NoError(t, json.Unmarshal([]byte(body), &stubs))
	must.Len(t, 1, stubs)
	must.Eq(t, alloc.ID, stubs[0].ID)
}

func TestAllocs(t *testing.T) {
	h := newTestHTTP(t)
	_, alloc := seed(t, h)

	resp, body := h.do("GET", "/v1/allocations?task_states=true", "")
	must.Eq(t, http.StatusOK, resp.StatusCode)
	must.Eq(t, "8", resp.Header.Get("X-Nomad-Index"))
	var stubs []api.AllocationListStub
	must.NoError(t, json.Unmarshal([]byte(body), &stubs))
	must.Len(t, 1, stubs)
	must.Eq(t, &structs.AllocStubFields{TaskStates: true}, h.rpc.lastCall(t, "Alloc.List").(*structs.AllocListRequest).Fields)

	_, body = h.do("GET", "/v1/allocation/"+alloc.ID, "")
	var got api.Allocation
	must.NoError(t, json.Unmarshal([]byte(body), &got))
	must.Eq(t, alloc.ID, got.ID)
	must.Eq(t, alloc.JobID, got.JobID)
	must.NotNil(t, got.Job)

	h.rpc.onWrite("Alloc.Stop", func(args, reply interface{}) error {
		out := reply.(*structs.AllocStopResponse)
		out.EvalID, out.Index = "e9", 11
		return nil
	})
	resp, body = h.do("POST", "/v1/allocation/"+alloc.ID+"/stop?no_shutdown_delay=true&reschedule=true", "")
	must.Eq(t, http.StatusOK, resp.StatusCode)
	must.Eq(t, "11", resp.Header.Get("X-Nomad-Index"))
	var stop api.AllocStopResponse
	must.NoError(t, json.Unmarshal([]byte(body), &stop))
	must.Eq(t, "e9", stop.EvalID)
	args := h.rpc.lastCall(t, "Alloc.Stop").(*structs.AllocStopRequest)
	must.Eq(t, alloc.ID, args.AllocID)
	must.True(t, args.NoShutdownDelay)
	must.True(t, args.Reschedule)
}

func TestEvalsDelete(t *testing.T) {
	h := newTestHTTP(t)
	h.rpc.onWrite("Eval.Delete", func(args, reply interface{}) error {
		out := reply.(*structs.EvalUserDeleteResponse)
		out.Count, out.Index = 1, 12
		return nil
	})
	cases := []struct {
		body string
		code int
		want string
	}{
		{`{}`, http.StatusBadRequest, "evals must be deleted by either ID or filter"},
		{`{"EvalIDs":["a"],"Filter":"x"}`, http.StatusBadRequest, "evals cannot be deleted by both ID and filter"},
		{`{"Filter":"x"}`, http.StatusNotImplemented, "deleting evaluations by filter is not supported"},
	}
	for _, tc := range cases {
		resp, body := h.do("DELETE", "/v1/evaluations", tc.body)
		must.Eq(t, tc.code, resp.StatusCode)
		must.StrContains(t, body, tc.want)
	}
	resp, _ := h.do("DELETE", "/v1/evaluations", `{"EvalIDs":["a","b"]}`)
	must.Eq(t, http.StatusOK, resp.StatusCode)
	must.Eq(t, "12", resp.Header.Get("X-Nomad-Index"))
	must.Eq(t, []string{"a", "b"}, h.rpc.lastCall(t, "Eval.Delete").(*structs.EvalUserDeleteRequest).EvalIDs)
}
