package nomad

import (
	"fmt"
	"strings"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// evaluate judges plan against the committed state alone.
func evaluate(t *testing.T, s *testState, plan *structs.Plan) *planEvaluation {
	t.Helper()
	snap := s.snapshot()
	must.NoError(t, denormalizePlan(snap, plan))
	ev, err := evaluatePlan(planView{snap: snap}, plan, 1)
	must.NoError(t, err)
	return ev
}

// TestEvaluateNode walks the per-node rules. Every node offers 3900 MHz
// and 7936 MB; every alloc asks for 256 MB unless said otherwise.
func TestEvaluateNode(t *testing.T) {
	withMem := func(a *structs.Allocation, mb int64) *structs.Allocation {
		for _, tr := range a.AllocatedResources.Tasks {
			tr.Memory.MemoryMB = mb
		}
		return a
	}
	withPort := func(a *structs.Allocation, port int) *structs.Allocation {
		a.AllocatedResources.Shared.Ports = structs.AllocatedPorts{{Label: "http", Value: port, To: port, HostIP: mock.NodeIP}}
		return a
	}
	draining := func(n *structs.Node) { n.DrainStrategy = &structs.DrainStrategy{} }

	cases := []struct {
		name string
		// setup writes state and returns a plan for node.
		setup      func(s *testState) (plan *structs.Plan, node string)
		wantReason string // "" means the node's part fits
	}{
		{
			name: "stops always fit, even on a down node",
			setup: func(s *testState) (*structs.Plan, string) {
				n, j := s.node(), s.job()
				a := s.alloc(j, n, 3500)
				s.nodeStatus(n, structs.NodeStatusDown)
				return newPlan(j).stop(a).build(), n.ID
			},
		},
		{
			name: "a node that does not exist",
			setup: func(s *testState) (*structs.Plan, string) {
				n, j := mock.Node(), s.job()
				return newPlan(j).place(newTestAlloc(j, n, 500)).build(), n.ID
			},
			wantReason: rejectNodeMissing,
		},
		{
			name: "an initializing node",
			setup: func(s *testState) (*structs.Plan, string) {
				n, j := s.node(mock.NodeStatus(structs.NodeStatusInit)), s.job()
				return newPlan(j).place(newTestAlloc(j, n, 500)).build(), n.ID
			},
			wantReason: rejectNodeNotReady,
		},
		{
			name: "a down node takes allocs marked lost",
			setup: func(s *testState) (*structs.Plan, string) {
				n, j := s.node(), s.job()
				a := s.alloc(j, n, 500)
				s.nodeStatus(n, structs.NodeStatusDown)
				lost := a.Copy()
				lost.ClientStatus = structs.AllocClientStatusLost
				return newPlan(j).place(lost).build(), n.ID
			},
		},
		{
			name: "a down node takes no new alloc",
			setup: func(s *testState) (*structs.Plan, string) {
				n, j := s.node(), s.job()
				s.nodeStatus(n, structs.NodeStatusDown)
				return newPlan(j).place(newTestAlloc(j, n, 500)).build(), n.ID
			},
			wantReason: rejectNodeDown,
		},
		{
			name: "a disconnected node takes allocs marked unknown",
			setup: func(s *testState) (*structs.Plan, string) {
				n, j := s.node(), s.job()
				a := s.alloc(j, n, 500)
				s.nodeStatus(n, structs.NodeStatusDisconnected)
				unknown := a.Copy()
				unknown.ClientStatus = structs.AllocClientStatusUnknown
				return newPlan(j).place(unknown).build(), n.ID
			},
		},
		{
			name: "a disconnected node takes no new alloc",
			setup: func(s *testState) (*structs.Plan, string) {
				n, j := s.node(), s.job()
				s.nodeStatus(n, structs.NodeStatusDisconnected)
				return newPlan(j).place(newTestAlloc(j, n, 500)).build(), n.ID
			},
			wantReason: rejectNodeDisconnected,
		},
		{
			name: "an ineligible node takes no new alloc",
			setup: func(s *testState) (*structs.Plan, string) {
				n := s.node(func(n *structs.Node) { n.SchedulingEligibility = structs.NodeSchedulingIneligible })
				j := s.job()
				return newPlan(j).place(newTestAlloc(j, n, 500)).build(), n.ID
			},
			wantReason: rejectNodeIneligible,
		},
		{
			name: "a draining node takes no new alloc",
			setup: func(s *testState) (*structs.Plan, string) {
				n, j := s.node(draining), s.job()
				return newPlan(j).place(newTestAlloc(j, n, 500)).build(), n.ID
			},
			wantReason: rejectNodeIneligible,
		},
		{
			name: "an ineligible node takes in-place updates, unchecked: 3500 -> 3900",
			setup: func(s *testState) (*structs.Plan, string) {
				n, j := s.node(), s.job()
				a := s.alloc(j, n, 3500)
				s.mustWrite(func(tx *state.Txn) error {
					return tx.UpdateNodeEligibility(n.ID, structs.NodeSchedulingIneligible, 1, nil)
				})
				return newPlan(j).place(inPlace(a, 3900)).build(), n.ID
			},
		},
		{
			name: "room left: 3000 + 500 = 3500 <= 3900",
			setup: func(s *testState) (*structs.Plan, string) {
				n, j := s.node(), s.job()
				s.alloc(j, n, 3000)
				return newPlan(j).place(newTestAlloc(j, n, 500)).build(), n.ID
			},
		},
		{
			name: "exactly full: 3400 + 500 = 3900",
			setup: func(s *testState) (*structs.Plan, string) {
				n, j := s.node(), s.job()
				s.alloc(j, n, 3400)
				return newPlan(j).place(newTestAlloc(j, n, 500)).build(), n.ID
			},
		},
		{
			name: "cpu exhausted: 3500 + 500 = 4000 > 3900",
			setup: func(s *testState) (*structs.Plan, string) {
				n, j := s.node(), s.job()
				s.alloc(j, n, 3500)
				return newPlan(j).place(newTestAlloc(j, n, 500)).build(), n.ID
			},
			wantReason: "cpu",
		},
		{
			name: "the plan's own allocs add up: 2000 + 2000 > 3900",
			setup: func(s *testState) (*structs.Plan, string) {
				n, j := s.node(), s.job()
				return newPlan(j).place(newTestAlloc(j, n, 2000), newTestAlloc(j, n, 2000)).build(), n.ID
			},
			wantReason: "cpu",
		},
		{
			name: "memory exhausted: 7800 + 256 = 8056 > 7936",
			setup: func(s *testState) (*structs.Plan, string) {
				n, j := s.node(), s.job()
				big := withMem(newTestAlloc(j, n, 100), 7800)
				big.ClientStatus = structs.AllocClientStatusRunning
				s.upsertAllocs(big)
				return newPlan(j).place(newTestAlloc(j, n, 100)).build(), n.ID
			},
			wantReason: "memory",
		},
		{
			name: "a stop frees its room: 3500 stopped, 3900 placed",
			setup: func(s *testState) (*structs.Plan, string) {
				n, j := s.node(), s.job()
				a := s.alloc(j, n, 3500)
				return newPlan(j).stop(a).place(newTestAlloc(j, n, 3900)).build(), n.ID
			},
		},
		{
			name: "a preemption frees its room: 3500 preempted, 3900 placed",
			setup: func(s *testState) (*structs.Plan, string) {
				n, low, j := s.node(), s.job(), s.job()
				victim := s.alloc(low, n, 3500)
				p := newTestAlloc(j, n, 3900)
				return newPlan(j).preempt(p.ID, victim).place(p).build(), n.ID
			},
		},
		{
			name: "an in-place update replaces the old version: 3500 -> 3000, + 900 = 3900",
			setup: func(s *testState) (*structs.Plan, string) {
				n, j := s.node(), s.job()
				a := s.alloc(j, n, 3500)
				return newPlan(j).place(inPlace(a, 3000), newTestAlloc(j, n, 900)).build(), n.ID
			},
		},
		{
			name: "terminal allocs hold nothing: 3500 complete, 3900 placed",
			setup: func(s *testState) (*structs.Plan, string) {
				n, j := s.node(), s.job()
				a := s.alloc(j, n, 3500).Copy()
				a.ClientStatus = structs.AllocClientStatusComplete
				s.clientUpdate(a)
				return newPlan(j).place(newTestAlloc(j, n, 3900)).build(), n.ID
			},
		},
		{
			name: "a port taken twice",
			setup: func(s *testState) (*structs.Plan, string) {
				n, j := s.node(), s.job()
				a := withPort(newTestAlloc(j, n, 100), 23456)
				s.upsertAllocs(a)
				return newPlan(j).place(withPort(newTestAlloc(j, n, 100), 23456)).build(), n.ID
			},
			wantReason: structs.DimensionNetwork,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestState(t)
			plan, node := tc.setup(s)
			ev := evaluate(t, s, plan)
			if tc.wantReason == "" {
				must.SliceEmpty(t, ev.result.RejectedNodes)
				must.Eq(t, len(plan.NodeAllocation[node]), len(ev.result.NodeAllocation[node]))
				must.Eq(t, len(plan.NodeUpdate[node]), len(ev.result.NodeUpdate[node]))
				must.Zero(t, ev.result.RefreshIndex)
				return
			}
			must.Eq(t, []string{node}, ev.result.RejectedNodes)
			must.True(t, strings.HasPrefix(ev.reasons[0], tc.wantReason), must.Sprintf("reason %q, want %q", ev.reasons[0], tc.wantReason))
			must.MapNotContainsKey(t, ev.result.NodeAllocation, node)
			must.Positive(t, ev.result.RefreshIndex)
		})
	}
}

// TestEvaluatePlan_PartialCommit: one node fits, one does not; the
// fitting part is kept, the scheduler is told to refresh.
func TestEvaluatePlan_PartialCommit(t *testing.T) {
	s := newTestState(t)
	good, full, j := s.node(), s.node(), s.job()
	s.alloc(j, full, 3500) // 3500 + 500 > 3900
	old := s.alloc(j, good, 1000)
	plan := newPlan(j).
		stop(old).
		place(newTestAlloc(j, good, 500)).
		place(newTestAlloc(j, full, 500)).
		build()

	ev := evaluate(t, s, plan)
	r := ev.result
	must.Eq(t, []string{full.ID}, r.RejectedNodes)
	must.Eq(t, []string{"cpu"}, ev.reasons)
	must.Len(t, 1, r.NodeAllocation[good.ID])
	must.Len(t, 1, r.NodeUpdate[good.ID])
	must.MapNotContainsKey(t, r.NodeAllocation, full.ID)
	// The newest write to allocs or nodes: the last alloc above.
	must.Eq(t, s.latest(), r.RefreshIndex)
	full2, expected, actual := r.FullCommit(plan)
	must.False(t, full2)
	must.Eq(t, 2, expected)
	must.Eq(t, 1, actual)
}

// TestEvaluatePlan_AllAtOnce: one failing node rejects everything.
func TestEvaluatePlan_AllAtOnce(t *testing.T) {
	s := newTestState(t)
	good, full, j := s.node(), s.node(), s.job()
	s.alloc(j, full, 3500)
	old := s.alloc(j, good, 1000)
	plan := newPlan(j).allAtOnce().
		stop(old).
		place(newTestAlloc(j, good, 500)).
		place(newTestAlloc(j, full, 500)).
		build()
	plan.Deployment = structs.NewDeployment(j, 50, testEpoch)
	plan.DeploymentUpdates = []*structs.DeploymentStatusUpdate{{DeploymentID: "d", Status: structs.DeploymentStatusCancelled}}

	r := evaluate(t, s, plan).result
	must.MapEmpty(t, r.NodeAllocation)
	must.MapEmpty(t, r.NodeUpdate)
	must.MapEmpty(t, r.NodePreemptions)
	must.Nil(t, r.Deployment)
	must.SliceEmpty(t, r.DeploymentUpdates)
	must.Eq(t, []string{full.ID}, r.RejectedNodes)
	must.Positive(t, r.RefreshIndex)
	must.True(t, r.IsNoOp())
}

// TestEvaluatePlan_FullCommit keeps everything and asks for no refresh.
func TestEvaluatePlan_FullCommit(t *testing.T) {
	s := newTestState(t)
	n1, n2, j := s.node(), s.node(), s.job()
	plan := newPlan(j).place(newTestAlloc(j, n1, 500), newTestAlloc(j, n2, 500)).build()
	plan.Deployment = structs.NewDeployment(j, 50, testEpoch)
	r := evaluate(t, s, plan).result
	must.SliceEmpty(t, r.RejectedNodes)
	must.Zero(t, r.RefreshIndex)
	must.Eq(t, plan.Deployment, r.Deployment)
	full, _, _ := r.FullCommit(plan)
	must.True(t, full)
}

// TestEvaluatePlan_PreemptionsOfStoppedAllocsDropped: a victim that
// stopped meanwhile is not preempted again.
func TestEvaluatePlan_PreemptionsOfStoppedAllocsDropped(t *testing.T) {
	s := newTestState(t)
	n, low, j := s.node(), s.job(), s.job()
	live := s.alloc(low, n, 1000)
	gone := s.alloc(low, n, 1000).Copy()
	gone.ClientStatus = structs.AllocClientStatusFailed
	s.clientUpdate(gone)
	p := newTestAlloc(j, n, 2500)
	plan := newPlan(j).preempt(p.ID, live, gone).place(p).build()

	r := evaluate(t, s, plan).result
	must.Len(t, 1, r.NodePreemptions[n.ID])
	must.Eq(t, live.ID, r.NodePreemptions[n.ID][0].ID)
}

// TestEvaluatePlan_PlacedCanariesTrimmed: a partial commit counts only the
// canaries actually placed; c0, placed by an earlier plan, stays.
func TestEvaluatePlan_PlacedCanariesTrimmed(t *testing.T) {
	s := newTestState(t)
	good, full, j := s.node(), s.node(), s.job()
	s.alloc(j, full, 3500)
	c1, c2 := newTestAlloc(j, good, 500), newTestAlloc(j, full, 500)
	plan := newPlan(j).place(c1, c2).build()
	d := structs.NewDeployment(j, 50, testEpoch)
	c0 := s.alloc(j, good, 500)
	d.TaskGroups = map[string]*structs.DeploymentState{"web": {PlacedCanaries: []string{c0.ID, c1.ID, c2.ID}, DesiredCanaries: 3}}
	plan.Deployment = d

	r := evaluate(t, s, plan).result
	must.Eq(t, []string{c0.ID, c1.ID}, r.Deployment.TaskGroups["web"].PlacedCanaries)
	must.Eq(t, []string{c0.ID, c1.ID, c2.ID}, plan.Deployment.TaskGroups["web"].PlacedCanaries) // the plan's is untouched
}

// TestEvaluatePlan_Parallel: spreading a large plan over goroutines
// gives the serial answer.
func TestEvaluatePlan_Parallel(t *testing.T) {
	s := newTestState(t)
	j := s.job()
	b := newPlan(j)
	var full []string
	for i := range 3 * parallelEvalMinNodes {
		n := s.node()
		if i%5 == 0 {
			s.alloc(j, n, 3500)
			full = append(full, n.ID)
		}
		b.place(newTestAlloc(j, n, 500))
	}
	plan := b.build()
	snap := s.snapshot()

	serial, err := evaluatePlan(planView{snap: snap}, plan, 1)
	must.NoError(t, err)
	parallel, err := evaluatePlan(planView{snap: snap}, plan, 4)
	must.NoError(t, err)
	must.Eq(t, serial.result, parallel.result)
	must.SliceContainsAll(t, full, parallel.result.RejectedNodes)

	plan.AllAtOnce = true
	r, err := evaluatePlan(planView{snap: snap}, plan, 4)
	must.NoError(t, err)
	must.MapEmpty(t, r.result.NodeAllocation)
	must.SliceNotEmpty(t, r.result.RejectedNodes)
}

// TestDenormalizePlan: stubs sent by a worker come back whole; a stub of
// an alloc that is gone fails the plan.
func TestDenormalizePlan(t *testing.T) {
	s := newTestState(t)
	n, j := s.node(), s.job()
	stopped, victim := s.alloc(j, n, 500), s.alloc(j, n, 500)
	plan := newPlan(j).stop(stopped).preempt("p", victim).build()
	plan.NodeUpdate[n.ID][0].FollowupEvalID = "follow"

	wire := normalizePlan(plan)
	must.Eq(t, "", wire.NodeUpdate[n.ID][0].NodeID)
	must.Eq(t, n.ID, plan.NodeUpdate[n.ID][0].NodeID) // the scheduler's plan is untouched

	must.NoError(t, denormalizePlan(s.snapshot(), wire))
	u := wire.NodeUpdate[n.ID][0]
	must.Eq(t, n.ID, u.NodeID)
	must.Eq(t, structs.AllocDesiredStatusStop, u.DesiredStatus)
	must.Eq(t, structs.AllocNotNeeded, u.DesiredDescription)
	must.Eq(t, "follow", u.FollowupEvalID)
	must.NotNil(t, u.AllocatedResources)
	p := wire.NodePreemptions[n.ID][0]
	must.Eq(t, structs.AllocDesiredStatusEvict, p.DesiredStatus)
	must.Eq(t, "p", p.PreemptedByAllocation)

	missing := normalizePlan(newPlan(j).stop(newTestAlloc(j, n, 1)).build())
	err := denormalizePlan(s.snapshot(), missing)
	must.ErrorIs(t, err, structs.ErrUnknownAlloc)
	must.StrContains(t, err.Error(), "to stop")
}

func TestRefreshIndex_EmptyStore(t *testing.T) {
	s := newTestState(t)
	_, err := refreshIndex(s.snapshot())
	must.Error(t, err)
	s.job()
	idx, err := refreshIndex(s.snapshot())
	must.NoError(t, err)
	must.Eq(t, s.latest(), idx)
}

// BenchmarkEvaluatePlan measures judging plans touching many nodes, one
// alloc each, inline and spread over goroutines.
func BenchmarkEvaluatePlan(b *testing.B) {
	for _, nodes := range []int{16, 64, 256, 1024} {
		s := newTestState(b)
		j := s.job()
		bld := newPlan(j)
		for range nodes {
			n := s.node()
			s.alloc(j, n, 1000)
			bld.place(newTestAlloc(j, n, 500))
		}
		plan := bld.build()
		snap := s.snapshot()
		nodeIDs := planNodes(plan)
		v := planView{snap: snap}
		b.Run(fmt.Sprintf("nodes=%d/serial", nodes), func(b *testing.B) {
			for b.Loop() {
				evaluateNodesSerial(v, plan, nodeIDs)
			}
		})
		b.Run(fmt.Sprintf("nodes=%d/parallel=2", nodes), func(b *testing.B) {
			for b.Loop() {
				evaluateNodesParallel(v, plan, nodeIDs, 2)
			}
		})
	}
}
