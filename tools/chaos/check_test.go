package main

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/api"
)

func testJob(id string, count int, stop bool) *api.Job {
	j := jobSpec(id, count, 100, 0)
	j.Stop = ptr(stop)
	return j
}

func testAlloc(id, job, name, node, desired, client string, cpu int64) *api.AllocationListStub {
	return &api.AllocationListStub{ID: id, JobID: job, Name: name, NodeID: node, DesiredStatus: desired, ClientStatus: client,
		AllocatedResources: &api.AllocatedResources{
			Tasks:  map[string]*api.AllocatedTaskResources{"work": {Cpu: api.AllocatedCpuResources{CpuShares: cpu}, Memory: api.AllocatedMemoryResources{MemoryMB: 64}}},
			Shared: api.AllocatedSharedResources{DiskMB: 300}}}
}

func testNode(id string) *api.NodeListStub {
	return &api.NodeListStub{ID: id, Name: id, NodeResources: &api.NodeResources{
		Cpu: api.NodeCpuResources{CpuShares: 1000}, Memory: api.NodeMemoryResources{MemoryMB: 1024}, Disk: api.NodeDiskResources{DiskMB: 4096}},
		ReservedResources: &api.NodeReservedResources{Cpu: api.NodeReservedCpuResources{CpuShares: 100}}}
}

// Each checker passes a healthy view and reports the broken one.
func TestCheckers(t *testing.T) {
	healthy := func() *view {
		return &view{server: "server-1", applied: 10,
			jobs: map[string]*api.Job{"a": testJob("a", 2, false), "b": testJob("b", 1, true)},
			allocs: []*api.AllocationListStub{
				testAlloc("1", "a", "a.g[0]", "n1", "run", "running", 400),
				testAlloc("2", "a", "a.g[1]", "n1", "run", "pending", 500),
				testAlloc("3", "b", "b.g[0]", "n1", "stop", "running", 900), // stopped: holds nothing
				testAlloc("4", "a", "a.g[1]", "n1", "run", "lost", 900),
			},
			evals: []*api.Evaluation{{ID: "e1", JobID: "a", Status: "complete"}},
			nodes: []*api.NodeListStub{testNode("n1")},
		}
	}
	ledger := []jobRecord{{ID: "a", Count: 2}, {ID: "b", Count: 1, Stopped: true}, {ID: "c", Count: 1, Uncertain: true}}

	cases := []struct {
		name    string
		breakIt func(v *view, l []jobRecord) []jobRecord
		inv     string
	}{
		{"acknowledged job missing", func(v *view, l []jobRecord) []jobRecord { delete(v.jobs, "a"); return l }, invAcknowledged},
		{"acknowledged count differs", func(v *view, l []jobRecord) []jobRecord { l[0].Count = 3; return l }, invAcknowledged},
		{"acknowledged stop runs", func(v *view, l []jobRecord) []jobRecord { v.jobs["b"].Stop = ptr(false); return l }, invAcknowledged},
		{"too few allocations", func(v *view, l []jobRecord) []jobRecord { v.allocs = v.allocs[1:]; return l }, invAllocCount},
		{"duplicate names", func(v *view, l []jobRecord) []jobRecord { v.allocs[1].Name = "a.g[0]"; return l }, invAllocCount},
		{"stopped job runs", func(v *view, l []jobRecord) []jobRecord { v.allocs[2].DesiredStatus = "run"; return l }, invAllocCount},
		{"overcommitted cpu", func(v *view, l []jobRecord) []jobRecord {
			v.allocs[1].AllocatedResources.Tasks["work"].Cpu.CpuShares = 501
			return l
		}, invOvercommit},
		{"pending evaluation", func(v *view, l []jobRecord) []jobRecord { v.evals[0].Status = "pending"; return l }, invEvalsSettle},
	}
	run := func(v *view, l []jobRecord) *verdict {
		vd := newVerdict()
		vd.checkAcknowledged(v, l)
		vd.checkAllocs(v)
		vd.checkOvercommit(v)
		vd.checkEvals(v)
		return vd
	}
	must.SliceEmpty(t, run(healthy(), append([]jobRecord(nil), ledger...)).violations)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := healthy()
			l := tc.breakIt(v, append([]jobRecord(nil), ledger...))
			vd := run(v, l)
			// The breakage may trip related invariants too; the one
			// aimed at must be among them.
			found := false
			for _, x := range vd.violations {
				found = found || x.Invariant == tc.inv
			}
			must.True(t, found, must.Sprint(vd.violations))
		})
	}

	// Fewer allocations than the count are explained by a blocked
	// evaluation.
	v := healthy()
	v.allocs = v.allocs[1:]
	v.evals = append(v.evals, &api.Evaluation{ID: "e2", JobID: "a", Status: "blocked"})
	vd := run(v, ledger)
	must.SliceEmpty(t, vd.violations)
	must.Eq(t, map[string]int{"blocked evaluation": 1}, vd.short)

	// So are they by a failed deployment of the job's version (nothing
	// new is placed for it), but not by one of an older version.
	v = healthy()
	v.allocs = v.allocs[1:]
	v.deployments = []*api.Deployment{
		{ID: "d1", JobID: "a", JobVersion: 0, Status: "failed", CreateIndex: 5},
		{ID: "d0", JobID: "a", JobVersion: 0, Status: "successful", CreateIndex: 4},
	}
	vd = run(v, ledger)
	must.SliceEmpty(t, vd.violations)
	must.Eq(t, map[string]int{"failed deployment": 1}, vd.short)
	v.jobs["a"].Version = ptr(uint64(1))
	must.Len(t, 1, run(v, ledger).violations)

	// Jobs that want allocations while none is live anywhere: the
	// cluster placed nothing, even if every job has a blocked eval.
	v = healthy()
	v.allocs = v.allocs[2:]
	v.evals = append(v.evals, &api.Evaluation{ID: "e2", JobID: "a", Status: "blocked"})
	vd = run(v, ledger)
	must.Len(t, 1, vd.violations)
	must.StrContains(t, vd.violations[0].Detail, "nothing could be placed")
}

func TestCheckConvergedAndMinority(t *testing.T) {
	a := &view{server: "s1", applied: 5, jobs: map[string]*api.Job{"x": testJob("x", 1, false)}}
	b := &view{server: "s2", applied: 5, jobs: map[string]*api.Job{"x": testJob("x", 1, false)}}
	vd := newVerdict()
	vd.checkConverged([]*view{a, b})
	must.SliceEmpty(t, vd.violations)

	b.applied = 4
	vd.checkConverged([]*view{a, b})
	must.Len(t, 1, vd.violations)
	b.applied = 5
	b.jobs["x"].Version = ptr(uint64(1))
	vd.checkConverged([]*view{a, b})
	must.Len(t, 2, vd.violations)

	vd = newVerdict()
	probes := []probe{{JobID: "x", Server: "s3", Final: true}, {JobID: "y", Server: "s3", Final: true}, {JobID: "x", Server: "s3"}}
	vd.checkMinority(a, probes)
	must.Len(t, 1, vd.violations)
	must.Eq(t, invMinority, vd.violations[0].Invariant)
	must.Eq(t, 2, vd.checked[invMinority])
}

func TestCheckNodesReady(t *testing.T) {
	v := &view{server: "s1", nodes: []*api.NodeListStub{{ID: "n1", Name: "steady-1", Status: "ready"}, {ID: "n2", Name: "flaky-1", Status: "down"}}}
	vd := newVerdict()
	vd.checkNodesReady(v)
	must.Eq(t, 2, vd.checked[invNodes])
	must.Len(t, 1, vd.violations)
	must.StrContains(t, vd.violations[0].Detail, "flaky-1")
}
