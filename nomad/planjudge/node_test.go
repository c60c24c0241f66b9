package planjudge

import (
	"strings"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/nomad/state/statetest"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// TestJudgeNode walks the per-node rules. Every node offers 3900 MHz
// and 7936 MB; every alloc asks for 256 MB unless said otherwise.
func TestJudgeNode(t *testing.T) {
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
		setup      func(s *statetest.Store) (plan *structs.Plan, node string)
		wantReason string // "" means the node's part fits
	}{
		{
			name: "stops always fit, even on a down node",
			setup: func(s *statetest.Store) (*structs.Plan, string) {
				n, j := s.Node(), s.Job()
				a := s.Alloc(j, n, 3500)
				s.NodeStatus(n, structs.NodeStatusDown)
				return newPlan(j).Stop(a).Build(), n.ID
			},
		},
		{
			name: "a node that does not exist",
			setup: func(s *statetest.Store) (*structs.Plan, string) {
				n, j := mock.Node(), s.Job()
				return newPlan(j).Place(newTestAlloc(j, n, 500)).Build(), n.ID
			},
			wantReason: rejectNodeMissing,
		},
		{
			name: "an initializing node",
			setup: func(s *statetest.Store) (*structs.Plan, string) {
				n, j := s.Node(mock.NodeStatus(structs.NodeStatusInit)), s.Job()
				return newPlan(j).Place(newTestAlloc(j, n, 500)).Build(), n.ID
			},
			wantReason: rejectNodeNotReady,
		},
		{
			name: "a down node takes allocs marked lost",
			setup: func(s *statetest.Store) (*structs.Plan, string) {
				n, j := s.Node(), s.Job()
				a := s.Alloc(j, n, 500)
				s.NodeStatus(n, structs.NodeStatusDown)
				lost := a.Copy()
				lost.ClientStatus = structs.AllocClientStatusLost
				return newPlan(j).Place(lost).Build(), n.ID
			},
		},
		{
			name: "a down node takes no new alloc",
			setup: func(s *statetest.Store) (*structs.Plan, string) {
				n, j := s.Node(), s.Job()
				s.NodeStatus(n, structs.NodeStatusDown)
				return newPlan(j).Place(newTestAlloc(j, n, 500)).Build(), n.ID
			},
			wantReason: rejectNodeDown,
		},
		{
			name: "a disconnected node takes allocs marked unknown",
			setup: func(s *statetest.Store) (*structs.Plan, string) {
				n, j := s.Node(), s.Job()
				a := s.Alloc(j, n, 500)
				s.NodeStatus(n, structs.NodeStatusDisconnected)
				unknown := a.Copy()
				unknown.ClientStatus = structs.AllocClientStatusUnknown
				return newPlan(j).Place(unknown).Build(), n.ID
			},
		},
		{
			name: "a disconnected node takes no new alloc",
			setup: func(s *statetest.Store) (*structs.Plan, string) {
				n, j := s.Node(), s.Job()
				s.NodeStatus(n, structs.NodeStatusDisconnected)
				return newPlan(j).Place(newTestAlloc(j, n, 500)).Build(), n.ID
			},
			wantReason: rejectNodeDisconnected,
		},
		{
			name: "an ineligible node takes no new alloc",
			setup: func(s *statetest.Store) (*structs.Plan, string) {
				n := s.Node(func(n *structs.Node) { n.SchedulingEligibility = structs.NodeSchedulingIneligible })
				j := s.Job()
				return newPlan(j).Place(newTestAlloc(j, n, 500)).Build(), n.ID
			},
			wantReason: rejectNodeIneligible,
		},
		{
			name: "a draining node takes no new alloc",
			setup: func(s *statetest.Store) (*structs.Plan, string) {
				n, j := s.Node(draining), s.Job()
				return newPlan(j).Place(newTestAlloc(j, n, 500)).Build(), n.ID
			},
			wantReason: rejectNodeIneligible,
		},
		{
			name: "an ineligible node takes in-place updates, unchecked: 3500 -> 3900",
			setup: func(s *statetest.Store) (*structs.Plan, string) {
				n, j := s.Node(), s.Job()
				a := s.Alloc(j, n, 3500)
				s.MustWrite(func(tx *state.Txn) error {
					return tx.UpdateNodeEligibility(n.ID, structs.NodeSchedulingIneligible, 1, nil)
				})
				return newPlan(j).Place(inPlace(a, 3900)).Build(), n.ID
			},
		},
		{
			name: "room left: 3000 + 500 = 3500 <= 3900",
			setup: func(s *statetest.Store) (*structs.Plan, string) {
				n, j := s.Node(), s.Job()
				s.Alloc(j, n, 3000)
				return newPlan(j).Place(newTestAlloc(j, n, 500)).Build(), n.ID
			},
		},
		{
			name: "exactly full: 3400 + 500 = 3900",
			setup: func(s *statetest.Store) (*structs.Plan, string) {
				n, j := s.Node(), s.Job()
				s.Alloc(j, n, 3400)
				return newPlan(j).Place(newTestAlloc(j, n, 500)).Build(), n.ID
			},
		},
		{
			name: "cpu exhausted: 3500 + 500 = 4000 > 3900",
			setup: func(s *statetest.Store) (*structs.Plan, string) {
				n, j := s.Node(), s.Job()
				s.Alloc(j, n, 3500)
				return newPlan(j).Place(newTestAlloc(j, n, 500)).Build(), n.ID
			},
			wantReason: "cpu",
		},
		{
			name: "the plan's own allocs add up: 2000 + 2000 > 3900",
			setup: func(s *statetest.Store) (*structs.Plan, string) {
				n, j := s.Node(), s.Job()
				return newPlan(j).Place(newTestAlloc(j, n, 2000), newTestAlloc(j, n, 2000)).Build(), n.ID
			},
			wantReason: "cpu",
		},
		{
			name: "memory exhausted: 7800 + 256 = 8056 > 7936",
			setup: func(s *statetest.Store) (*structs.Plan, string) {
				n, j := s.Node(), s.Job()
				big := withMem(newTestAlloc(j, n, 100), 7800)
				big.ClientStatus = structs.AllocClientStatusRunning
				s.UpsertAllocs(big)
				return newPlan(j).Place(newTestAlloc(j, n, 100)).Build(), n.ID
			},
			wantReason: "memory",
		},
		{
			name: "a stop frees its room: 3500 stopped, 3900 placed",
			setup: func(s *statetest.Store) (*structs.Plan, string) {
				n, j := s.Node(), s.Job()
				a := s.Alloc(j, n, 3500)
				return newPlan(j).Stop(a).Place(newTestAlloc(j, n, 3900)).Build(), n.ID
			},
		},
		{
			name: "a preemption frees its room: 3500 preempted, 3900 placed",
			setup: func(s *statetest.Store) (*structs.Plan, string) {
				n, low, j := s.Node(), s.Job(), s.Job()
				victim := s.Alloc(low, n, 3500)
				p := newTestAlloc(j, n, 3900)
				return newPlan(j).Preempt(p.ID, victim).Place(p).Build(), n.ID
			},
		},
		{
			name: "an in-place update replaces the old version: 3500 -> 3000, + 900 = 3900",
			setup: func(s *statetest.Store) (*structs.Plan, string) {
				n, j := s.Node(), s.Job()
				a := s.Alloc(j, n, 3500)
				return newPlan(j).Place(inPlace(a, 3000), newTestAlloc(j, n, 900)).Build(), n.ID
			},
		},
		{
			name: "terminal allocs hold nothing: 3500 complete, 3900 placed",
			setup: func(s *statetest.Store) (*structs.Plan, string) {
				n, j := s.Node(), s.Job()
				a := s.Alloc(j, n, 3500).Copy()
				a.ClientStatus = structs.AllocClientStatusComplete
				s.ClientUpdate(a)
				return newPlan(j).Place(newTestAlloc(j, n, 3900)).Build(), n.ID
			},
		},
		{
			name: "a port taken twice",
			setup: func(s *statetest.Store) (*structs.Plan, string) {
				n, j := s.Node(), s.Job()
				a := withPort(newTestAlloc(j, n, 100), 23456)
				s.UpsertAllocs(a)
				return newPlan(j).Place(withPort(newTestAlloc(j, n, 100), 23456)).Build(), n.ID
			},
			wantReason: structs.DimensionNetwork,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := statetest.NewStore(t)
			plan, node := tc.setup(s)
			v := judge(t, s, plan)
			if tc.wantReason == "" {
				must.SliceEmpty(t, v.Result.RejectedNodes)
				must.Eq(t, len(plan.NodeAllocation[node]), len(v.Result.NodeAllocation[node]))
				must.Eq(t, len(plan.NodeUpdate[node]), len(v.Result.NodeUpdate[node]))
				must.Zero(t, v.Result.RefreshIndex)
				return
			}
			must.Eq(t, []string{node}, v.Result.RejectedNodes)
			must.True(t, strings.HasPrefix(v.Reasons[0], tc.wantReason), must.Sprintf("reason %q, want %q", v.Reasons[0], tc.wantReason))
			must.MapNotContainsKey(t, v.Result.NodeAllocation, node)
			must.Positive(t, v.Result.RefreshIndex)
		})
	}
}
