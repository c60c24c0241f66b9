package scheduler

import (
	"testing"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

func TestCandidateSetFilters(t *testing.T) {
	cases := []struct {
		name string
		node *structs.Node
		job  func(*structs.Job)
		want bool
	}{
		{"ready node", mock.Node(mock.Unreserved()), nil, true},
		{"initializing", mock.Node(mock.Unreserved(), mock.NodeStatus(structs.NodeStatusInit)), nil, false},
		{"down", mock.Node(mock.Unreserved(), mock.NodeStatus(structs.NodeStatusDown)), nil, false},
		{"disconnected", mock.Node(mock.Unreserved(), mock.NodeStatus(structs.NodeStatusDisconnected)), nil, false},
		{"ineligible", mock.Node(mock.Unreserved(), mock.Ineligible()), nil, false},
		{"draining", mock.Node(mock.Unreserved(), mock.Draining()), nil, false},
		{"other datacenter", mock.Node(mock.Unreserved(), mock.Datacenter("dc9")), nil, false},
		{"datacenter glob", mock.Node(mock.Unreserved(), mock.Datacenter("us-east-1")),
			func(j *structs.Job) { j.Datacenters = []string{"us-*"} }, true},
		{"datacenter wildcard", mock.Node(mock.Unreserved(), mock.Datacenter("anything")),
			func(j *structs.Job) { j.Datacenters = []string{"*"} }, true},
		{"other pool", mock.Node(mock.Unreserved(), mock.NodePool("gpu")), nil, false},
		{"job in that pool", mock.Node(mock.Unreserved(), mock.NodePool("gpu")),
			func(j *structs.Job) { j.NodePool = "gpu" }, true},
		{"pool all", mock.Node(mock.Unreserved(), mock.NodePool("gpu")),
			func(j *structs.Job) { j.NodePool = structs.NodePoolAll }, true},
		{"node without pool is in default", mock.Node(mock.Unreserved(), mock.NodePool("")), nil, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job := mock.Job(mock.Count(10), mock.NoPorts())
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
		mock.Node(mock.Unreserved(), mock.Datacenter("dc1")),
		mock.Node(mock.Unreserved(), mock.Datacenter("dc1")),
		mock.Node(mock.Unreserved(), mock.Datacenter("dc2")),
		mock.Node(mock.Unreserved(), mock.Datacenter("dc3")),                                          // in the pool, not a job DC
		mock.Node(mock.Unreserved(), mock.Datacenter("dc1"), mock.Ineligible()),                       // not ready
		mock.Node(mock.Unreserved(), mock.Datacenter("dc1"), mock.NodePool("other")),                  // other pool
		mock.Node(mock.Unreserved(), mock.Datacenter("dc2"), mock.NodeStatus(structs.NodeStatusDown)), // not ready
	}
	job := mock.Job(mock.Count(10), mock.NoPorts())
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
		{"healthy", mock.Node(mock.Unreserved()), true},
		{"unhealthy", mock.Node(mock.Unreserved(), mock.NodeDriver("exec", true, false)), false},
		{"not detected", mock.Node(mock.Unreserved(), mock.NodeDriver("exec", false, false)), false},
		{"absent", mock.Node(mock.Unreserved(), mock.NoNodeDriver("exec")), false},
		{"legacy attribute", mock.Node(mock.Unreserved(), mock.NoNodeDriver("exec"), mock.Attr("driver.exec", "1")), true},
	}
	tg := mock.Job(mock.Count(10), mock.NoPorts(), mock.TaskDriver("exec")).TaskGroups[0]
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
		nodes = append(nodes, mock.Node(mock.Unreserved(), mock.Meta("rack", "r1")))
	}
	nodes = append(nodes, mock.Node(mock.Unreserved(), mock.Meta("rack", "r2")))
	job := mock.Job(mock.Count(10), mock.NoPorts())
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
	a := mock.Node(mock.Unreserved(), mock.NodeName("alpha"))
	b := mock.Node(mock.Unreserved(), mock.NodeName("beta"))
	job := mock.Job(mock.Count(10), mock.NoPorts())
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
