package scheduler

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// W1 (see the benchmark workloads reference): one service eval over N
// nodes in two datacenters and R racks, with a job constrained to half of
// the racks, with and without a spread over racks. The nodes and the job
// are written to a real state store; only Process is timed, over a
// snapshot, with the plan recorded, not applied.

var (
	w1Nodes  = []int{500, 1000, 5000, 10000}
	w1Racks  = []int{25, 50, 75}
	w1Counts = []int{50, 300, 600, 900, 1200}
)

// w1Node is node i of a W1 cluster with R racks.
func w1Node(i, racks int) *structs.Node {
	n := mock.Node(mock.Unreserved(),
		mock.NodeID(mock.IDFor(uint64(1_000_000+i))),
		mock.NodeName(fmt.Sprintf("w1-%d", i)),
		mock.Datacenter(fmt.Sprintf("dc-%d", i%2+1)),
		mock.Meta("rack", fmt.Sprintf("r%d", i%racks)),
		mock.CPUShares(4*3500), mock.Cores(4), mock.MemoryMB(32000), mock.DiskMB(100*1024),
		mock.Reserved(100, 256, 4*1024),
		mock.Attr("kernel.name", "linux"),
		mock.Attr("unique.network.ip-address", fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255)),
		mock.NoNodeDriver("raw_exec"), mock.NoNodeDriver("mock"))
	return n
}

// w1Job is the W1 job for R racks, count C, with or without spread.
func w1Job(racks, count int, spread bool) *structs.Job {
	half := make([]string, racks/2)
	for i := range half {
		half[i] = fmt.Sprintf("r%d", i)
	}
	job := mock.Job(mock.Count(10), mock.NoPorts(), mock.TaskDriver("exec"))
	job.ID, job.Name = "w1", "w1"
	job.Datacenters = []string{"dc-1", "dc-2"}
	job.Constraints = []*structs.Constraint{{LTarget: "${meta.rack}", RTarget: strings.Join(half, ","), Operand: structs.ConstraintSetContainsAny}}
	tg := job.TaskGroups[0]
	tg.Count = count
	tg.EphemeralDisk = &structs.EphemeralDisk{SizeMB: 150}
	tg.Tasks[0].Resources = &structs.Resources{CPU: 6000, MemoryMB: 6000}
	if spread {
		job.Spreads = []*structs.Spread{{Attribute: "${meta.rack}", Weight: 50}}
	}
	return job
}

// recordingPlanner keeps the last plan and commits nothing.
type recordingPlanner struct {
	plan    *structs.Plan
	updated *structs.Evaluation
	created []*structs.Evaluation
}

func (p *recordingPlanner) SubmitPlan(plan *structs.Plan) (*structs.PlanResult, State, error) {
	p.plan = plan
	return &structs.PlanResult{NodeUpdate: plan.NodeUpdate, NodeAllocation: plan.NodeAllocation,
		NodePreemptions: plan.NodePreemptions, Deployment: plan.Deployment, DeploymentUpdates: plan.DeploymentUpdates}, nil, nil
}
func (p *recordingPlanner) UpdateEval(e *structs.Evaluation) error { p.updated = e; return nil }
func (p *recordingPlanner) CreateEval(e *structs.Evaluation) error {
	p.created = append(p.created, e)
	return nil
}
func (p *recordingPlanner) ReblockEval(e *structs.Evaluation) error { return nil }

// w1Cluster is a state with the W1 nodes and job registered.
type w1Cluster struct {
	snap State
	job  *structs.Job
	// scratch is reused by every pass, as a worker reuses its own.
	scratch Scratch
}

func newW1Cluster(tb testing.TB, nodes, racks, count int, spread bool) *w1Cluster {
	h := NewHarness(tb)
	ns := make([]*structs.Node, nodes)
	for i := range ns {
		ns[i] = w1Node(i, racks)
	}
	h.UpsertNode(ns...)
	job := w1Job(racks, count, spread)
	h.UpsertJob(job)
	return &w1Cluster{snap: h.Snapshot(), job: job}
}

// w1Result is what one W1 pass placed.
type w1Result struct {
	placed int
	skew   int
	eval   *structs.Evaluation
}

// processW1 runs the W1 eval once; this is what the benchmark times.
func processW1(c *w1Cluster, planner *recordingPlanner) error {
	eval := mock.Eval(mock.EvalForJob(c.job), mock.TriggeredBy(structs.EvalTriggerJobRegister))
	eval.ID = "w1-eval"
	s, err := NewScheduler(structs.JobTypeService, &Config{Scratch: &c.scratch}, c.snap, planner)
	if err != nil {
		return err
	}
	planner.plan, planner.created = nil, nil
	return s.Process(eval)
}

// runW1 processes the eval and measures what it placed.
func runW1(c *w1Cluster, racks int, planner *recordingPlanner) (w1Result, error) {
	if err := processW1(c, planner); err != nil {
		return w1Result{}, err
	}
	return w1Measure(c, racks, planner), nil
}

// w1Measure counts the placements of the last plan per rack.
func w1Measure(c *w1Cluster, racks int, planner *recordingPlanner) w1Result {
	res := w1Result{eval: planner.updated}
	if planner.plan == nil {
		return res
	}
	perRack := map[string]int{}
	for nodeID, allocs := range planner.plan.NodeAllocation {
		n, _ := c.snap.NodeByID(nodeID)
		perRack[n.Meta["rack"]] += len(allocs)
		res.placed += len(allocs)
	}
	lo, hi := 1<<30, 0
	for r := range racks / 2 {
		v := perRack[fmt.Sprintf("r%d", r)]
		lo, hi = min(lo, v), max(hi, v)
	}
	res.skew = hi - lo
	return res
}

func BenchmarkW1(b *testing.B) {
	for _, nodes := range w1Nodes {
		for _, racks := range w1Racks {
			for _, count := range w1Counts {
				for _, spread := range []bool{false, true} {
					yn := map[bool]string{true: "yes", false: "no"}[spread]
					name := fmt.Sprintf("nodes=%d/racks=%d/count=%d/spread=%s", nodes, racks, count, yn)
					b.Run(name, func(b *testing.B) {
						c := newW1Cluster(b, nodes, racks, count, spread)
						planner := &recordingPlanner{}
						// Building the cluster leaves garbage; collect it
						// now so it is not charged to the first passes.
						runtime.GC()
						b.ReportAllocs()
						b.ResetTimer()
						cpu0 := processCPU()
						for range b.N {
							if err := processW1(c, planner); err != nil {
								b.Fatal(err)
							}
						}
						if cpu := processCPU() - cpu0; cpu > 0 {
							b.ReportMetric(float64(cpu)/float64(b.N)/1e6, "cpu-ms/op")
						}
						res := w1Measure(c, racks, planner)
						b.ReportMetric(float64(res.placed), "placed/op")
						b.ReportMetric(float64(res.skew), "rack_skew/op")
					})
				}
			}
		}
	}
}

// TestW1Placement checks the quality side of W1 on the smaller clusters:
// every alloc that fits is placed, a spread job is spread perfectly, and
// a job larger than the cluster is explained.
func TestW1Placement(t *testing.T) {
	for _, nodes := range []int{500, 1000} {
		for _, racks := range w1Racks {
			// Capacity: two allocs per node in the first half of the racks.
			feasible := 0
			perRackNodes := map[int]int{}
			for i := range nodes {
				if i%racks < racks/2 {
					feasible++
					perRackNodes[i%racks]++
				}
			}
			capacity := 2 * feasible
			for _, count := range w1Counts {
				for _, spread := range []bool{false, true} {
					name := fmt.Sprintf("nodes=%d/racks=%d/count=%d/spread=%v", nodes, racks, count, spread)
					t.Run(name, func(t *testing.T) {
						c := newW1Cluster(t, nodes, racks, count, spread)
						reads := newReadRecorder(c.snap)
						c.snap = reads
						res, err := runW1(c, racks, &recordingPlanner{})
						if err != nil {
							t.Fatal(err)
						}
						reads.verify(t)
						if want := min(count, capacity); res.placed != want {
							t.Fatalf("placed %d, want %d", res.placed, want)
						}
						if spread && count <= capacity {
							want := 0
							if count%(racks/2) != 0 {
								want = 1
							}
							if res.skew > want {
								t.Fatalf("rack skew %d, want <= %d", res.skew, want)
							}
						}
						if count <= capacity {
							if len(res.eval.FailedTGAllocs) != 0 {
								t.Fatalf("unexpected failure %+v", res.eval.FailedTGAllocs)
							}
							return
						}
						m := res.eval.FailedTGAllocs["web"]
						if m == nil {
							t.Fatal("failure not explained")
						}
						if m.NodesEvaluated != nodes || m.NodesFiltered != nodes-feasible ||
							m.NodesExhausted != feasible || m.DimensionExhausted["cpu"] != feasible {
							t.Fatalf("metric evaluated=%d filtered=%d exhausted=%d dims=%v", m.NodesEvaluated,
								m.NodesFiltered, m.NodesExhausted, m.DimensionExhausted)
						}
						if m.CoalescedFailures != count-capacity-1 || res.eval.QueuedAllocations["web"] != count-capacity {
							t.Fatalf("coalesced %d queued %d", m.CoalescedFailures, res.eval.QueuedAllocations["web"])
						}
						if m.NodesAvailable["dc-1"]+m.NodesAvailable["dc-2"] != nodes {
							t.Fatalf("available %v", m.NodesAvailable)
						}
					})
				}
			}
		}
	}
}
