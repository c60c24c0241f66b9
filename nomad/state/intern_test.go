package state

import (
	"bytes"
	"maps"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

// fresh returns a copy of s in bytes of its own, as decoding makes it.
func fresh(s string) string { return strings.Clone(s) }

// TestIntern_KeysReplacedInPlace: storing to a present string key makes
// the map hold the key given, without adding an entry.
func TestIntern_KeysReplacedInPlace(t *testing.T) {
	tab := newInternTable()
	kept := tab.str("binpack")
	m := map[string]float64{fresh("binpack"): 0.5, fresh("job-anti-affinity"): -1}
	internKeys(tab, m)
	must.MapLen(t, 2, m)
	must.Eq(t, map[string]float64{"binpack": 0.5, "job-anti-affinity": -1}, m)
	for k := range m {
		if k == "binpack" {
			must.True(t, sameInstance(k, kept), must.Sprint("the key is not the kept instance"))
		}
	}
}

// TestIntern_ScoresShared: equal score lists are one, and so are equal
// node entries; a list or an entry differing in anything (a name, a
// score's bits, the node) is its own.
func TestIntern_ScoresShared(t *testing.T) {
	tab := newInternTable()
	list := func(scores ...float64) structs.NamedScores {
		s := structs.NamedScores{{Name: fresh("binpack")}, {Name: fresh("job-anti-affinity")}}
		for i, v := range scores {
			s[i].Score = v
		}
		return s
	}
	a := tab.shareScores(list(0.5, 0))
	b := tab.shareScores(list(0.5, 0))
	must.True(t, &a[0] == &b[0], must.Sprint("equal lists not shared"))
	must.True(t, sameInstance(a[0].Name, tab.str("binpack")))
	for _, other := range []structs.NamedScores{list(0.5, math.Copysign(0, -1)), list(0.25, 0),
		{{Name: "binpack", Score: 0.5}}, {{Name: "binpack", Score: 0.5}, {Name: "node-affinity"}}} {
		got := tab.shareScores(other)
		must.False(t, &got[0] == &a[0], must.Sprintf("%v shared with %v", other, a))
		must.True(t, got.Equal(other))
	}
	must.Nil(t, tab.shareScores(nil))
	must.NotNil(t, tab.shareScores(structs.NamedScores{}))

	meta := func(node string, norm float64) *structs.NodeScoreMeta {
		return &structs.NodeScoreMeta{NodeID: node, Scores: tab.shareScores(list(0.5, 0)), NormScore: norm}
	}
	m := tab.shareScoreMeta(meta("n1", 0.25))
	must.True(t, m == tab.shareScoreMeta(meta("n1", 0.25)), must.Sprint("equal entries not shared"))
	must.False(t, m == tab.shareScoreMeta(meta("n2", 0.25)))
	must.False(t, m == tab.shareScoreMeta(meta("n1", 0.5)))
	empty := &structs.NodeScoreMeta{NodeID: "n1", NormScore: 0.25}
	must.True(t, empty == tab.shareScoreMeta(empty))
}

// TestIntern_TableBounded: the table starts over once full.
func TestIntern_TableBounded(t *testing.T) {
	tab := newInternTable()
	for i := range internMax + 10 {
		tab.str(strings.Repeat("x", i%50+1) + string(rune('a'+i%26)) + strings.Repeat("y", i/26))
	}
	must.LessEq(t, internMax, len(tab.m))
}

// internedFixture writes a node, a job, an eval, a deployment and two
// allocs built from freshly allocated strings, as the FSM decodes them,
// and returns what it wrote (deep copies taken before the writes).
func internedFixture(t *testing.T, s *StateStore) (node *structs.Node, job *structs.Job, eval *structs.Evaluation, d *structs.Deployment, allocs []*structs.Allocation, want []*structs.Allocation) {
	node = mockNode()
	must.NoError(t, s.UpsertNode(1, node))
	job = registered(t, s, 2, mockJob())

	eval = mockEval(job)
	eval.Namespace, eval.JobID, eval.Status = fresh(job.Namespace), fresh(job.ID), fresh(structs.EvalStatusPending)
	must.NoError(t, s.UpsertEvals(3, []*structs.Evaluation{eval}))

	d = mockDeployment(job)
	d.Namespace, d.JobID, d.Status = fresh(job.Namespace), fresh(job.ID), fresh(structs.DeploymentStatusRunning)
	must.NoError(t, s.UpsertDeployment(4, d))

	for range 2 {
		a := mockAlloc(job, node)
		a.Namespace, a.JobID, a.NodeID, a.NodeName = fresh(job.Namespace), fresh(job.ID), fresh(node.ID), fresh(node.Name)
		a.EvalID, a.DeploymentID, a.TaskGroup = fresh(eval.ID), fresh(d.ID), fresh("web")
		a.DesiredStatus, a.ClientStatus = fresh(structs.AllocDesiredStatusRun), fresh(structs.AllocClientStatusPending)
		a.Metrics = &structs.AllocMetric{
			NodesEvaluated:     1,
			NodePool:           fresh("default"),
			NodesAvailable:     map[string]int{fresh("dc1"): 1},
			ConstraintFiltered: map[string]int{fresh("${attr.kernel.name} = linux"): 3},
			ScoreMetaData: []*structs.NodeScoreMeta{{
				NodeID:    fresh(node.ID),
				Scores:    structs.NamedScores{{Name: fresh("binpack"), Score: 0.3}, {Name: fresh("job-anti-affinity")}},
				NormScore: 0.15,
			}},
		}
		allocs = append(allocs, a)
		want = append(want, a.Copy())
	}
	must.NoError(t, s.UpsertAllocs(5, allocs))
	return node, job, eval, d, allocs, want
}

// TestIntern_StoredObjectsShareStrings: what the store returns is what
// was written, field for field, and its strings are the instances the
// store already held.
func TestIntern_StoredObjectsShareStrings(t *testing.T) {
	s := testStore(t)
	node, job, eval, d, allocs, want := internedFixture(t, s)

	storedEval, err := s.EvalByID(nil, eval.ID)
	must.NoError(t, err)
	storedDep, err := s.DeploymentByID(nil, d.ID)
	must.NoError(t, err)
	var got []*structs.Allocation
	for i, a := range allocs {
		g, err := s.AllocByID(nil, a.ID)
		must.NoError(t, err)
		w := want[i]
		w.Job = g.Job
		w.CreateIndex, w.ModifyIndex, w.AllocModifyIndex = g.CreateIndex, g.ModifyIndex, g.AllocModifyIndex
		must.Eq(t, w, g)
		got = append(got, g)
	}

	shared := []struct {
		name string
		a, b string
	}{
		{"eval namespace is the job's", storedEval.Namespace, job.Namespace},
		{"eval job ID is the job's", storedEval.JobID, job.ID},
		{"deployment job ID is the job's", storedDep.JobID, job.ID},
		{"alloc job ID is the job's", got[0].JobID, job.ID},
		{"alloc node ID is the node's", got[0].NodeID, node.ID},
		{"alloc node name is the node's", got[0].NodeName, node.Name},
		{"alloc eval ID is the eval's", got[0].EvalID, storedEval.ID},
		{"alloc deployment ID is the deployment's", got[0].DeploymentID, storedDep.ID},
		{"score node ID is the node's", got[0].Metrics.ScoreMetaData[0].NodeID, node.ID},
		{"task group names are one", got[0].TaskGroup, got[1].TaskGroup},
		{"statuses are one", got[0].ClientStatus, got[1].ClientStatus},
		{"node pools are one", got[0].Metrics.NodePool, got[1].Metrics.NodePool},
	}
	for _, c := range shared {
		must.True(t, sameInstance(c.a, c.b), must.Sprint(c.name))
	}
	// Equal scores are one list, whose names are the kept ones, and a
	// node scored alike for two placements is one entry; equal filter
	// counts are one map.
	m0, m1 := got[0].Metrics, got[1].Metrics
	must.True(t, m0.ScoreMetaData[0] == m1.ScoreMetaData[0], must.Sprint("equal node entries are one"))
	for _, e := range m0.ScoreMetaData[0].Scores {
		must.True(t, sameInstance(e.Name, s.intern.str(e.Name)), must.Sprintf("score name %q", e.Name))
	}
	must.True(t, reflect.ValueOf(m0.ConstraintFiltered).UnsafePointer() == reflect.ValueOf(m1.ConstraintFiltered).UnsafePointer(),
		must.Sprint("equal filter counts are one map"))

	// A client's report and the eval's completion come decoded afresh.
	must.NoError(t, s.UpdateAllocsFromClient(6, []*structs.Allocation{{
		ID:           allocs[0].ID,
		ClientStatus: fresh(structs.AllocClientStatusRunning),
		TaskStates:   map[string]*structs.TaskState{fresh("server"): {State: fresh(structs.TaskStateRunning)}},
	}, {
		ID:           allocs[1].ID,
		ClientStatus: fresh(structs.AllocClientStatusRunning),
		TaskStates:   map[string]*structs.TaskState{fresh("server"): {State: fresh(structs.TaskStateRunning)}},
	}}))
	r0, _ := s.AllocByID(nil, allocs[0].ID)
	r1, _ := s.AllocByID(nil, allocs[1].ID)
	must.Eq(t, structs.AllocClientStatusRunning, r0.ClientStatus)
	must.True(t, sameInstance(r0.ClientStatus, r1.ClientStatus))
	must.True(t, sameInstance(r0.TaskStates["server"].State, r1.TaskStates["server"].State))

	done := eval.Copy()
	done.ID, done.Status = fresh(eval.ID), fresh(structs.EvalStatusComplete)
	must.NoError(t, s.UpsertEvals(7, []*structs.Evaluation{done}))
	storedDone, _ := s.EvalByID(nil, eval.ID)
	must.Eq(t, structs.EvalStatusComplete, storedDone.Status)
	must.True(t, sameInstance(storedDone.ID, r0.EvalID), must.Sprint("a rewritten eval keeps its ID instance"))
}

// TestIntern_SnapshotWritesLeaveObjectsAlone: the plan applier's writes
// to a snapshot change none of the objects it hands over.
func TestIntern_SnapshotWritesLeaveObjectsAlone(t *testing.T) {
	s, node, job := allocFixture(t)
	snap := s.Snapshot()
	a := mockAlloc(job, node)
	a.NodeID = fresh(node.ID)
	before := a.NodeID
	must.NoError(t, snap.UpsertAllocs(3, []*structs.Allocation{a}))
	got, err := snap.AllocByID(nil, a.ID)
	must.NoError(t, err)
	must.True(t, sameInstance(got.NodeID, before))
	must.False(t, sameInstance(got.NodeID, node.ID))
}

// TestIntern_Restore: a restored store holds the same objects, their
// strings shared as the FSM's writes share them.
func TestIntern_Restore(t *testing.T) {
	s := testStore(t)
	_, _, eval, _, allocs, _ := internedFixture(t, s)
	var buf bytes.Buffer
	must.NoError(t, s.Snapshot().Persist(&buf))
	r, err := Restore(&buf, nil)
	must.NoError(t, err)

	for _, a := range allocs {
		want, _ := s.AllocByID(nil, a.ID)
		got, err := r.AllocByID(nil, a.ID)
		must.NoError(t, err)
		must.Eq(t, want, got)
	}
	got, _ := r.AllocByID(nil, allocs[0].ID)
	other, _ := r.AllocByID(nil, allocs[1].ID)
	node, _ := r.NodeByID(nil, got.NodeID)
	e, _ := r.EvalByID(nil, eval.ID)
	must.True(t, sameInstance(got.NodeID, node.ID), must.Sprint("node ID"))
	must.True(t, sameInstance(got.Metrics.ScoreMetaData[0].NodeID, node.ID), must.Sprint("score node ID"))
	must.True(t, sameInstance(got.EvalID, e.ID), must.Sprint("eval ID"))
	must.True(t, sameInstance(got.JobID, got.Job.ID), must.Sprint("job ID"))
	must.True(t, sameInstance(got.TaskGroup, other.TaskGroup), must.Sprint("task group"))

	// The objects restored before the job's row or the deployment share
	// their IDs all the same.
	job, _ := r.JobByID(nil, got.Namespace, got.JobID)
	versions, _ := r.JobVersionsByID(nil, job.Namespace, job.ID)
	summary, _ := r.JobSummaryByID(nil, job.Namespace, job.ID)
	d, _ := r.DeploymentByID(nil, got.DeploymentID)
	must.NotNil(t, d)
	must.True(t, sameInstance(got.JobID, job.ID), must.Sprint("alloc's job ID is the job's"))
	must.True(t, sameInstance(versions[0].ID, job.ID), must.Sprint("version's ID is the job's"))
	must.True(t, sameInstance(summary.JobID, job.ID), must.Sprint("summary's job ID is the job's"))
	must.True(t, sameInstance(got.DeploymentID, d.ID), must.Sprint("alloc's deployment ID is the deployment's"))
	must.True(t, sameInstance(other.DeploymentID, d.ID), must.Sprint("deployment IDs are one"))
}

// TestIntern_SharedMaps: equal small maps of counts are one map, never
// a nil one or one of other content, and a write to one object's counts
// leaves the others sharing them as they were.
func TestIntern_SharedMaps(t *testing.T) {
	tab := newInternTable()
	a := tab.counts.share(tab, map[string]int{fresh("web"): 0, "api": 2})
	b := tab.counts.share(tab, map[string]int{"api": 2, fresh("web"): 0})
	c := tab.counts.share(tab, map[string]int{"web": 1, "api": 2})
	must.Eq(t, map[string]int{"web": 0, "api": 2}, a)
	must.True(t, sameMap(a, b), must.Sprint("equal maps are not one"))
	must.False(t, sameMap(a, c), must.Sprint("different maps are one"))
	must.Nil(t, tab.counts.share(tab, nil))
	empty := tab.counts.share(tab, map[string]int{})
	must.NotNil(t, empty)
	must.MapEmpty(t, empty)

	// A map whose key finds a kept map of other content is not shared.
	tab.counts.kept[string(tab.counts.key)] = map[string]int{"other": 9}
	d := tab.counts.share(tab, map[string]int{})
	must.MapEmpty(t, d)
}

func sameMap[V any](a, b map[string]V) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// TestIntern_SummariesShareCounts: jobs with equal counts share their
// summary's map; a change to one job's counts, even several in one
// transaction, leaves the other's alone.
func TestIntern_SummariesShareCounts(t *testing.T) {
	s := testStore(t)
	node := mockNode()
	must.NoError(t, s.UpsertNode(1, node))
	one := registered(t, s, 2, mockJob())
	other := mockJob()
	other.ID = "other"
	other = registered(t, s, 3, other)

	summary := func(j *structs.Job) *structs.JobSummary {
		sum, err := s.JobSummaryByID(nil, j.Namespace, j.ID)
		must.NoError(t, err)
		return sum
	}
	must.True(t, sameMap(summary(one).Summary, summary(other).Summary))
	before := maps.Clone(summary(other).Summary)

	// Two allocs of one job in one transaction: its summary is edited
	// twice in place before the transaction ends.
	must.NoError(t, s.UpsertAllocs(4, []*structs.Allocation{mockAlloc(one, node), mockAlloc(one, node)}))
	must.Eq(t, 2, summary(one).Summary["web"].Starting)
	must.Eq(t, before, summary(other).Summary)
	must.False(t, sameMap(summary(one).Summary, summary(other).Summary))

	// Equal again: shared again.
	must.NoError(t, s.UpsertAllocs(5, []*structs.Allocation{mockAlloc(other, node), mockAlloc(other, node)}))
	must.True(t, sameMap(summary(one).Summary, summary(other).Summary))
}

// TestIntern_SharedResources: new allocs with equal resources share one
// object; resources with ports, or equal in key but not in content, are
// kept apart.
func TestIntern_SharedResources(t *testing.T) {
	res := func(cpu int64) *structs.AllocatedResources {
		return &structs.AllocatedResources{
			Tasks: map[string]*structs.AllocatedTaskResources{
				fresh("server"): {Cpu: structs.AllocatedCpuResources{CpuShares: cpu}, Memory: structs.AllocatedMemoryResources{MemoryMB: 256}},
			},
			Shared: structs.AllocatedSharedResources{DiskMB: 150},
		}
	}
	withPorts := res(500)
	withPorts.Shared.Ports = structs.AllocatedPorts{{Label: "http", Value: 25000}}
	withHook := res(500)
	withHook.TaskLifecycles = map[string]*structs.TaskLifecycleConfig{"server": {Hook: "prestart"}}
	otherHook := res(500)
	otherHook.TaskLifecycles = map[string]*structs.TaskLifecycleConfig{"server": {Hook: "poststart"}}

	tab := newInternTable()
	first := tab.shareResources(res(500))
	cases := []struct {
		name  string
		in    *structs.AllocatedResources
		share bool
	}{
		{"equal", res(500), true},
		{"other CPU", res(600), false},
		{"ports", withPorts, false},
		{"a lifecycle hook", withHook, false},
	}
	for _, c := range cases {
		want := *c.in
		got := tab.shareResources(c.in)
		must.Eq(t, &want, got, must.Sprint(c.name))
		must.Eq(t, c.share, got == first, must.Sprint(c.name))
	}
	// Same key as withHook, other content.
	got := tab.shareResources(otherHook)
	must.True(t, got == otherHook)
	must.Eq(t, "poststart", got.TaskLifecycles["server"].Hook)
}

// TestIntern_NodesShareScanStrings: nodes decoded apart hold one instance
// of the status, eligibility, pool, datacenter and classes they share,
// as written and as restored, so a scheduler's scan of every node reads
// them from one place.
func TestIntern_NodesShareScanStrings(t *testing.T) {
	s := testStore(t)
	var nodes []*structs.Node
	for i := range 2 {
		n := mockNode()
		n.NodeClass, n.ComputedClass = "large", "v1:1234567890"
		for _, p := range []*string{&n.Status, &n.SchedulingEligibility, &n.NodePool, &n.Datacenter, &n.NodeClass, &n.ComputedClass} {
			*p = fresh(*p)
		}
		must.NoError(t, s.UpsertNode(uint64(1+i), n))
		nodes = append(nodes, n)
	}
	var buf bytes.Buffer
	must.NoError(t, s.Snapshot().Persist(&buf))
	restored, err := Restore(&buf, nil)
	must.NoError(t, err)

	for name, st := range map[string]*StateStore{"stored": s, "restored": restored} {
		a, _ := st.NodeByID(nil, nodes[0].ID)
		b, _ := st.NodeByID(nil, nodes[1].ID)
		pairs := map[string][2]string{
			"status":      {a.Status, b.Status},
			"eligibility": {a.SchedulingEligibility, b.SchedulingEligibility},
			"pool":        {a.NodePool, b.NodePool},
			"datacenter":  {a.Datacenter, b.Datacenter},
			"class":       {a.NodeClass, b.NodeClass},
			"computed":    {a.ComputedClass, b.ComputedClass},
		}
		for field, p := range pairs {
			must.Eq(t, p[0], p[1])
			must.True(t, sameInstance(p[0], p[1]), must.Sprintf("%s: %s", name, field))
		}
	}
}

// TestIntern_SummariesShareNoChildren: the summaries of jobs without
// children share one zero count; a child registered, in the same
// transaction as another job or later, counts in its parent's alone.
func TestIntern_SummariesShareNoChildren(t *testing.T) {
	s := testStore(t)
	summary := func(j *structs.Job) *structs.JobSummary {
		sum, err := s.JobSummaryByID(nil, j.Namespace, j.ID)
		must.NoError(t, err)
		return sum
	}
	parent := registered(t, s, 2, mockJob())
	other := registered(t, s, 3, mockJob())
	must.True(t, summary(parent).Children == summary(other).Children)
	must.Eq(t, structs.JobChildrenSummary{}, *summary(other).Children)

	// A new job and a child of the parent in one transaction.
	third, child := mockJob(), mockJob()
	child.ParentID = parent.ID
	must.NoError(t, s.WithWriteTxn(4, func(tx *Txn) error {
		if err := tx.UpsertJob(third); err != nil {
			return err
		}
		return tx.UpsertJob(child)
	}))
	must.Eq(t, structs.JobChildrenSummary{Pending: 1}, *summary(parent).Children)
	for _, j := range []*structs.Job{other, third, child} {
		must.Eq(t, structs.JobChildrenSummary{}, *summary(j).Children)
		must.True(t, summary(j).Children == summary(other).Children)
	}

	// The restored store shares it too.
	var buf bytes.Buffer
	must.NoError(t, s.Snapshot().Persist(&buf))
	r, err := Restore(&buf, nil)
	must.NoError(t, err)
	a, _ := r.JobSummaryByID(nil, other.Namespace, other.ID)
	b, _ := r.JobSummaryByID(nil, third.Namespace, third.ID)
	p, _ := r.JobSummaryByID(nil, parent.Namespace, parent.ID)
	must.True(t, a.Children == b.Children)
	must.Eq(t, structs.JobChildrenSummary{Pending: 1}, *p.Children)
}
