package planjudge

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/state/statetest"
	"github.com/opennomad/nomad/structs"
)

func ids(allocs []*structs.Allocation) []string {
	out := make([]string, len(allocs))
	for i, a := range allocs {
		out[i] = a.ID
	}
	return out
}

// placing is a Raft entry placing allocs.
func placing(allocs ...*structs.Allocation) *structs.ApplyPlanResultsRequest {
	return &structs.ApplyPlanResultsRequest{AllocUpdateRequest: structs.AllocUpdateRequest{AllocsUpdated: allocs}}
}

// TestInFlight walks what pending results add to a node and what they do
// not take away.
func TestInFlight(t *testing.T) {
	s := statetest.NewStore(t)
	n, j := s.Node(), s.Job()
	a := s.Alloc(j, n, 1000)
	committed := func() []*structs.Allocation {
		live, err := s.StateStore().AllocsByNodeTerminal(nil, n.ID, false)
		must.NoError(t, err)
		return live
	}
	p := NewInFlight()

	// Seq 1 places b: it counts at once.
	b := newTestAlloc(j, n, 2000)
	p.Add(1, view(s), &structs.PlanResult{}, placing(b))
	got, changed := p.allocsOn(n.ID, committed())
	must.True(t, changed)
	must.Eq(t, []string{a.ID, b.ID}, ids(got))
	must.Zero(t, p.releaseOn(n.ID)) // placing releases nothing

	// Seq 2 stops a and updates nothing: a still counts, but the node
	// has a pending release a rejected plan may wait for.
	stop := &structs.AllocStop{ID: a.ID, DesiredDescription: structs.AllocNotNeeded}
	p.Add(2, view(s), &structs.PlanResult{NodeUpdate: map[string][]*structs.AllocStop{n.ID: {stop}}}, placing())
	got, _ = p.allocsOn(n.ID, committed())
	must.Eq(t, []string{a.ID, b.ID}, ids(got))
	must.Eq(t, 2, p.releaseOn(n.ID))

	// Seq 3 updates a in place: both versions count until it commits.
	upd := inPlace(a, 500)
	p.Add(3, view(s), &structs.PlanResult{}, placing(upd))
	got, _ = p.allocsOn(n.ID, committed())
	must.Eq(t, []string{a.ID, b.ID, a.ID}, ids(got))
	must.Eq(t, 3, p.releaseOn(n.ID))

	// Seq 1's commit lands in the store before the applier absorbs it:
	// b counts once.
	b.ClientStatus = structs.AllocClientStatusPending
	s.UpsertAllocs(b.Copy())
	got, _ = p.allocsOn(n.ID, committed())
	must.Eq(t, []string{a.ID, b.ID, a.ID}, ids(got))

	p.Remove(1)
	p.Remove(3)
	must.Eq(t, 2, p.releaseOn(n.ID))
	got, changed = p.allocsOn(n.ID, committed())
	must.False(t, changed)
	must.Len(t, 2, got)
	p.Remove(2)
	must.MapEmpty(t, p.nodes)
	must.MapEmpty(t, p.touched)

	var none *InFlight
	must.Zero(t, none.releaseOn(n.ID))
}
