package fsm

import (
	"os"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// TestFSM_PlanResultsOfEarlierBuilds: a plan result in the Raft log of a
// build from before structs.AllocStop, when stops and preemptions
// travelled as whole allocations (the former AllocationDiff, every
// Allocation field encoded), still decodes and applies. The entry in
// testdata is byte for byte what that build's plan applier wrote
// (buildPlanResultsRequest at commit 283b598, encoded by structs.Encode):
// eval goldenEval stops goldenStop (lost, with a follow-up eval) and
// preempts goldenVictim for goldenPreemptor, at goldenTime.
func TestFSM_PlanResultsOfEarlierBuilds(t *testing.T) {
	const (
		goldenEval      = "3e9f8131-4e4d-4276-a051-9f42ad7f5e04"
		goldenStop      = "0b6c5e0e-1b1a-4f43-9d2e-6c1f7a4c2b01"
		goldenFollowup  = "5f1e2d3c-4b5a-4968-8776-655443322110"
		goldenVictim    = "1c7d6f1f-2c2b-4054-8e3f-7d208b5d3c02"
		goldenPreemptor = "2d8e7020-3d3c-4165-9f40-8e319c6e4d03"
	)
	goldenTime := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC).UnixNano()
	entry, err := os.ReadFile("testdata/plan_results_allocation_diff.msgpack")
	must.NoError(t, err)
	must.Eq(t, structs.ApplyPlanResultsRequestType, structs.MessageType(entry[0]))

	// Decoded into the new type: the fields a stop keeps, the rest skipped.
	var req structs.ApplyPlanResultsRequest
	must.NoError(t, structs.Decode(entry[1:], &req))
	must.Eq(t, []*structs.AllocStop{{
		ID: goldenStop, DesiredDescription: structs.AllocLost,
		ClientStatus: structs.AllocClientStatusLost, FollowupEvalID: goldenFollowup,
	}}, req.AllocsStopped)
	must.Eq(t, []*structs.AllocStop{{
		ID: goldenVictim, DesiredDescription: "Preempted by alloc ID " + goldenPreemptor,
		PreemptedByAllocation: goldenPreemptor,
	}}, req.AllocsPreempted)
	must.Eq(t, goldenTime, req.UpdatedAt)
	again, err := structs.Encode(structs.ApplyPlanResultsRequestType, &req)
	must.NoError(t, err)
	must.Less(t, len(entry)/2, len(again), must.Sprintf("the same entry today: %d bytes, was %d", len(again), len(entry)))
	t.Logf("the entry took %d bytes, the same today %d", len(entry), len(again))

	// Applied by the FSM as Raft would, onto the allocs it names.
	f, fx := newTestFSM(t)
	node, job := mock.Node(), mock.Job()
	mustApply(t, f, 10, structs.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: node})
	mustApply(t, f, 11, structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job})
	stored, err := f.State().JobByID(nil, job.Namespace, job.ID)
	must.NoError(t, err)
	stop := mock.Alloc(mock.ForJob(stored, 0), mock.OnNode(node))
	stop.ID = goldenStop
	victim := mock.Alloc(mock.ForJob(stored, 1), mock.OnNode(node))
	victim.ID = goldenVictim
	eval := mock.Eval(mock.EvalForJob(stored))
	eval.ID = goldenEval
	mustApply(t, f, 12, structs.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{eval}})
	mustApply(t, f, 13, structs.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
		AllocUpdateRequest: structs.AllocUpdateRequest{AllocsUpdated: []*structs.Allocation{stop, victim}, Job: stored}})
	fx.unblocked = nil

	resp := f.Apply(&raft.Log{Index: 14, Type: raft.LogCommand, Data: entry})
	must.Nil(t, resp)

	gotStop, err := f.State().AllocByID(nil, goldenStop)
	must.NoError(t, err)
	must.Eq(t, structs.AllocDesiredStatusStop, gotStop.DesiredStatus)
	must.Eq(t, structs.AllocLost, gotStop.DesiredDescription)
	must.Eq(t, structs.AllocClientStatusLost, gotStop.ClientStatus)
	must.Eq(t, goldenFollowup, gotStop.FollowupEvalID)
	must.Eq(t, goldenTime, gotStop.ModifyTime)
	must.Eq(t, 14, gotStop.AllocModifyIndex)
	must.Eq(t, node.ID, gotStop.NodeID, must.Sprint("the rest is the stored alloc's"))

	gotVictim, err := f.State().AllocByID(nil, goldenVictim)
	must.NoError(t, err)
	must.Eq(t, structs.AllocDesiredStatusEvict, gotVictim.DesiredStatus)
	must.Eq(t, goldenPreemptor, gotVictim.PreemptedByAllocation)
	must.Eq(t, goldenTime, gotVictim.ModifyTime)

	gotEval, err := f.State().EvalByID(nil, goldenEval)
	must.NoError(t, err)
	must.Eq(t, 14, gotEval.ModifyIndex)
	must.Eq(t, []string{node.ComputedClass + "@14"}, fx.unblocked)
}
