package nomad

import (
	"context"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/clock"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

func TestNodeEndpoint_RegisterValidation(t *testing.T) {
	s := newTestServer(t, nil)
	before, _ := s.State().LatestIndex()
	var reply structs.NodeUpdateResponse
	err := s.RPC("Node.Register", &structs.NodeRegisterRequest{Node: &structs.Node{Status: "bogus"}}, &reply)
	must.True(t, structs.IsValidationError(err))
	for _, want := range []string{"missing node ID", "missing node secret ID", "missing datacenter",
		"missing node name", `invalid status "bogus"`} {
		must.StrContains(t, err.Error(), want)
	}
	after, _ := s.State().LatestIndex()
	must.Eq(t, before, after)
}

func TestNodeEndpoint_RegisterKeepsStatusAndChecksSecret(t *testing.T) {
	s := newTestServer(t, nil)
	node := mock.Node(mock.NodeStatus(structs.NodeStatusInit))
	reply := registerNode(t, s, node)
	must.Positive(t, reply.HeartbeatTTL)
	must.SliceEmpty(t, reply.EvalIDs, must.Sprint("an initializing node needs no evals"))

	again := node.Copy()
	again.Status = structs.NodeStatusReady
	registerNode(t, s, again)
	stored, _ := s.State().NodeByID(nil, node.ID)
	must.Eq(t, structs.NodeStatusInit, stored.Status, must.Sprint("registration never changes a known node's status"))

	thief := node.Copy()
	thief.SecretID = structs.GenerateUUID()
	var r structs.NodeUpdateResponse
	err := s.RPC("Node.Register", &structs.NodeRegisterRequest{Node: thief}, &r)
	must.ErrorContains(t, err, "node secret ID does not match")
}

func TestNodeEndpoint_RegisterReevaluatesOnFeasibilityChange(t *testing.T) {
	s := newTestServer(t, nil)
	sys := mock.SystemJob()
	registerJob(t, s, sys)
	node := mock.Node()
	reply := registerNode(t, s, node)
	must.Len(t, 1, reply.EvalIDs, must.Sprint("a ready node gets its system jobs"))

	// Same node again: nothing feasibility reads changed.
	reply = registerNode(t, s, node.Copy())
	must.SliceEmpty(t, reply.EvalIDs)

	changed := node.Copy()
	changed.Meta["rack"] = "r2"
	reply = registerNode(t, s, changed)
	must.Len(t, 1, reply.EvalIDs)
}

func TestNodeEndpoint_StatusTransitions(t *testing.T) {
	s := newTestServer(t, nil)
	job := mock.Job()
	registerJob(t, s, job)
	node := mock.Node()
	registerNode(t, s, node)
	alloc := placeAlloc(t, s, job, node, 0)

	heartbeat := func(status string) *structs.NodeUpdateResponse {
		t.Helper()
		var reply structs.NodeUpdateResponse
		must.NoError(t, s.RPC("Node.UpdateStatus", &structs.NodeUpdateStatusRequest{
			NodeID: node.ID, SecretID: node.SecretID, Status: status}, &reply))
		return &reply
	}
	status := func() *structs.Node {
		t.Helper()
		n, err := s.State().NodeByID(nil, node.ID)
		must.NoError(t, err)
		return n
	}

	// Disconnected: the jobs are re-evaluated.
	reply := heartbeat(structs.NodeStatusDisconnected)
	must.Len(t, 1, reply.EvalIDs)
	must.Eq(t, structs.NodeStatusDisconnected, status().Status)

	// Back, but its allocs must be re-synced first: initializing.
	heartbeat(structs.NodeStatusReady)
	must.Eq(t, structs.NodeStatusInit, status().Status)
	heartbeat(structs.NodeStatusReady)
	must.Eq(t, structs.NodeStatusInit, status().Status, must.Sprint("allocs not re-synced yet"))

	var ack structs.GenericResponse
	update := &structs.Allocation{ID: alloc.ID, ClientStatus: structs.AllocClientStatusRunning}
	must.NoError(t, s.RPC("Node.UpdateAlloc", &structs.AllocUpdateRequest{Alloc: []*structs.Allocation{update}}, &ack))
	reply = heartbeat(structs.NodeStatusReady)
	must.Eq(t, structs.NodeStatusReady, status().Status)
	must.Len(t, 1, reply.EvalIDs, must.Sprint("initializing to ready re-evaluates"))

	// Down and back by heartbeat.
	heartbeat(structs.NodeStatusDown)
	must.Eq(t, structs.NodeStatusDown, status().Status)
	must.Eq(t, 0, s.heartbeats.count())
	reply = heartbeat(structs.NodeStatusReady)
	n := status()
	must.Eq(t, structs.NodeStatusReady, n.Status)
	must.Eq(t, structs.NodeEventMsgReregistered, n.Events[len(n.Events)-1].Message)
	must.Len(t, 1, reply.EvalIDs)
	must.Eq(t, 1, s.heartbeats.count())

	var bad structs.NodeUpdateResponse
	err := s.RPC("Node.UpdateStatus", &structs.NodeUpdateStatusRequest{NodeID: node.ID, SecretID: "wrong",
		Status: structs.NodeStatusReady}, &bad)
	must.ErrorContains(t, err, "node secret ID does not match")
	err = s.RPC("Node.UpdateStatus", &structs.NodeUpdateStatusRequest{NodeID: structs.GenerateUUID(),
		Status: structs.NodeStatusReady}, &bad)
	must.ErrorIs(t, err, structs.ErrUnknownNode)
	err = s.RPC("Node.UpdateStatus", &structs.NodeUpdateStatusRequest{Status: "sleepy"}, &bad)
	must.True(t, structs.IsValidationError(err))
	must.StrContains(t, err.Error(), "missing node ID")
	must.StrContains(t, err.Error(), `invalid status "sleepy"`)
}

func TestNodeEndpoint_DrainAndEligibility(t *testing.T) {
	s := newTestServer(t, nil)
	sys := mock.SystemJob()
	registerJob(t, s, sys)
	node := mock.Node()
	registerNode(t, s, node)

	var drain structs.NodeDrainUpdateResponse
	must.NoError(t, s.RPC("Node.UpdateDrain", &structs.NodeUpdateDrainRequest{NodeID: node.ID,
		DrainStrategy: &structs.DrainStrategy{DrainSpec: structs.DrainSpec{Deadline: time.Hour}}}, &drain))
	n, _ := s.State().NodeByID(nil, node.ID)
	must.Eq(t, structs.NodeSchedulingIneligible, n.SchedulingEligibility)
	must.NotNil(t, n.DrainStrategy)
	must.Eq(t, n.DrainStrategy.StartedAt.Add(time.Hour), n.DrainStrategy.ForceDeadline)
	must.Eq(t, structs.NodeEventMsgDrainStarted, n.Events[len(n.Events)-1].Message)

	var elig structs.NodeEligibilityUpdateResponse
	err := s.RPC("Node.UpdateEligibility", &structs.NodeUpdateEligibilityRequest{NodeID: node.ID,
		Eligibility: structs.NodeSchedulingEligible}, &elig)
	must.ErrorContains(t, err, "while it is draining")
	err = s.RPC("Node.UpdateEligibility", &structs.NodeUpdateEligibilityRequest{NodeID: node.ID,
		Eligibility: "maybe"}, &elig)
	must.True(t, structs.IsValidationError(err))

	// Cancel the drain and mark eligible: the system job is re-evaluated.
	must.NoError(t, s.RPC("Node.UpdateDrain", &structs.NodeUpdateDrainRequest{NodeID: node.ID, MarkEligible: true}, &drain))
	n, _ = s.State().NodeByID(nil, node.ID)
	must.Eq(t, structs.NodeSchedulingEligible, n.SchedulingEligibility)
	must.Nil(t, n.DrainStrategy)
	must.Len(t, 1, drain.EvalIDs)

	must.NoError(t, s.RPC("Node.UpdateEligibility", &structs.NodeUpdateEligibilityRequest{NodeID: node.ID,
		Eligibility: structs.NodeSchedulingIneligible}, &elig))
	must.SliceEmpty(t, elig.EvalIDs)
	must.NoError(t, s.RPC("Node.UpdateEligibility", &structs.NodeUpdateEligibilityRequest{NodeID: node.ID,
		Eligibility: structs.NodeSchedulingEligible}, &elig))
	must.Len(t, 1, elig.EvalIDs)
	n, _ = s.State().NodeByID(nil, node.ID)
	must.Eq(t, structs.NodeEventMsgEligible, n.Events[len(n.Events)-1].Message)

	var ev structs.NodeUpdateResponse
	must.NoError(t, s.RPC("Node.Evaluate", &structs.NodeEvaluateRequest{NodeID: node.ID}, &ev))
	must.Len(t, 1, ev.EvalIDs)
}

func TestNodeEndpoint_Reads(t *testing.T) {
	s := newTestServer(t, nil)
	node := mock.Node()
	registerNode(t, s, node)
	job := mock.Job()
	registerJob(t, s, job)
	alloc := placeAlloc(t, s, job, node, 0)

	var one structs.SingleNodeResponse
	must.NoError(t, s.RPC("Node.GetNode", &structs.NodeSpecificRequest{NodeID: node.ID}, &one))
	must.Eq(t, node.ID, one.Node.ID)
	must.Eq(t, "", one.Node.SecretID, must.Sprint("the secret never leaves the server"))
	must.Eq(t, one.Node.ModifyIndex, one.Index)
	must.True(t, one.KnownLeader)

	var list structs.NodeListResponse
	must.NoError(t, s.RPC("Node.List", &structs.NodeListRequest{Fields: &structs.NodeStubFields{Resources: true, OS: true}}, &list))
	must.Len(t, 1, list.Nodes)
	must.NotNil(t, list.Nodes[0].NodeResources)
	must.Eq(t, "ubuntu", list.Nodes[0].Attributes["os.name"])

	var allocs structs.NodeAllocsResponse
	must.NoError(t, s.RPC("Node.GetAllocs", &structs.NodeSpecificRequest{NodeID: node.ID}, &allocs))
	must.Len(t, 1, allocs.Allocs)

	var client structs.NodeClientAllocsResponse
	must.NoError(t, s.RPC("Node.GetClientAllocs", &structs.NodeSpecificRequest{NodeID: node.ID, SecretID: node.SecretID}, &client))
	must.Eq(t, map[string]uint64{alloc.ID: alloc.AllocModifyIndex}, client.Allocs)
	err := s.RPC("Node.GetClientAllocs", &structs.NodeSpecificRequest{NodeID: node.ID, SecretID: "x"}, &client)
	must.ErrorContains(t, err, "node secret ID does not match")
}

func TestNodeEndpoint_Deregister(t *testing.T) {
	s := newTestServer(t, nil)
	node := mock.Node()
	registerNode(t, s, node)
	job := mock.Job()
	registerJob(t, s, job)
	placeAlloc(t, s, job, node, 0)

	var reply structs.NodeUpdateResponse
	err := s.RPC("Node.Deregister", &structs.NodeDeregisterRequest{NodeIDs: []string{node.ID, "nope"}}, &reply)
	must.ErrorIs(t, err, structs.ErrUnknownNode)
	must.NoError(t, s.RPC("Node.Deregister", &structs.NodeDeregisterRequest{NodeIDs: []string{node.ID}}, &reply))
	got, _ := s.State().NodeByID(nil, node.ID)
	must.Nil(t, got)
	must.Len(t, 1, reply.EvalIDs, must.Sprint("the job that ran on it is re-evaluated"))
	must.Eq(t, 0, s.heartbeats.count())
}

// UpdateAlloc batches updates from many clients into one Raft entry and
// asks for a replacement of a failed alloc its policy allows to reschedule.
func TestNodeEndpoint_UpdateAllocBatchesAndReschedules(t *testing.T) {
	fake := clock.NewFake(time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC))
	s := newTestServer(t, func(c *Config) { c.Clock = fake })
	nodeA, nodeB := mock.Node(), mock.Node()
	registerNode(t, s, nodeA)
	registerNode(t, s, nodeB)
	job := mock.Job()
	registerJob(t, s, job)
	a := placeAlloc(t, s, job, nodeA, 0)
	b := placeAlloc(t, s, job, nodeB, 1)

	armed := fake.Pending()
	type result struct {
		index uint64
		err   error
	}
	results := make(chan result, 2)
	send := func(u *structs.Allocation) {
		var reply structs.GenericResponse
		err := s.RPC("Node.UpdateAlloc", &structs.AllocUpdateRequest{Alloc: []*structs.Allocation{u}}, &reply)
		results <- result{reply.Index, err}
	}
	go send(&structs.Allocation{ID: a.ID, NodeID: nodeA.ID, ClientStatus: structs.AllocClientStatusFailed})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	must.NoError(t, fake.BlockUntil(ctx, armed+1))
	go send(&structs.Allocation{ID: b.ID, NodeID: nodeB.ID, ClientStatus: structs.AllocClientStatusRunning})

	// Both calls wait for the same batch; make sure the second joined it.
	waitFor(t, func() bool {
		s.allocUpdates.mu.Lock()
		defer s.allocUpdates.mu.Unlock()
		return len(s.allocUpdates.updates) == 2
	})
	fake.Advance(s.config.AllocUpdateBatchInterval)
	r1, r2 := <-results, <-results
	must.NoError(t, r1.err)
	must.NoError(t, r2.err)
	must.Eq(t, r1.index, r2.index, must.Sprint("one Raft entry for the batch"))

	gotA, _ := s.State().AllocByID(nil, a.ID)
	must.Eq(t, structs.AllocClientStatusFailed, gotA.ClientStatus)
	must.Eq(t, fake.Now().Add(-s.config.AllocUpdateBatchInterval).UnixNano(), gotA.ModifyTime)
	gotB, _ := s.State().AllocByID(nil, b.ID)
	must.Eq(t, structs.AllocClientStatusRunning, gotB.ClientStatus)
	evals, _ := s.State().EvalsByJob(nil, job.Namespace, job.ID)
	var resched []*structs.Evaluation
	for _, e := range evals {
		if e.TriggeredBy == structs.EvalTriggerRetryFailedAlloc {
			resched = append(resched, e)
		}
	}
	must.Len(t, 1, resched)
	must.Eq(t, r1.index, resched[0].CreateIndex)

	var reply structs.GenericResponse
	err := s.RPC("Node.UpdateAlloc", &structs.AllocUpdateRequest{Alloc: []*structs.Allocation{{ClientStatus: "weird"}}}, &reply)
	must.True(t, structs.IsValidationError(err))
	must.StrContains(t, err.Error(), "missing ID")
	err = s.RPC("Node.UpdateAlloc", &structs.AllocUpdateRequest{}, &reply)
	must.StrContains(t, err.Error(), "at least one allocation")
}

// waitFor polls cond until it holds; for conditions another goroutine
// makes true without a notification to wait on.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in time")
		}
		time.Sleep(time.Millisecond)
	}
}

// A client's blocking query for its allocations answers when its own
// allocations change, not when a plan places allocations elsewhere.
func TestNodeEndpoint_GetClientAllocsBlocksOnItsNode(t *testing.T) {
	s := newTestServer(t, nil)
	empty, busy := mock.Node(), mock.Node()
	registerNode(t, s, empty)
	registerNode(t, s, busy)
	job := mock.Job()
	registerJob(t, s, job)

	ask := func(minIndex uint64, wait time.Duration) *structs.NodeClientAllocsResponse {
		t.Helper()
		var out structs.NodeClientAllocsResponse
		must.NoError(t, s.RPC("Node.GetClientAllocs", &structs.NodeSpecificRequest{
			NodeID: empty.ID, SecretID: empty.SecretID,
			QueryOptions: structs.QueryOptions{MinQueryIndex: minIndex, MaxQueryTime: wait},
		}, &out))
		return &out
	}
	first := ask(0, 0)
	must.MapEmpty(t, first.Allocs)
	// Never 0, which the client would feed back as a non-blocking query.
	must.Positive(t, first.Index)

	// Allocations on the other node: the query runs to its timeout and
	// answers with the index it started from.
	done := make(chan *structs.NodeClientAllocsResponse)
	go func() { done <- ask(first.Index, 300*time.Millisecond) }()
	for i := 0; i < 3; i++ {
		placeAlloc(t, s, job, busy, i)
	}
	timedOut := <-done
	must.Eq(t, first.Index, timedOut.Index)
	must.MapEmpty(t, timedOut.Allocs)

	// An allocation on this node answers at once, at its index.
	go func() { done <- ask(first.Index, time.Minute) }()
	alloc := placeAlloc(t, s, job, empty, 3)
	got := <-done
	must.Eq(t, alloc.ModifyIndex, got.Index)
	must.Eq(t, map[string]uint64{alloc.ID: alloc.AllocModifyIndex}, got.Allocs)
}

// A node whose names hold a NUL byte is refused, naming the field, and
// nothing is written.
func TestNodeEndpoint_RegisterRefusesNULInNames(t *testing.T) {
	s := newTestServer(t, nil)
	before, _ := s.State().LatestIndex()
	node := mock.Node(mock.NodeClass("gp\x00u"), mock.Meta("r\x00ack", "1"))
	var reply structs.NodeUpdateResponse
	err := s.RPC("Node.Register", &structs.NodeRegisterRequest{Node: node}, &reply)
	must.True(t, structs.IsValidationError(err))
	must.StrContains(t, err.Error(), `node class "gp\x00u" must not contain null characters`)
	must.StrContains(t, err.Error(), `meta key "r\x00ack" must not contain null characters`)
	after, _ := s.State().LatestIndex()
	must.Eq(t, before, after)
}
