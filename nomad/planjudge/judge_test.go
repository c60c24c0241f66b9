package planjudge

import (
	"fmt"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/state/statetest"
	"github.com/opennomad/nomad/structs"
)

// TestJudge_PartialCommit: one node fits, one does not; the
// fitting part is kept, the scheduler is told to refresh.
func TestJudge_PartialCommit(t *testing.T) {
	s := statetest.NewStore(t)
	good, full, j := s.Node(), s.Node(), s.Job()
	s.Alloc(j, full, 3500) // 3500 + 500 > 3900
	old := s.Alloc(j, good, 1000)
	plan := newPlan(j).
		Stop(old).
		Place(newTestAlloc(j, good, 500)).
		Place(newTestAlloc(j, full, 500)).
		Build()

	v := judge(t, s, plan)
	r := v.Result
	must.Eq(t, []string{full.ID}, r.RejectedNodes)
	must.Eq(t, []string{"cpu"}, v.Reasons)
	must.Len(t, 1, r.NodeAllocation[good.ID])
	must.Len(t, 1, r.NodeUpdate[good.ID])
	must.MapNotContainsKey(t, r.NodeAllocation, full.ID)
	// The newest write to allocs or nodes: the last alloc above.
	must.Eq(t, s.Latest(), r.RefreshIndex)
	full2, expected, actual := r.FullCommit(plan)
	must.False(t, full2)
	must.Eq(t, 2, expected)
	must.Eq(t, 1, actual)
}

// TestJudge_AllAtOnce: one failing node rejects everything.
func TestJudge_AllAtOnce(t *testing.T) {
	s := statetest.NewStore(t)
	good, full, j := s.Node(), s.Node(), s.Job()
	s.Alloc(j, full, 3500)
	old := s.Alloc(j, good, 1000)
	plan := newPlan(j).AllAtOnce().
		Stop(old).
		Place(newTestAlloc(j, good, 500)).
		Place(newTestAlloc(j, full, 500)).
		Build()
	plan.Deployment = structs.NewDeployment(j, 50, testEpoch)
	plan.DeploymentUpdates = []*structs.DeploymentStatusUpdate{{DeploymentID: "d", Status: structs.DeploymentStatusCancelled}}

	r := judge(t, s, plan).Result
	must.MapEmpty(t, r.NodeAllocation)
	must.MapEmpty(t, r.NodeUpdate)
	must.MapEmpty(t, r.NodePreemptions)
	must.Nil(t, r.Deployment)
	must.SliceEmpty(t, r.DeploymentUpdates)
	must.Eq(t, []string{full.ID}, r.RejectedNodes)
	must.Positive(t, r.RefreshIndex)
	must.True(t, r.IsNoOp())
}

// TestJudge_FullCommit keeps everything and asks for no refresh.
func TestJudge_FullCommit(t *testing.T) {
	s := statetest.NewStore(t)
	n1, n2, j := s.Node(), s.Node(), s.Job()
	plan := newPlan(j).Place(newTestAlloc(j, n1, 500), newTestAlloc(j, n2, 500)).Build()
	plan.Deployment = structs.NewDeployment(j, 50, testEpoch)
	r := judge(t, s, plan).Result
	must.SliceEmpty(t, r.RejectedNodes)
	must.Zero(t, r.RefreshIndex)
	must.Eq(t, plan.Deployment, r.Deployment)
	full, _, _ := r.FullCommit(plan)
	must.True(t, full)
}

// TestJudge_PreemptionsOfStoppedAllocsDropped: a victim that
// stopped meanwhile is not preempted again.
func TestJudge_PreemptionsOfStoppedAllocsDropped(t *testing.T) {
	s := statetest.NewStore(t)
	n, low, j := s.Node(), s.Job(), s.Job()
	live := s.Alloc(low, n, 1000)
	gone := s.Alloc(low, n, 1000).Copy()
	gone.ClientStatus = structs.AllocClientStatusFailed
	s.ClientUpdate(gone)
	p := newTestAlloc(j, n, 2500)
	plan := newPlan(j).Preempt(p.ID, live, gone).Place(p).Build()

	r := judge(t, s, plan).Result
	must.Len(t, 1, r.NodePreemptions[n.ID])
	must.Eq(t, live.ID, r.NodePreemptions[n.ID][0].ID)
}

// TestJudge_PlacedCanariesTrimmed: a partial commit counts only the
// canaries actually placed; c0, placed by an earlier plan, stays.
func TestJudge_PlacedCanariesTrimmed(t *testing.T) {
	s := statetest.NewStore(t)
	good, full, j := s.Node(), s.Node(), s.Job()
	s.Alloc(j, full, 3500)
	c1, c2 := newTestAlloc(j, good, 500), newTestAlloc(j, full, 500)
	plan := newPlan(j).Place(c1, c2).Build()
	d := structs.NewDeployment(j, 50, testEpoch)
	c0 := s.Alloc(j, good, 500)
	d.TaskGroups = map[string]*structs.DeploymentState{"web": {PlacedCanaries: []string{c0.ID, c1.ID, c2.ID}, DesiredCanaries: 3}}
	plan.Deployment = d

	r := judge(t, s, plan).Result
	must.Eq(t, []string{c0.ID, c1.ID}, r.Deployment.TaskGroups["web"].PlacedCanaries)
	must.Eq(t, []string{c0.ID, c1.ID, c2.ID}, plan.Deployment.TaskGroups["web"].PlacedCanaries) // the plan's is untouched
}

// TestJudge_Parallel: spreading a large plan over goroutines
// gives the serial answer.
func TestJudge_Parallel(t *testing.T) {
	s := statetest.NewStore(t)
	j := s.Job()
	b := newPlan(j)
	var full []string
	for i := range 3 * parallelMinNodes {
		n := s.Node()
		if i%5 == 0 {
			s.Alloc(j, n, 3500)
			full = append(full, n.ID)
		}
		b.Place(newTestAlloc(j, n, 500))
	}
	plan := b.Build()
	v := View{State: view(s)}

	serial, err := Judge(v, plan, 1)
	must.NoError(t, err)
	parallel, err := Judge(v, plan, 4)
	must.NoError(t, err)
	must.Eq(t, serial.Result, parallel.Result)
	must.SliceContainsAll(t, full, parallel.Result.RejectedNodes)

	plan.AllAtOnce = true
	r, err := Judge(v, plan, 4)
	must.NoError(t, err)
	must.MapEmpty(t, r.Result.NodeAllocation)
	must.SliceNotEmpty(t, r.Result.RejectedNodes)
}

func TestRefreshIndex_EmptyStore(t *testing.T) {
	s := statetest.NewStore(t)
	_, err := refreshIndex(view(s))
	must.Error(t, err)
	s.Job()
	idx, err := refreshIndex(view(s))
	must.NoError(t, err)
	must.Eq(t, s.Latest(), idx)
}

// TestJudge_StopsOfUnknownAllocs: a plan that stops or preempts an alloc
// the state does not hold is refused before it reaches Raft, whose state
// store would refuse the whole entry.
func TestJudge_StopsOfUnknownAllocs(t *testing.T) {
	s := statetest.NewStore(t)
	n, j := s.Node(), s.Job()
	live := s.Alloc(j, n, 500)
	gone := newTestAlloc(j, n, 500) // never committed

	for name, plan := range map[string]*structs.Plan{
		"stop":    newPlan(j).Stop(live, gone).Build(),
		"preempt": newPlan(j).Preempt("p", gone).Place(newTestAlloc(j, n, 500)).Build(),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Judge(View{State: view(s)}, plan, 1)
			must.ErrorIs(t, err, structs.ErrUnknownAlloc)
			must.StrContains(t, err.Error(), fmt.Sprintf("alloc %q to %s", gone.ID, name))
			must.StrContains(t, err.Error(), plan.EvalID)
		})
	}
}
