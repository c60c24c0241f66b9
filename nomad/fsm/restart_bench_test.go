package fsm

import (
	"fmt"
	"io"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// BenchmarkSnapshotRestart measures what a Raft snapshot and a server's
// restart from it cost with n single-allocation service jobs on 1,000
// nodes, each left as the pipeline leaves it: the job, its version and
// summary, the register eval (complete), a successful deployment and one running, healthy alloc.
//
// "persist" streams the FSM's snapshot into a snapshot of Raft's file
// store (what a server does every SnapshotThreshold entries, and what
// `nomad operator snapshot save` asks for); "restore" reads it back from
// that store into a fresh FSM (what a server does first when it
// restarts). One op is the whole snapshot, so ns/op is its time; the
// process's CPU time per op (garbage collection included), the
// snapshot's size and the restored store's heap per job are reported.
//
//	go test -run '^$' -bench BenchmarkSnapshotRestart -benchmem -count 6 ./nomad/fsm
func BenchmarkSnapshotRestart(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("jobs=%d", n), func(b *testing.B) {
			f := restartFixture(b, n)
			store, err := raft.NewFileSnapshotStore(b.TempDir(), 1, io.Discard)
			if err != nil {
				b.Fatal(err)
			}
			// persist writes one snapshot of f and returns its ID.
			persist := func() (string, int64) {
				snap, err := f.Snapshot()
				if err != nil {
					b.Fatal(err)
				}
				sink, err := store.Create(raft.SnapshotVersionMax, 1, 1, raft.Configuration{}, 1, nil)
				if err != nil {
					b.Fatal(err)
				}
				if err := snap.Persist(sink); err != nil {
					b.Fatal(err)
				}
				snaps, err := store.List()
				if err != nil || len(snaps) == 0 {
					b.Fatalf("snapshot not listed: %v", err)
				}
				return snaps[0].ID, snaps[0].Size
			}
			b.Run("persist", func(b *testing.B) {
				b.ReportAllocs()
				var size int64
				cpu := processCPU()
				for b.Loop() {
					_, size = persist()
				}
				b.ReportMetric((processCPU()-cpu).Seconds()/float64(b.N), "cpu-s/op")
				b.ReportMetric(float64(size), "snapshot-bytes")
				b.ReportMetric(float64(size)/float64(n), "snapB/job")
			})
			// A restarting server holds nothing but what it restores: the
			// restores run once the fixture is gone, so that the garbage
			// collector does not mark it again and again meanwhile. The
			// leaf runs -count times; the first one writes the snapshot.
			var id string
			b.Run("restore", func(b *testing.B) {
				if id == "" {
					id, _ = persist()
					f = nil
					restartFixtures.Lock()
					delete(restartFixtures.m, n)
					restartFixtures.Unlock()
				}
				b.ReportAllocs()
				var (
					heap uint64
					cpu  time.Duration
				)
				for b.Loop() {
					b.StopTimer()
					fresh, err := New(Config{})
					if err != nil {
						b.Fatal(err)
					}
					_, rc, err := store.Open(id)
					if err != nil {
						b.Fatal(err)
					}
					before := heapAfterGC()
					began := processCPU()
					b.StartTimer()
					if err := fresh.Restore(rc); err != nil {
						b.Fatal(err)
					}
					b.StopTimer()
					cpu += processCPU() - began
					heap = heapAfterGC() - before
					if got := countAllocs(b, fresh.State()); got != n {
						b.Fatalf("restored %d allocs, want %d", got, n)
					}
					runtime.KeepAlive(fresh)
					b.StartTimer()
				}
				b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
				b.ReportMetric(float64(heap)/float64(n), "restoreB/job")
			})
		})
	}
}

// restartFixtures keeps one built FSM per job count for the whole run:
// building 100,000 jobs takes longer than measuring them.
var restartFixtures = struct {
	sync.Mutex
	m map[int]*FSM
}{m: map[int]*FSM{}}

func restartFixture(b *testing.B, n int) *FSM {
	restartFixtures.Lock()
	defer restartFixtures.Unlock()
	if f := restartFixtures.m[n]; f != nil {
		return f
	}
	b.StopTimer()
	defer b.StartTimer()
	f := buildRestartFixture(b, n)
	restartFixtures.m[n] = f
	return f
}

// restartNodes is the number of nodes the jobs are placed on.
const restartNodes = 1_000

// restartBatch is the number of jobs whose entries are built and applied
// together, as a follower's Raft hands over what arrived at once.
const restartBatch = 64

// buildRestartFixture applies to a new FSM the Raft entries the pipeline
// writes for n single-allocation jobs: the job registration with its
// eval; the plan result placing the alloc with its deployment and the
// eval's final status; the clients' "running", batched; the deployment
// watcher's health verdicts, batched; and, a pass later, the watcher's
// batch marking the deployments successful (no eval: its dry run of the
// scheduler found nothing else to do).
func buildRestartFixture(b *testing.B, n int) *FSM {
	b.Helper()
	f, err := New(Config{})
	if err != nil {
		b.Fatal(err)
	}
	var (
		index uint64
		logs  []*raft.Log
	)
	add := func(typ structs.MessageType, req interface{}) uint64 {
		body, err := structs.Encode(typ, req)
		if err != nil {
			b.Fatal(err)
		}
		index++
		logs = append(logs, &raft.Log{Index: index, Term: 1, Type: raft.LogCommand, Data: body})
		return index
	}
	flush := func() {
		for i, resp := range f.ApplyBatch(logs) {
			if err, ok := resp.(error); ok {
				b.Fatalf("entry %d (%s): %v", logs[i].Index, structs.MessageType(logs[i].Data[0]), err)
			}
		}
		logs = logs[:0]
	}

	nodes := make([]*structs.Node, restartNodes)
	for i := range nodes {
		nodes[i] = mock.Node(mock.NodeName(fmt.Sprintf("node-%04d", i)))
		add(structs.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: nodes[i]})
		if len(logs) == restartBatch {
			flush()
		}
	}
	flush()

	start := time.Unix(1_700_000_000, 0).UTC()
	type placed struct {
		job    *structs.Job
		deploy *structs.Deployment
		alloc  *structs.Allocation
	}
	batch := make([]placed, 0, restartBatch)
	for first := 0; first < n; first += restartBatch {
		batch = batch[:0]
		now := start.Add(time.Duration(first) * time.Millisecond)
		for i := first; i < min(first+restartBatch, n); i++ {
			job := restartJob(i)
			eval := mock.Eval(mock.EvalForJob(job))
			registered := add(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job, Eval: eval})
			// The job as the store holds it after the registration.
			stored := *job
			stored.CreateIndex, stored.ModifyIndex, stored.JobModifyIndex = registered, registered, registered
			batch = append(batch, placed{job: &stored})
			p := &batch[len(batch)-1]
			p.deploy = structs.NewDeployment(&stored, stored.Priority, now)
			p.deploy.TaskGroups["web"] = &structs.DeploymentState{
				DesiredTotal:      1,
				ProgressDeadline:  10 * time.Minute,
				RequireProgressBy: now.Add(10 * time.Minute),
			}
			node := nodes[i%len(nodes)]
			p.alloc = mock.Alloc(mock.ForJob(&stored, 0), mock.OnNode(node))
			p.alloc.EvalID, p.alloc.DeploymentID = eval.ID, p.deploy.ID
			p.alloc.Metrics = placementMetrics(nodes, i)
			p.alloc.Job = nil
			done := *eval
			done.Status = structs.EvalStatusComplete
			done.QueuedAllocations = map[string]int{"web": 0}
			done.DeploymentID = p.deploy.ID
			add(structs.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
				AllocUpdateRequest: structs.AllocUpdateRequest{AllocsUpdated: []*structs.Allocation{p.alloc}},
				JobRef:             stored.VersionRef(),
				Deployment:         p.deploy,
				EvalID:             eval.ID,
				Eval:               &done,
				UpdatedAt:          now.UnixNano(),
			})
		}
		running := &structs.AllocUpdateRequest{}
		health := &structs.DeploymentAllocHealthBatchRequest{}
		success := &structs.DeploymentAllocHealthBatchRequest{}
		for _, p := range batch {
			running.Alloc = append(running.Alloc, &structs.Allocation{
				ID: p.alloc.ID, NodeID: p.alloc.NodeID, ClientStatus: structs.AllocClientStatusRunning,
				TaskStates: map[string]*structs.TaskState{
					"web": {State: structs.TaskStateRunning, StartedAt: now},
				},
			})
			health.Requests = append(health.Requests, &structs.ApplyDeploymentAllocHealthRequest{
				DeploymentAllocHealthRequest: structs.DeploymentAllocHealthRequest{
					DeploymentID: p.deploy.ID, HealthyAllocationIDs: []string{p.alloc.ID}},
				Timestamp: now.Add(10 * time.Second),
			})
			success.Requests = append(success.Requests, &structs.ApplyDeploymentAllocHealthRequest{
				DeploymentAllocHealthRequest: structs.DeploymentAllocHealthRequest{DeploymentID: p.deploy.ID},
				Timestamp:                    now.Add(11 * time.Second),
				DeploymentUpdate: &structs.DeploymentStatusUpdate{
					DeploymentID:      p.deploy.ID,
					Status:            structs.DeploymentStatusSuccessful,
					StatusDescription: structs.DeploymentStatusDescriptionSuccessful,
				},
			})
		}
		add(structs.AllocClientUpdateRequestType, running)
		add(structs.DeploymentAllocHealthBatchRequestType, health)
		add(structs.DeploymentAllocHealthBatchRequestType, success)
		flush()
	}
	if got := countAllocs(b, f.State()); got != n {
		b.Fatalf("built %d allocs, want %d", got, n)
	}
	checkPipelineEnd(b, f.State(), batch[len(batch)-1].alloc.ID)
	return f
}

// checkPipelineEnd fails unless the alloc, its deployment and its evals
// are where the pipeline leaves them.
func checkPipelineEnd(b *testing.B, s *state.StateStore, allocID string) {
	b.Helper()
	a, err := s.AllocByID(nil, allocID)
	if err != nil || a == nil {
		b.Fatalf("alloc %s: %v", allocID, err)
	}
	if a.ClientStatus != structs.AllocClientStatusRunning || a.DeploymentStatus == nil || !a.DeploymentStatus.IsHealthy() {
		b.Fatalf("alloc %s is %s, deployment status %+v", a.ID, a.ClientStatus, a.DeploymentStatus)
	}
	d, err := s.DeploymentByID(nil, a.DeploymentID)
	if err != nil || d == nil || d.Status != structs.DeploymentStatusSuccessful {
		b.Fatalf("deployment %s: %+v, %v", a.DeploymentID, d, err)
	}
	evals, err := s.EvalsByJob(nil, a.Namespace, a.JobID)
	if err != nil || len(evals) != 1 {
		b.Fatalf("job %s: %d evals, %v", a.JobID, len(evals), err)
	}
	for _, e := range evals {
		if e.Status != structs.EvalStatusComplete {
			b.Fatalf("eval %s (%s) is %s", e.ID, e.TriggeredBy, e.Status)
		}
	}
}

// restartJob is the i-th job the load generator registers: a service job
// of one group of one small task with the default update block, no ports.
func restartJob(i int) *structs.Job {
	return mock.Job(mock.JobID(fmt.Sprintf("web-%06d", i)), mock.Count(1), mock.NoPorts(), mock.TaskResources(20, 16),
		func(j *structs.Job) {
			j.Update = *structs.DefaultUpdateStrategy()
			j.Constraints = nil
			j.Meta = nil
			j.TaskGroups[0].Meta = nil
		})
}

// placementMetrics is what the scheduler records of placement i: the
// pool's nodes, and the scores of the five best nodes it ranked.
func placementMetrics(nodes []*structs.Node, i int) *structs.AllocMetric {
	m := &structs.AllocMetric{
		NodesEvaluated: 10,
		NodesInPool:    len(nodes),
		NodePool:       structs.NodePoolDefault,
		NodesAvailable: map[string]int{"dc1": len(nodes)},
		AllocationTime: 80 * time.Microsecond,
	}
	for k := range 5 {
		binpack := 0.1 + float64(k)/100
		m.ScoreMetaData = append(m.ScoreMetaData, &structs.NodeScoreMeta{
			NodeID: nodes[(i+k)%len(nodes)].ID,
			Scores: structs.NamedScoresOf(map[string]float64{
				structs.ScorerBinPack:      binpack,
				structs.ScorerAntiAffinity: 0,
				structs.ScorerPenalty:      0,
				structs.ScorerAffinity:     0,
			}),
			NormScore: binpack,
		})
	}
	return m
}

func countAllocs(b *testing.B, s *state.StateStore) int {
	b.Helper()
	allocs, err := s.Allocs(nil, structs.DefaultNamespace)
	if err != nil {
		b.Fatal(err)
	}
	return len(allocs)
}

// processCPU is the CPU time the process used so far, its garbage
// collection included: what a restore costs the machine, which the
// load of other processes does not change as it changes wall time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// heapAfterGC is the live heap once garbage is collected.
func heapAfterGC() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
