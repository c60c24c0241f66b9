package agent

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/api"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

func TestNodes_ListAndGet(t *testing.T) {
	h := newTestHTTP(t)
	node := mock.Node()
	node.DrainStrategy = &structs.DrainStrategy{DrainSpec: structs.DrainSpec{Deadline: time.Hour}}
	must.NoError(t, h.rpc.state.UpsertNode(4, node))

	resp, body := h.do("GET", "/v1/nodes?resources=true", "")
	must.Eq(t, http.StatusOK, resp.StatusCode)
	must.Eq(t, "4", resp.Header.Get("X-Nomad-Index"))
	var stubs []api.NodeListStub
	must.NoError(t, json.Unmarshal([]byte(body), &stubs))
	must.Len(t, 1, stubs)
	must.Eq(t, node.ID, stubs[0].ID)
	must.True(t, stubs[0].Drain)
	must.Eq(t, &structs.NodeStubFields{Resources: true}, h.rpc.lastCall(t, "Node.List").(*structs.NodeListRequest).Fields)

	_, body = h.do("GET", "/v1/node/"+node.ID, "")
	// The secret never leaves the server (the key is there, blank, as
	// Nomad serves it); the legacy Drain flag is there.
	must.StrNotContains(t, body, node.SecretID)
	var raw map[string]any
	must.NoError(t, json.Unmarshal([]byte(body), &raw))
	must.Eq[any](t, "", raw["SecretID"])
	must.Eq[any](t, true, raw["Drain"])
	var got api.Node
	must.NoError(t, json.Unmarshal([]byte(body), &got))
	must.Eq(t, node.ID, got.ID)
	must.Eq(t, node.Name, got.Name)
	must.Eq(t, time.Hour, got.DrainStrategy.Deadline)
}

func TestNodes_Allocations(t *testing.T) {
	h := newTestHTTP(t)
	node := mock.Node()
	must.NoError(t, h.rpc.state.UpsertNode(4, node))
	job := mock.Job()
	must.NoError(t, h.rpc.state.UpsertJob(5, job))
	alloc := mock.Alloc(mock.ForJob(job, 0), mock.OnNode(node))
	must.NoError(t, h.rpc.state.UpsertAllocs(6, []*structs.Allocation{alloc}))

	_, body := h.do("GET", "/v1/node/"+node.ID+"/allocations", "")
	var allocs []api.Allocation
	must.NoError(t, json.Unmarshal([]byte(body), &allocs))
	must.Len(t, 1, allocs)
	must.Eq(t, alloc.ID, allocs[0].ID)

	_, body = h.do("GET", "/v1/node/other/allocations", "")
	must.Eq(t, "[]\n", body)
}

func TestNodes_Drain(t *testing.T) {
	h := newTestHTTP(t)
	h.rpc.onWrite("Node.UpdateDrain", func(args, reply interface{}) error {
		out := reply.(*structs.NodeDrainUpdateResponse)
		out.NodeModifyIndex, out.EvalCreateIndex, out.Index = 8, 8, 8
		return nil
	})
	resp, body := h.do("POST", "/v1/node/n1/drain", `{"DrainSpec": {"Deadline": 3600000000000, "IgnoreSystemJobs": true}, "MarkEligible": false, "Meta": {"reason": "kernel"}}`)
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	must.Eq(t, "8", resp.Header.Get("X-Nomad-Index"))
	var out api.NodeDrainUpdateResponse
	must.NoError(t, json.Unmarshal([]byte(body), &out))
	must.Eq(t, 8, out.NodeModifyIndex)
	must.Eq(t, []string{}, out.EvalIDs)
	args := h.rpc.lastCall(t, "Node.UpdateDrain").(*structs.NodeUpdateDrainRequest)
	must.Eq(t, "n1", args.NodeID)
	must.Eq(t, structs.DrainSpec{Deadline: time.Hour, IgnoreSystemJobs: true}, args.DrainStrategy.DrainSpec)
	must.Eq(t, map[string]string{"reason": "kernel"}, args.Meta)

	// A null spec cancels the drain.
	h.do("POST", "/v1/node/n1/drain", `{"DrainSpec": null, "MarkEligible": true}`)
	args = h.rpc.lastCall(t, "Node.UpdateDrain").(*structs.NodeUpdateDrainRequest)
	must.Nil(t, args.DrainStrategy)
	must.True(t, args.MarkEligible)

	// An unknown node reported by the server is a 404.
	h.rpc.onWrite("Node.UpdateDrain", func(args, reply interface{}) error { return structs.ErrUnknownNode })
	resp, body = h.do("POST", "/v1/node/missing/drain", `{"DrainSpec": null}`)
	must.Eq(t, http.StatusNotFound, resp.StatusCode)
	must.Eq(t, "node not found", body)
}

func TestNodes_EligibilityAndEvaluate(t *testing.T) {
	h := newTestHTTP(t)
	resp, _ := h.do("PUT", "/v1/node/n1/eligibility", `{"NodeID": "n1", "Eligibility": "ineligible"}`)
	must.Eq(t, http.StatusOK, resp.StatusCode)
	args := h.rpc.lastCall(t, "Node.UpdateEligibility").(*structs.NodeUpdateEligibilityRequest)
	must.Eq(t, "ineligible", args.Eligibility)

	h.rpc.onWrite("Node.Evaluate", func(args, reply interface{}) error {
		out := reply.(*structs.NodeUpdateResponse)
		out.EvalIDs, out.EvalCreateIndex, out.NodeModifyIndex, out.Index = []string{"e1"}, 9, 3, 9
		out.HeartbeatTTL = time.Minute
		return nil
	})
	resp, body := h.do("POST", "/v1/node/n1/evaluate", "")
	must.Eq(t, http.StatusOK, resp.StatusCode)
	must.Eq(t, `{"NodeModifyIndex":3,"EvalIDs":["e1"],"EvalCreateIndex":9,"Index":9}`+"\n", body)
	must.Eq(t, "n1", h.rpc.lastCall(t, "Node.Evaluate").(*structs.NodeEvaluateRequest).NodeID)

	// Purge deregisters the node; the answer has the same shape.
	h.rpc.onWrite("Node.Deregister", func(args, reply interface{}) error {
		out := reply.(*structs.NodeUpdateResponse)
		out.EvalIDs, out.EvalCreateIndex, out.NodeModifyIndex, out.Index = nil, 0, 10, 10
		return nil
	})
	resp, body = h.do("PUT", "/v1/node/n1/purge", "")
	must.Eq(t, http.StatusOK, resp.StatusCode)
	must.Eq(t, "10", resp.Header.Get("X-Nomad-Index"))
	must.Eq(t, `{"NodeModifyIndex":10,"EvalIDs":[],"EvalCreateIndex":0,"Index":10}`+"\n", body)
	must.Eq(t, []string{"n1"}, h.rpc.lastCall(t, "Node.Deregister").(*structs.NodeDeregisterRequest).NodeIDs)
}
