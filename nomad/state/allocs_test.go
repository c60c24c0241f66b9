package state

import (
	"testing"
	"time"

	"github.com/hashicorp/go-memdb"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

func allocFixture(t *testing.T) (*StateStore, *structs.Node, *structs.Job) {
	s := testStore(t)
	node := mockNode()
	must.NoError(t, s.UpsertNode(1, node))
	job := registered(t, s, 2, mockJob())
	return s, node, job
}

func TestAllocs_UpsertNewAndServerUpdate(t *testing.T) {
	s, node, job := allocFixture(t)
	a := mockAlloc(job, node)
	must.NoError(t, s.UpsertAllocs(10, []*structs.Allocation{a}))
	out, err := s.AllocByID(nil, a.ID)
	must.NoError(t, err)
	must.Eq(t, 10, out.CreateIndex)
	must.Eq(t, 10, out.ModifyIndex)
	must.Eq(t, 10, out.AllocModifyIndex)
	must.Eq(t, 10, mustIndex(t, s, TableAllocs))

	// The client reports progress.
	states := map[string]*structs.TaskState{"server": {State: structs.TaskStateRunning}}
	network := &structs.AllocNetworkStatus{InterfaceName: "eth0", Address: "10.0.0.5"}
	must.NoError(t, s.UpdateAllocsFromClient(11, []*structs.Allocation{{
		ID: a.ID, ClientStatus: structs.AllocClientStatusRunning, ClientDescription: "all tasks running",
		TaskStates: states, ModifyTime: 123, NetworkStatus: network,
	}}))
	out, _ = s.AllocByID(nil, a.ID)
	must.Eq(t, structs.AllocClientStatusRunning, out.ClientStatus)
	must.Eq(t, network, out.NetworkStatus)
	must.Eq(t, 11, out.ModifyIndex)
	must.Eq(t, 10, out.AllocModifyIndex) // client writes don't wake the client
	must.Eq(t, 123, out.ModifyTime)
	must.Eq(t, structs.DesiredTransition{}, out.DesiredTransition)

	// A server-side update from a stale copy keeps the client's fields.
	stale := a.Copy()
	stale.Job = nil
	stale.DesiredStatus = structs.AllocDesiredStatusStop
	stale.DesiredDescription = structs.AllocNotNeeded
	must.NoError(t, s.UpsertAllocs(12, []*structs.Allocation{stale}))
	out, _ = s.AllocByID(nil, a.ID)
	must.Eq(t, structs.AllocDesiredStatusStop, out.DesiredStatus)
	must.Eq(t, structs.AllocClientStatusRunning, out.ClientStatus)
	must.Eq(t, "all tasks running", out.ClientDescription)
	must.Eq(t, states, out.TaskStates)
	must.Eq(t, network, out.NetworkStatus)
	must.Eq(t, 10, out.CreateIndex)
	must.Eq(t, 12, out.AllocModifyIndex)
	must.NotNil(t, out.Job) // re-attached from the stored alloc

	// The servers may set lost/unknown over the client.
	for i, st := range []string{structs.AllocClientStatusUnknown, structs.AllocClientStatusLost} {
		up := a.Copy()
		up.ClientStatus = st
		up.ClientDescription = "node gone"
		must.NoError(t, s.UpsertAllocs(uint64(13+i), []*structs.Allocation{up}))
		out, _ = s.AllocByID(nil, a.ID)
		must.Eq(t, st, out.ClientStatus)
		must.Eq(t, "node gone", out.ClientDescription)
	}
}

func TestAllocs_NewAllocSkippedOrRejected(t *testing.T) {
	cases := []struct {
		name    string
		prepare func(t *testing.T, s *StateStore, job *structs.Job)
		edit    func(a *structs.Allocation)
		wantErr string
		stored  bool
	}{
		{name: "job registered", stored: true},
		{name: "job purged", prepare: func(t *testing.T, s *StateStore, job *structs.Job) {
			must.NoError(t, s.DeleteJob(5, job.Namespace, job.ID))
		}},
		{name: "job stopped", prepare: func(t *testing.T, s *StateStore, job *structs.Job) {
			stopped := job.Copy()
			stopped.Stop = true
			must.NoError(t, s.UpsertJob(5, stopped))
		}},
		{name: "job registered again since", prepare: func(t *testing.T, s *StateStore, job *structs.Job) {
			must.NoError(t, s.DeleteJob(5, job.Namespace, job.ID))
			again := job.Copy()
			must.NoError(t, s.UpsertJob(6, again))
		}},
		{name: "terminal alloc of a purged job is still recorded", stored: true,
			prepare: func(t *testing.T, s *StateStore, job *structs.Job) {
				must.NoError(t, s.DeleteJob(5, job.Namespace, job.ID))
			},
			edit: func(a *structs.Allocation) { a.DesiredStatus = structs.AllocDesiredStatusStop }},
		{name: "no job attached", edit: func(a *structs.Allocation) { a.Job = nil }, wantErr: "must carry its job"},
		{name: "no node", edit: func(a *structs.Allocation) { a.NodeID = "" }, wantErr: "NodeID, JobID and Namespace are required"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, node, job := allocFixture(t)
			if tc.prepare != nil {
				tc.prepare(t, s, job)
			}
			a := mockAlloc(job, node)
			if tc.edit != nil {
				tc.edit(a)
			}
			err := s.UpsertAllocs(10, []*structs.Allocation{a})
			if tc.wantErr != "" {
				must.ErrorContains(t, err, tc.wantErr)
				return
			}
			must.NoError(t, err)
			out, _ := s.AllocByID(nil, a.ID)
			must.Eq(t, tc.stored, out != nil)
		})
	}
}

func TestAllocs_ByNodeAndTerminal(t *testing.T) {
	s, node, job := allocFixture(t)
	other := mockNode()
	other.ID = node.ID[:30] + "ffffff" // same length, different node
	must.NoError(t, s.UpsertNode(3, other))
	a, b, c := mockAlloc(job, node), mockAlloc(job, node), mockAlloc(job, other)
	must.NoError(t, s.UpsertAllocs(4, []*structs.Allocation{a, b, c}))

	count := func(allocs []*structs.Allocation, err error) int {
		t.Helper()
		must.NoError(t, err)
		return len(allocs)
	}
	must.Eq(t, 2, count(s.AllocsByNode(nil, node.ID)))
	must.Eq(t, 2, count(s.AllocsByNodeTerminal(nil, node.ID, false)))
	must.Eq(t, 0, count(s.AllocsByNodeTerminal(nil, node.ID, true)))

	// A client finishing an alloc moves it between the terminal buckets.
	must.NoError(t, s.UpdateAllocsFromClient(5, []*structs.Allocation{{ID: a.ID, ClientStatus: structs.AllocClientStatusComplete}}))
	must.Eq(t, 2, count(s.AllocsByNode(nil, node.ID)))
	must.Eq(t, 1, count(s.AllocsByNodeTerminal(nil, node.ID, false)))
	must.Eq(t, 1, count(s.AllocsByNodeTerminal(nil, node.ID, true)))
	must.Eq(t, 1, count(s.AllocsByNode(nil, other.ID)))
	// A prefix of a node ID is not a node.
	must.Eq(t, 0, count(s.AllocsByNode(nil, node.ID[:8])))
}

func TestAllocs_ByJobEvalDeploymentPrefix(t *testing.T) {
	s, node, job := allocFixture(t)
	d := mockDeployment(job)
	must.NoError(t, s.UpsertDeployment(3, d))

	old := mockAlloc(job, node)
	old.ID = "aaaa0000-0000-4000-8000-000000000000"
	old.DeploymentID = d.ID
	must.NoError(t, s.UpsertAllocs(4, []*structs.Allocation{old}))

	// Purge and re-register the job, then place a new alloc.
	must.NoError(t, s.DeleteJob(5, job.Namespace, job.ID))
	fresh := registered(t, s, 6, job.Copy())
	cur := mockAlloc(fresh, node)
	cur.ID = "aaab0000-0000-4000-8000-000000000000"
	cur.EvalID = old.EvalID
	must.NoError(t, s.UpsertAllocs(7, []*structs.Allocation{cur}))

	mine, err := s.AllocsByJob(nil, job.Namespace, job.ID, false)
	must.NoError(t, err)
	must.Len(t, 1, mine)
	must.Eq(t, cur.ID, mine[0].ID)
	all, _ := s.AllocsByJob(nil, job.Namespace, job.ID, true)
	must.Len(t, 2, all)

	byEval, _ := s.AllocsByEval(nil, old.EvalID)
	must.Len(t, 2, byEval)
	byDep, _ := s.AllocsByDeployment(nil, d.ID)
	must.Len(t, 1, byDep)
	byPrefix, _ := s.AllocsByIDPrefix(nil, "default", "aaaa")
	must.Len(t, 1, byPrefix)
	byPrefix, _ = s.AllocsByIDPrefix(nil, "*", "aaa")
	must.Len(t, 2, byPrefix)
	byPrefix, _ = s.AllocsByIDPrefix(nil, "prod", "aaa")
	must.Len(t, 0, byPrefix)
	list, _ := s.Allocs(nil, "default")
	must.Len(t, 2, list)
	list, _ = s.Allocs(nil, "*")
	must.Len(t, 2, list)
}

func TestAllocs_PreviousAllocationLinked(t *testing.T) {
	s, node, job := allocFixture(t)
	prev := mockAlloc(job, node)
	must.NoError(t, s.UpsertAllocs(3, []*structs.Allocation{prev}))
	next := mockAlloc(job, node)
	next.PreviousAllocation = prev.ID
	must.NoError(t, s.UpsertAllocs(4, []*structs.Allocation{next}))
	out, _ := s.AllocByID(nil, prev.ID)
	must.Eq(t, next.ID, out.NextAllocation)
	must.Eq(t, 4, out.ModifyIndex)
	must.Eq(t, 3, out.AllocModifyIndex)
}

func TestAllocs_DesiredTransitions(t *testing.T) {
	s, node, job := allocFixture(t)
	a := mockAlloc(job, node)
	must.NoError(t, s.UpsertAllocs(3, []*structs.Allocation{a}))
	yes := true
	ev := mockEval(job)
	ev.TriggeredBy = structs.EvalTriggerNodeDrain
	must.NoError(t, s.UpdateAllocsDesiredTransitions(4,
		map[string]*structs.DesiredTransition{a.ID: {Migrate: &yes}, "missing": {Migrate: &yes}},
		[]*structs.Evaluation{ev}))
	out, _ := s.AllocByID(nil, a.ID)
	must.True(t, out.DesiredTransition.ShouldMigrate())
	must.Eq(t, 4, out.ModifyIndex)
	must.Eq(t, 4, out.AllocModifyIndex)
	stored, _ := s.EvalByID(nil, ev.ID)
	must.NotNil(t, stored)
	must.Eq(t, 4, mustIndex(t, s, TableEvals))
}

func TestAllocs_DeploymentCounters(t *testing.T) {
	s, node, job := allocFixture(t)
	d := mockDeployment(job)
	d.TaskGroups["web"].ProgressDeadline = 10 * time.Minute
	must.NoError(t, s.UpsertDeployment(3, d))

	a, canary := mockAlloc(job, node), mockAlloc(job, node)
	a.DeploymentID, canary.DeploymentID = d.ID, d.ID
	a.ModifyTime = time.Unix(1000, 0).UnixNano()
	canary.DeploymentStatus = &structs.AllocDeploymentStatus{Canary: true}
	must.NoError(t, s.UpsertAllocs(4, []*structs.Allocation{a, canary}))

	state := func() structs.DeploymentState {
		t.Helper()
		out, err := s.DeploymentByID(nil, d.ID)
		must.NoError(t, err)
		return *out.TaskGroups["web"]
	}
	st := state()
	must.Eq(t, 2, st.PlacedAllocs)
	must.Eq(t, []string{canary.ID}, st.PlacedCanaries)
	must.Eq(t, time.Unix(1000, 0).UTC().Add(10*time.Minute), st.RequireProgressBy)

	healthy, unhealthy := true, false
	healthyAt := time.Unix(2000, 0).UTC()
	must.NoError(t, s.UpdateAllocsFromClient(5, []*structs.Allocation{
		{ID: a.ID, ClientStatus: structs.AllocClientStatusRunning,
			DeploymentStatus: &structs.AllocDeploymentStatus{Healthy: &healthy, Timestamp: healthyAt}},
		{ID: canary.ID, ClientStatus: structs.AllocClientStatusRunning,
			DeploymentStatus: &structs.AllocDeploymentStatus{Healthy: &unhealthy}},
	}))
	st = state()
	must.Eq(t, 1, st.HealthyAllocs)
	must.Eq(t, 1, st.UnhealthyAllocs)
	must.Eq(t, healthyAt.Add(10*time.Minute), st.RequireProgressBy)
	out, _ := s.AllocByID(nil, canary.ID)
	must.True(t, out.DeploymentStatus.Canary) // the client cannot clear it
	must.Eq(t, 5, out.DeploymentStatus.ModifyIndex)

	// Healthy -> unhealthy moves the counters.
	must.NoError(t, s.UpdateAllocsFromClient(6, []*structs.Allocation{
		{ID: a.ID, ClientStatus: structs.AllocClientStatusRunning,
			DeploymentStatus: &structs.AllocDeploymentStatus{Healthy: &unhealthy}},
	}))
	st = state()
	must.Eq(t, 0, st.HealthyAllocs)
	must.Eq(t, 2, st.UnhealthyAllocs)
}

func TestAllocs_ClientUpdateRejectsBadStatus(t *testing.T) {
	s, node, job := allocFixture(t)
	a := mockAlloc(job, node)
	must.NoError(t, s.UpsertAllocs(3, []*structs.Allocation{a}))
	err := s.UpdateAllocsFromClient(4, []*structs.Allocation{
		{ID: a.ID, ClientStatus: structs.AllocClientStatusRunning},
		{ID: a.ID, ClientStatus: "exploded"},
	})
	must.ErrorContains(t, err, `invalid client status "exploded"`)
	out, _ := s.AllocByID(nil, a.ID)
	must.Eq(t, structs.AllocClientStatusPending, out.ClientStatus)
}

func TestAllocs_ClientUpdateOfUnknownAllocIsSkipped(t *testing.T) {
	s, _, _ := allocFixture(t)
	must.NoError(t, s.UpdateAllocsFromClient(9, []*structs.Allocation{{ID: "gone", ClientStatus: "running"}}))
	// The table index still reaches the applied index.
	must.Eq(t, 9, mustIndex(t, s, TableAllocs))
	latest, err := s.LatestIndex()
	must.NoError(t, err)
	must.Eq(t, 9, latest)
}

func TestAllocs_NodeAllocIndex(t *testing.T) {
	s, node, job := allocFixture(t)
	other := mockNode()
	must.NoError(t, s.UpsertNode(3, other))
	nodeIndex := func(id string) uint64 {
		t.Helper()
		idx, err := s.NodeAllocIndex(nil, id)
		must.NoError(t, err)
		return idx
	}
	must.Eq(t, 0, nodeIndex(node.ID))

	a, b := mockAlloc(job, node), mockAlloc(job, node)
	must.NoError(t, s.UpsertAllocs(4, []*structs.Allocation{a, b}))
	must.Eq(t, 4, nodeIndex(node.ID))

	// A write on another node leaves this node's index alone and wakes
	// nobody watching it.
	ws := memdb.NewWatchSet()
	_, err := s.NodeAllocIndex(ws, node.ID)
	must.NoError(t, err)
	must.NoError(t, s.UpsertAllocs(5, []*structs.Allocation{mockAlloc(job, other)}))
	must.Eq(t, 4, nodeIndex(node.ID))
	must.Eq(t, 5, nodeIndex(other.ID))
	must.False(t, fired(ws), must.Sprint("watch fired for another node's alloc"))

	// The client's own status update does not count (its allocation's
	// AllocModifyIndex stays); a server-side change and the garbage
	// collection of an alloc do.
	must.NoError(t, s.UpdateAllocsFromClient(6, []*structs.Allocation{{ID: a.ID, ClientStatus: structs.AllocClientStatusComplete}}))
	must.Eq(t, 4, nodeIndex(node.ID))
	stop := b.Copy()
	stop.DesiredStatus = structs.AllocDesiredStatusStop
	must.NoError(t, s.UpsertAllocs(7, []*structs.Allocation{stop}))
	must.Eq(t, 7, nodeIndex(node.ID))
	must.NoError(t, s.DeleteEvals(8, nil, []string{a.ID}))
	must.Eq(t, 8, nodeIndex(node.ID))
	must.Eq(t, 5, nodeIndex(other.ID))

	// The index goes with its node.
	must.NoError(t, s.DeleteNodes(9, []string{other.ID}))
	must.Eq(t, 0, nodeIndex(other.ID))
}

// A new alloc placed for the stored version of its job points at the
// stored job, not at the copy its plan carried; one placed for another
// registration of the job keeps its own.
func TestAllocs_NewAllocSharesStoredJob(t *testing.T) {
	s, node, job := allocFixture(t)
	stored, err := s.JobByID(nil, job.Namespace, job.ID)
	must.NoError(t, err)

	decoded := stored.Copy() // what a plan decoded from Raft carries
	a := mockAlloc(decoded, node)
	must.NoError(t, s.UpsertAllocs(10, []*structs.Allocation{a}))
	out, _ := s.AllocByID(nil, a.ID)
	must.True(t, out.Job == stored, must.Sprint("the alloc keeps a copy of the stored job"))

	other := stored.Copy()
	other.JobModifyIndex++ // placed for a registration not stored
	b := mockAlloc(other, node)
	must.NoError(t, s.UpsertAllocs(11, []*structs.Allocation{b}))
	out, _ = s.AllocByID(nil, b.ID)
	must.True(t, out.Job == other)
}

// TestAllocs_ByEvalAndDeployment: the allocs of an eval or a deployment
// are read through their job's allocs, in ID order, and are still found
// once the eval or the deployment is gone.
func TestAllocs_ByEvalAndDeployment(t *testing.T) {
	s, node, job := allocFixture(t)
	other := mockJob()
	other.ID = "other"
	other = registered(t, s, 3, other)

	e1, e2, eOther := mockEval(job), mockEval(job), mockEval(other)
	must.NoError(t, s.UpsertEvals(4, []*structs.Evaluation{e1, e2, eOther}))
	d, dOther := mockDeployment(job), mockDeployment(other)
	must.NoError(t, s.UpsertDeployment(5, d))
	must.NoError(t, s.UpsertDeployment(6, dOther))

	alloc := func(id string, j *structs.Job, evalID, deploymentID string) *structs.Allocation {
		a := mockAlloc(j, node)
		a.ID, a.EvalID, a.DeploymentID = id, evalID, deploymentID
		return a
	}
	allocs := []*structs.Allocation{
		alloc("c0000000-0000-4000-8000-000000000000", job, e1.ID, d.ID),
		alloc("a0000000-0000-4000-8000-000000000000", job, e1.ID, ""),
		alloc("b0000000-0000-4000-8000-000000000000", job, e2.ID, d.ID),
		alloc("d0000000-0000-4000-8000-000000000000", other, eOther.ID, dOther.ID),
	}
	must.NoError(t, s.UpsertAllocs(7, allocs))

	ids := func(as []*structs.Allocation, err error) []string {
		must.NoError(t, err)
		out := []string{}
		for _, a := range as {
			out = append(out, a.ID[:1])
		}
		return out
	}
	check := func(when string) {
		cases := []struct {
			name string
			got  []string
			want []string
		}{
			{"eval 1", ids(s.AllocsByEval(nil, e1.ID)), []string{"a", "c"}},
			{"eval 2", ids(s.AllocsByEval(nil, e2.ID)), []string{"b"}},
			{"other job's eval", ids(s.AllocsByEval(nil, eOther.ID)), []string{"d"}},
			{"unknown eval", ids(s.AllocsByEval(nil, structs.GenerateUUID())), []string{}},
			{"deployment", ids(s.AllocsByDeployment(nil, d.ID)), []string{"b", "c"}},
			{"other job's deployment", ids(s.AllocsByDeployment(nil, dOther.ID)), []string{"d"}},
			{"unknown deployment", ids(s.AllocsByDeployment(nil, structs.GenerateUUID())), []string{}},
		}
		for _, c := range cases {
			must.Eq(t, c.want, c.got, must.Sprintf("%s, %s", when, c.name))
		}
	}
	check("all present")

	// Eval.Delete and the garbage collector may remove an eval or a
	// deployment before its (terminal) allocs.
	must.NoError(t, s.DeleteEvals(8, []string{e1.ID, eOther.ID}, nil))
	must.NoError(t, s.DeleteDeployments(9, []string{d.ID, dOther.ID}))
	check("evals and deployments deleted")
}

// TestAllocs_ByDeploymentWatch: a watch on a deployment's allocs fires
// when one of them changes.
func TestAllocs_ByDeploymentWatch(t *testing.T) {
	s, node, job := allocFixture(t)
	d := mockDeployment(job)
	must.NoError(t, s.UpsertDeployment(3, d))
	a := mockAlloc(job, node)
	a.DeploymentID = d.ID
	must.NoError(t, s.UpsertAllocs(4, []*structs.Allocation{a}))

	ws := memdb.NewWatchSet()
	got, err := s.AllocsByDeployment(ws, d.ID)
	must.NoError(t, err)
	must.Len(t, 1, got)
	must.NoError(t, s.UpdateAllocsFromClient(5, []*structs.Allocation{{ID: a.ID, ClientStatus: structs.AllocClientStatusRunning}}))
	must.False(t, ws.Watch(time.After(5*time.Second)), must.Sprint("the watch did not fire"))
}
