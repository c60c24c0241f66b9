package scheduler

import (
	"testing"

	"github.com/opennomad/nomad/scheduler/schedtest"
	"github.com/opennomad/nomad/structs"
)

func TestCandidateSetFilters(t *testing.T) {
	cases := []struct {
		name string
		node *structs.Node
		job  func(*structs.Job)
		want bool
	}{
		{"ready node", schedtest.Node(), nil, true},
		{"initializing", schedtest.MakeNode().Status(structs.NodeStatusInit).Obj(), nil, false},
		{"down", schedtest.MakeNode().Status(structs.NodeStatusDown).Obj(), nil, false},
		{"disconnected", schedtest.MakeNode().Status(structs.NodeStatusDisconnected).Obj(), nil, false},
		{"ineligible", schedtest.MakeNode().Ineligible().Obj(), nil, false},
		{"draining", schedtest.MakeNode().Draining().Obj(), nil, false},
		{"other datacenter", schedtest.MakeNode().DC("dc9").Obj(), nil, false},
		{"datacenter glob", schedtest.MakeNode().DC("us-east-1").Obj(),
			func(j *structs.Job) { j.Datacenters = []string{"us-*"} }, true},
		{"datacenter wildcard", schedtest.MakeNode().DC("anything").Obj(),
			func(j *structs.Job) { j.Datacenters = []string{"*"} }, true},
		{"other pool", schedtest.MakeNode().Pool("gpu").Obj(), nil, false},
		{"job in that pool", schedtest.MakeNode().Pool("gpu").Obj(),
			func(j *structs.Job) { j.NodePool = "gpu" }, true},
		{"pool all", schedtest.MakeNode().Pool("gpu").Obj(),
			func(j *structs.Job) { j.NodePool = structs.NodePoolAll }, true},
		{"node without pool is in default", schedtest.MakeNode().Pool("").Obj(), nil, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job := schedtest.Job()
			if tc.job != nil {
				tc.job(job)
			}
			ctx := newTestContext(t, job, []*structs.Node{tc.node})
			if got := len(ctx.cands.nodes) == 1; got != tc.want {
				t.Fatalf("candidate = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestCandidateSetCounts(t *testing.T) {
	nodes := []*structs.Node{
		schedtest.MakeNode().DC("dc1").Obj(),
		schedtest.MakeNode().DC("dc1").Obj(),
		schedtest.MakeNode().DC("dc2").Obj(),
		schedtest.MakeNode().DC("dc3").Obj(),                                // in the pool, not a job DC
		schedtest.MakeNode().DC("dc1").Ineligible().Obj(),                   // not ready
		schedtest.MakeNode().DC("dc1").Pool("other").Obj(),                  // other pool
		schedtest.MakeNode().DC("dc2").Status(structs.NodeStatusDown).Obj(), // not ready
	}
	job := schedtest.Job()
	job.Datacenters = []string{"dc1", "dc2"}
	ctx := newTestContext(t, job, nodes)
	cs := ctx.cands
	if len(cs.nodes) != 3 || cs.byDC["dc1"] != 2 || cs.byDC["dc2"] != 1 || len(cs.byDC) != 2 || cs.inPool != 4 {
		t.Fatalf("nodes %d byDC %v inPool %d", len(cs.nodes), cs.byDC, cs.inPool)
	}
}

func TestDriverChecks(t *testing.T) {
	cases := []struct {
		name string
		node *structs.Node
		want bool
	}{
		{"healthy", schedtest.Node(), true},
		{"unhealthy", schedtest.MakeNode().Driver("exec", true, false).Obj(), false},
		{"not detected", schedtest.MakeNode().Driver("exec", false, false).Obj(), false},
		{"absent", schedtest.MakeNode().NoDriver("exec").Obj(), false},
		{"legacy attribute", schedtest.MakeNode().NoDriver("exec").Attr("driver.exec", "1").Obj(), true},
	}
	tg := schedtest.Job().TaskGroups[0]
	checks := groupChecks(tg)
	for _, tc := range cases {
		got := firstFailure(checks.perClass, tc.node)
		if (got == "") != tc.want {
			t.Errorf("%s: failure %q", tc.name, got)
		}
		if !tc.want && got != reasonMissingDrivers {
			t.Errorf("%s: reason %q", tc.name, got)
		}
	}
}

func TestFeasibilityCachesPerClass(t *testing.T) {
	// Three nodes of one class, one of another. Only the first node of a
	// class is checked; the unique attribute differs but is not read.
	var nodes []*structs.Node
	for range 3 {
		nodes = append(nodes, schedtest.MakeNode().Meta("rack", "r1").Obj())
	}
	nodes = append(nodes, schedtest.MakeNode().Meta("rack", "r2").Obj())
	job := schedtest.Job()
	job.Constraints = []*structs.Constraint{{LTarget: "${meta.rack}", RTarget: "r1", Operand: "="}}
	ctx := newTestContext(t, job, nodes)
	cs := ctx.cands
	if len(cs.classes) != 2 {
		t.Fatalf("classes %d", len(cs.classes))
	}
	f := ctx.jobFeasibility()
	checked := 0
	for i := range int32(len(cs.nodes)) {
		before := f.byClass[cs.classOf[i]].known
		reason, perClass := f.failure(cs, i)
		if !before {
			checked++
		}
		if !perClass && reason != "" {
			t.Fatal("class-level failure reported as per-node")
		}
		if (cs.nodes[i].Meta["rack"] == "r1") != (reason == "") {
			t.Fatalf("node in %s: reason %q", cs.nodes[i].Meta["rack"], reason)
		}
	}
	if checked != 2 {
		t.Fatalf("checked %d classes, want 2", checked)
	}
	elig := classEligibility(cs, f, []*feasibility{newFeasibility(groupChecks(job.TaskGroups[0]), len(cs.classes))})
	if len(elig) != 1 {
		// The group cache saw no node yet: only the job-ineligible class
		// is known.
		t.Fatalf("eligibility %v", elig)
	}
	for class, ok := range elig {
		if ok || class != nodes[3].ComputedClass {
			t.Fatalf("eligibility %v", elig)
		}
	}
}

func TestEscapedConstraintsCheckedPerNode(t *testing.T) {
	a := schedtest.MakeNode().Name("alpha").Obj()
	b := schedtest.MakeNode().Name("beta").Obj()
	job := schedtest.Job()
	job.Constraints = []*structs.Constraint{{LTarget: "${node.unique.name}", RTarget: "alpha", Operand: "="}}
	ctx := newTestContext(t, job, []*structs.Node{a, b})
	if a.ComputedClass != b.ComputedClass {
		t.Fatal("names must not split classes")
	}
	f := ctx.jobFeasibility()
	if !f.checks.escapes() || !jobEscapes(job) {
		t.Fatal("unique.name must escape")
	}
	for i := range int32(2) {
		reason, perClass := f.failure(ctx.cands, i)
		if perClass {
			t.Fatal("escaped check cached per class")
		}
		if (ctx.cands.nodes[i].Name == "alpha") != (reason == "") {
			t.Fatalf("%s: %q", ctx.cands.nodes[i].Name, reason)
		}
	}
}

func TestRetryMax(t *testing.T) {
	cases := []struct {
		name     string
		results  []bool // done per pass
		progress []bool // progress per pass
		max      int
		passes   int
		failed   bool
	}{
		{"done at once", []bool{true}, nil, 3, 1, false},
		{"done on the third try", []bool{false, false, true}, nil, 3, 3, false},
		{"exhausted", []bool{false, false, false, false}, nil, 3, 3, true},
		// Progress resets the count: 2 + 3 passes before giving up.
		{"progress resets", []bool{false, false, false, false, false, false}, []bool{false, true, false, false, false}, 3, 5, true},
	}
	for _, tc := range cases {
		n := 0
		err := retryMax(tc.max, func() (bool, error) {
			n++
			return tc.results[n-1], nil
		}, func() bool { return n-1 < len(tc.progress) && tc.progress[n-1] })
		if n != tc.passes || (err != nil) != tc.failed {
			t.Errorf("%s: passes %d err %v", tc.name, n, err)
		}
	}
}
