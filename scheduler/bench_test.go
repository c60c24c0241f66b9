package scheduler

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// Benchmarks of evaluations other than W1: the small jobs that make up
// most of a busy cluster's traffic, the evaluation that finds nothing to
// do (node updates, re-registering an unchanged job), and system jobs.

// benchCluster writes n default nodes, the job and the other jobs to a
// store, then the allocs allocs returns.
func benchCluster(b *testing.B, n int, job *structs.Job, allocs func(nodes []*structs.Node) []*structs.Allocation, others ...*structs.Job) State {
	h := NewHarness(b)
	nodes := make([]*structs.Node, n)
	for i := range nodes {
		nodes[i] = mock.Node(mock.Unreserved(), mock.NodeID(mock.IDFor(uint64(2_000_000+i))), mock.Meta("rack", fmt.Sprintf("r%d", i%20)))
	}
	h.UpsertNode(nodes...)
	h.UpsertJob(job)
	for _, o := range others {
		h.UpsertJob(o)
	}
	if allocs != nil {
		h.UpsertAllocs(allocs(nodes)...)
	}
	return h.Snapshot()
}

// benchProcess times evals of the job over snap, one after the other on
// one Scratch, as a worker runs them.
func benchProcess(b *testing.B, snap State, job *structs.Job) {
	planner := &recordingPlanner{}
	cfg := &Config{Scratch: &Scratch{}}
	eval := mock.Eval(mock.EvalForJob(job), mock.TriggeredBy(structs.EvalTriggerJobRegister))
	runtime.GC()
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU()
	for range b.N {
		s, err := NewScheduler(job.Type, cfg, snap, planner)
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Process(eval); err != nil {
			b.Fatal(err)
		}
	}
	// CPU time, the collector's included, is what other work on the
	// server loses; wall time on a shared machine also counts waiting.
	if cpu := processCPU() - cpu0; cpu > 0 {
		b.ReportMetric(float64(cpu)/float64(b.N)/1e3, "cpu-µs/op")
	}
}

func BenchmarkServiceSmallJob(b *testing.B) {
	for _, nodes := range []int{1000, 5000} {
		for _, count := range []int{1, 10} {
			b.Run(fmt.Sprintf("nodes=%d/count=%d", nodes, count), func(b *testing.B) {
				job := mock.Job(mock.Count(10), mock.NoPorts())
				job.TaskGroups[0].Count = count
				benchProcess(b, benchCluster(b, nodes, job, nil), job)
			})
		}
	}
}

// BenchmarkServiceNoChange is an eval of a job whose allocs are all in
// place: reconcile, find nothing to do, write the eval back.
func BenchmarkServiceNoChange(b *testing.B) {
	for _, count := range []int{100, 1000} {
		b.Run(fmt.Sprintf("nodes=5000/count=%d", count), func(b *testing.B) {
			job := mock.Job(mock.Count(10), mock.NoPorts())
			job.TaskGroups[0].Count = count
			snap := benchCluster(b, 5000, job, func(nodes []*structs.Node) []*structs.Allocation {
				var out []*structs.Allocation
				for i := range count {
					out = append(out, mock.Alloc(mock.ForJob(job, i), mock.OnNode(nodes[i]), mock.ClientStatus(structs.AllocClientStatusRunning)))
				}
				return out
			})
			benchProcess(b, snap, job)
		})
	}
}

func BenchmarkServiceSpreadAffinity(b *testing.B) {
	job := mock.Job(mock.Count(10), mock.NoPorts())
	job.TaskGroups[0].Count = 500
	job.Spreads = []*structs.Spread{{Attribute: "${meta.rack}", Weight: 50}}
	job.Affinities = []*structs.Affinity{{LTarget: "${meta.rack}", RTarget: "r1,r2,r3", Operand: structs.ConstraintSetContainsAny, Weight: 50}}
	benchProcess(b, benchCluster(b, 5000, job, nil), job)
}

func BenchmarkSystemJob(b *testing.B) {
	for _, nodes := range []int{1000, 5000} {
		b.Run(fmt.Sprintf("nodes=%d", nodes), func(b *testing.B) {
			job := mock.SystemJob(mock.GroupName("web"))
			benchProcess(b, benchCluster(b, nodes, job, nil), job)
		})
	}
}

func BenchmarkReconcile(b *testing.B) {
	node := mock.Node(mock.Unreserved())
	old := versioned(mock.Job(mock.Count(10), mock.NoPorts()), 0, 10)
	old.TaskGroups[0].Count = 1000
	allocs := allocsOn(old, node, 1000)
	job := versioned(old.Copy(), 1, 20)
	job.TaskGroups[0].Tasks[0].Env["V"] = "2"
	job.TaskGroups[0].Update = &structs.UpdateStrategy{MaxParallel: 10}
	b.ReportAllocs()
	for range b.N {
		r := reconcile(reconcileInput{job: job, jobID: job.ID, namespace: job.Namespace,
			evalID: "eval-1", evalPriority: 50, now: testNow, allocs: allocs, update: testUpdateFn})
		if len(r.destructive) != 10 {
			b.Fatalf("destructive %d", len(r.destructive))
		}
	}
}

// BenchmarkServiceUpdateOne is the eval of a one-alloc job whose new
// version replaces its alloc: the pass stops the old alloc, on a node it
// must find among the candidates, and places the new one.
func BenchmarkServiceUpdateOne(b *testing.B) {
	job := mock.Job(mock.Count(10), mock.NoPorts())
	job.TaskGroups[0].Count = 1
	h := NewHarness(b)
	nodes := make([]*structs.Node, 1000)
	for i := range nodes {
		nodes[i] = mock.Node(mock.Unreserved(), mock.NodeID(mock.IDFor(uint64(2_000_000+i))), mock.Meta("rack", fmt.Sprintf("r%d", i%20)))
	}
	h.UpsertNode(nodes...)
	h.UpsertJob(job)
	h.UpsertAllocs(mock.Alloc(mock.ForJob(job, 0), mock.OnNode(nodes[0]), mock.ClientStatus(structs.AllocClientStatusRunning)))
	update := job.Copy()
	update.TaskGroups[0].Tasks[0].Env = map[string]string{"V": "2"}
	h.UpsertJob(update)
	benchProcess(b, h.Snapshot(), update)
}
