package state

import (
	"errors"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

func TestNodes_UpsertNew(t *testing.T) {
	s := testStore(t)
	n := mockNode()
	must.NoError(t, s.UpsertNode(10, n))

	out, err := s.NodeByID(nil, n.ID)
	must.NoError(t, err)
	must.Eq(t, 10, out.CreateIndex)
	must.Eq(t, 10, out.ModifyIndex)
	must.Len(t, 1, out.Events)
	must.Eq(t, structs.NodeEventMsgRegistered, out.Events[0].Message)
	must.Eq(t, 10, out.Events[0].CreateIndex)
	must.Eq(t, 10, mustIndex(t, s, TableNodes))

	bySecret, err := s.NodeBySecretID(nil, n.SecretID)
	must.NoError(t, err)
	must.Eq(t, n.ID, bySecret.ID)
	none, err := s.NodeBySecretID(nil, "")
	must.NoError(t, err)
	must.Nil(t, none)
}

func TestNodes_ReRegisterKeepsServerOwnedFields(t *testing.T) {
	s := testStore(t)
	n := mockNode()
	must.NoError(t, s.UpsertNode(10, n))
	drain := &structs.DrainStrategy{DrainSpec: structs.DrainSpec{Deadline: time.Hour}}
	must.NoError(t, s.UpdateNodeDrain(11, n.ID, drain, false, 1_700_000_100, nil, nil))

	again := mockNode()
	again.ID, again.SecretID = n.ID, n.SecretID
	again.Name = "renamed"
	again.SchedulingEligibility = structs.NodeSchedulingEligible
	must.NoError(t, s.UpsertNode(12, again))

	out, err := s.NodeByID(nil, n.ID)
	must.NoError(t, err)
	must.Eq(t, "renamed", out.Name)
	must.Eq(t, 10, out.CreateIndex)
	must.Eq(t, 12, out.ModifyIndex)
	must.NotNil(t, out.DrainStrategy)
	must.Eq(t, structs.NodeSchedulingIneligible, out.SchedulingEligibility)
	must.Len(t, 1, out.Events)
	must.Eq(t, structs.DrainStatusDraining, out.LastDrain.Status)
}

func TestNodes_UpsertInvalid(t *testing.T) {
	s := testStore(t)
	noSecret := mockNode()
	noSecret.SecretID = ""
	cases := []struct {
		name string
		node *structs.Node
		want string
	}{
		{"nil", nil, "node is nil"},
		{"no id", &structs.Node{SecretID: "x"}, "ID is required"},
		{"no secret", noSecret, "SecretID is required"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := s.UpsertNode(5, tc.node)
			must.ErrorContains(t, err, tc.want)
			must.Eq(t, 0, mustIndex(t, s, TableNodes))
		})
	}
}

func TestNodes_ListAndPrefix(t *testing.T) {
	s := testStore(t)
	a, b := mockNode(), mockNode()
	a.ID = "aaaa0000-0000-4000-8000-000000000000"
	b.ID = "aaab0000-0000-4000-8000-000000000000"
	b.NodePool = "gpu"
	must.NoError(t, s.UpsertNode(1, a))
	must.NoError(t, s.UpsertNode(2, b))

	all, err := s.Nodes(nil)
	must.NoError(t, err)
	must.Len(t, 2, all)
	must.Eq(t, a.ID, all[0].ID)

	cases := map[string]int{"aaa": 2, "aaaa": 1, "aaab0000": 1, "b": 0}
	for prefix, want := range cases {
		got, err := s.NodesByIDPrefix(nil, prefix)
		must.NoError(t, err)
		must.Len(t, want, got, must.Sprintf("prefix %q", prefix))
	}
	gpu, err := s.NodesByNodePool(nil, "gpu")
	must.NoError(t, err)
	must.Len(t, 1, gpu)
}

func TestNodes_Delete(t *testing.T) {
	s := testStore(t)
	a, b := mockNode(), mockNode()
	must.NoError(t, s.UpsertNode(1, a))
	must.NoError(t, s.UpsertNode(2, b))

	// One unknown ID: nothing is deleted.
	err := s.DeleteNodes(3, []string{a.ID, "missing"})
	must.True(t, errors.Is(err, structs.ErrUnknownNode))
	n, _ := s.NodeByID(nil, a.ID)
	must.NotNil(t, n)
	must.Eq(t, 2, mustIndex(t, s, TableNodes))

	must.NoError(t, s.DeleteNodes(4, []string{a.ID, b.ID}))
	all, _ := s.Nodes(nil)
	must.Len(t, 0, all)
	must.Eq(t, 4, mustIndex(t, s, TableNodes))
}

func TestNodes_UpdateStatus(t *testing.T) {
	s := testStore(t)
	n := mockNode()
	must.NoError(t, s.UpsertNode(1, n))

	ev := structs.NewNodeEvent(structs.NodeEventSubsystemHeartbeat, structs.NodeEventMsgHeartbeatMissed, time.Unix(5, 0).UTC())
	must.NoError(t, s.UpdateNodeStatus(2, n.ID, structs.NodeStatusDown, 1_700_000_050, ev))
	out, _ := s.NodeByID(nil, n.ID)
	must.Eq(t, structs.NodeStatusDown, out.Status)
	must.Eq(t, 1_700_000_050, out.StatusUpdatedAt)
	must.Eq(t, 2, out.ModifyIndex)
	must.Len(t, 2, out.Events)
	must.Eq(t, 2, out.Events[1].CreateIndex)
	// The caller's event is copied, not stored.
	must.Eq(t, 0, ev.CreateIndex)

	must.ErrorContains(t, s.UpdateNodeStatus(3, n.ID, "sleepy", 0, nil), `invalid status "sleepy"`)
	must.True(t, errors.Is(s.UpdateNodeStatus(3, "missing", structs.NodeStatusReady, 0, nil), structs.ErrUnknownNode))
	must.Eq(t, 2, mustIndex(t, s, TableNodes))
}

func TestNodes_Drain(t *testing.T) {
	s := testStore(t)
	n := mockNode()
	must.NoError(t, s.UpsertNode(1, n))

	drain := &structs.DrainStrategy{DrainSpec: structs.DrainSpec{Deadline: time.Hour}}
	meta := map[string]string{"reason": "kernel upgrade"}
	must.NoError(t, s.UpdateNodeDrain(2, n.ID, drain, false, 100, nil, meta))
	out, _ := s.NodeByID(nil, n.ID)
	must.Eq(t, structs.NodeSchedulingIneligible, out.SchedulingEligibility)
	must.Eq(t, structs.DrainStatusDraining, out.LastDrain.Status)
	must.Eq(t, time.Unix(100, 0).UTC(), out.LastDrain.StartedAt)
	must.Eq(t, meta, out.LastDrain.Meta)

	// Eligibility cannot be restored while draining.
	err := s.UpdateNodeEligibility(3, n.ID, structs.NodeSchedulingEligible, 101, nil)
	must.ErrorContains(t, err, "while it is draining")

	// Cancel with markEligible.
	must.NoError(t, s.UpdateNodeDrain(3, n.ID, nil, true, 200, nil, nil))
	out, _ = s.NodeByID(nil, n.ID)
	must.Nil(t, out.DrainStrategy)
	must.Eq(t, structs.NodeSchedulingEligible, out.SchedulingEligibility)
	must.Eq(t, structs.DrainStatusCanceled, out.LastDrain.Status)
	must.Eq(t, time.Unix(200, 0).UTC(), out.LastDrain.UpdatedAt)
	must.Eq(t, meta, out.LastDrain.Meta)

	// The drainer completes a drain through the batch update.
	must.NoError(t, s.UpdateNodeDrain(4, n.ID, drain, false, 300, nil, nil))
	ev := structs.NewNodeEvent(structs.NodeEventSubsystemDrain, structs.NodeEventMsgDrainComplete, time.Unix(400, 0).UTC())
	must.NoError(t, s.BatchUpdateNodeDrain(5, map[string]*structs.DrainUpdate{n.ID: {}}, 400,
		map[string]*structs.NodeEvent{n.ID: ev}))
	out, _ = s.NodeByID(nil, n.ID)
	must.Nil(t, out.DrainStrategy)
	must.Eq(t, structs.NodeSchedulingIneligible, out.SchedulingEligibility)
	must.Eq(t, structs.DrainStatusComplete, out.LastDrain.Status)
	must.Eq(t, structs.NodeEventMsgDrainComplete, out.Events[len(out.Events)-1].Message)

	must.True(t, errors.Is(s.UpdateNodeDrain(6, "missing", nil, false, 0, nil, nil), structs.ErrUnknownNode))
}

func TestNodes_Eligibility(t *testing.T) {
	s := testStore(t)
	n := mockNode()
	must.NoError(t, s.UpsertNode(1, n))
	cases := []struct {
		name, value string
		wantErr     string
	}{
		{"ineligible", structs.NodeSchedulingIneligible, ""},
		{"eligible", structs.NodeSchedulingEligible, ""},
		{"bogus", "maybe", `invalid scheduling eligibility "maybe"`},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := s.UpdateNodeEligibility(uint64(10+i), n.ID, tc.value, 7, nil)
			if tc.wantErr != "" {
				must.ErrorContains(t, err, tc.wantErr)
				return
			}
			must.NoError(t, err)
			out, _ := s.NodeByID(nil, n.ID)
			must.Eq(t, tc.value, out.SchedulingEligibility)
			must.Eq(t, uint64(10+i), out.ModifyIndex)
		})
	}
}

// Nodes keeps the last listing per version of the nodes table; every
// snapshot must still see exactly its own nodes, and callers may reorder
// what they get.
func TestNodes_ListingCachePerVersion(t *testing.T) {
	s := testStore(t)
	must.NoError(t, s.UpsertNode(1, mockNode()))
	must.NoError(t, s.UpsertNode(2, mockNode()))
	old := s.Snapshot()

	first, err := old.Nodes(nil)
	must.NoError(t, err)
	must.Len(t, 2, first)
	first[0], first[1] = nil, nil // the caller's slice, not the cache's

	must.NoError(t, s.UpsertNode(3, mockNode()))
	cur, _ := s.Nodes(nil)
	must.Len(t, 3, cur)
	again, _ := old.Nodes(nil)
	must.Len(t, 2, again)
	must.NotNil(t, again[0])
	cur2, _ := s.Snapshot().Nodes(nil)
	must.Len(t, 3, cur2)

	// An in-place status change (same node count) is a new version too.
	id := cur[0].ID
	must.NoError(t, s.UpdateNodeStatus(4, id, structs.NodeStatusDown, 1, nil))
	after, _ := s.Snapshot().SchedulerView().Nodes()
	for _, n := range after {
		if n.ID == id {
			must.Eq(t, structs.NodeStatusDown, n.Status)
		}
	}
}

// A node marked down is re-synced only once its client reports its allocs
// again; later reports do not rewrite the node.
func TestNodes_MissedHeartbeatAndAllocResync(t *testing.T) {
	s := testStore(t)
	node := mockNode()
	must.NoError(t, s.UpsertNode(10, node))
	job := registered(t, s, 11, mockJob())
	alloc := mockAlloc(job, node)
	must.NoError(t, s.UpsertAllocs(12, []*structs.Allocation{alloc}))

	must.NoError(t, s.UpdateNodeStatus(13, node.ID, structs.NodeStatusDown, 1, nil))
	got, _ := s.NodeByID(nil, node.ID)
	must.Eq(t, 13, got.LastMissedHeartbeatIndex)
	must.True(t, got.LastAllocUpdateIndex <= got.LastMissedHeartbeatIndex)

	// Back to ready: not a missed heartbeat.
	must.NoError(t, s.UpdateNodeStatus(14, node.ID, structs.NodeStatusReady, 2, nil))
	got, _ = s.NodeByID(nil, node.ID)
	must.Eq(t, 13, got.LastMissedHeartbeatIndex)

	update := &structs.Allocation{ID: alloc.ID, ClientStatus: structs.AllocClientStatusRunning}
	must.NoError(t, s.UpdateAllocsFromClient(15, []*structs.Allocation{update}))
	got, _ = s.NodeByID(nil, node.ID)
	must.Eq(t, 15, got.LastAllocUpdateIndex)
	must.Eq(t, 15, got.ModifyIndex)

	// Already synced: the node is left alone.
	update = &structs.Allocation{ID: alloc.ID, ClientStatus: structs.AllocClientStatusRunning}
	must.NoError(t, s.UpdateAllocsFromClient(16, []*structs.Allocation{update}))
	got, _ = s.NodeByID(nil, node.ID)
	must.Eq(t, 15, got.LastAllocUpdateIndex)
	must.Eq(t, 15, got.ModifyIndex)
	must.Eq(t, 15, mustIndex(t, s, TableNodes))
}
