package nomad

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/opennomad/nomad/nomad/fsm"
	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/nomad/stream"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// BenchmarkJobCost measures what one single-allocation service job costs
// the servers, one op being one job, from its registration to its
// deployment's success: the job and its eval are registered, a worker
// schedules it, the plan applier commits the alloc, the node's client
// reports it running (through Node.UpdateAlloc, gathered per batch
// interval as real clients' reports are), and the deployment watcher
// records it healthy and the deployment successful.
//
// Everything runs in one process on one server whose Raft log is in
// memory, so the numbers that matter are the ones load on the machine
// does not change: allocs/op and B/op, Raft entries and bytes per job
// (reported with the entry types in the log), and the state store's heap
// per job after GC.
//
// "server" is the leader doing all of it; its Raft hands the FSM the
// entries it commits together (FSM.ApplyBatch), and the run logs how many
// that was. "follower" replays the same Raft entries into a second FSM
// (decode and apply, events published), which is what every other server
// of a cluster pays per job: "batch=1" one entry at a time (FSM.Apply),
// the others in ApplyBatch calls of that many entries, as a follower's
// Raft hands over what one append brought. Run them with a fixed count,
// so all measure the same number of jobs:
//
//	go test -run x -bench BenchmarkJobCost -benchtime 2000x -benchmem -count 5 ./nomad
func BenchmarkJobCost(b *testing.B) {
	b.Run("server", func(b *testing.B) {
		sizes := recordBatchSizes(b)
		run := runJobCost(b, b.N)
		run.report(b)
		sizes.report(b)
	})
	b.Run("follower", func(b *testing.B) {
		// One recorded run per job count serves every batch size.
		runs := map[int]*jobCostRun{}
		for _, batch := range []int{1, 8, 64} {
			b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
				b.StopTimer()
				run := runs[b.N]
				if run == nil {
					run = runJobCost(b, b.N)
					runs[b.N] = run
				}
				run.replay(b, batch)
			})
		}
	})
}

// jobCostNodes is the number of nodes the jobs are placed on.
const jobCostNodes = 100

// jobCostRun is one run of n jobs and the Raft entries it wrote.
type jobCostRun struct {
	n int
	// setup are the entries before the first registration (nodes, root
	// key, scheduler configuration); entries are those of the run.
	setup, entries []*raft.Log
}

// costJob is the job the load generator registers over the HTTP API,
// as the agent hands it to Job.Register: a service job of one group of
// one small task with the default update block, no ports.
func costJob() *structs.Job {
	return mock.Job(mock.Count(1), mock.NoPorts(), mock.TaskResources(20, 16),
		func(j *structs.Job) {
			j.Update = *structs.DefaultUpdateStrategy()
			j.Constraints = nil
			j.Meta = nil
			j.TaskGroups[0].Meta = nil
		})
}

// runJobCost starts a server, runs n jobs through it with the timer
// running and returns the Raft entries.
func runJobCost(b testing.TB, n int) *jobCostRun {
	b.Helper()
	// A buffer deep enough that playClients, which follows the events,
	// never falls behind on a busy machine.
	events := stream.NewEventBroker(stream.Config{EventBufferSize: 1 << 14})
	s := newTestServer(b, func(c *Config) {
		c.NumSchedulers = 2
		c.LeaderPausedFraction = 0
		c.EventPublisher = events
		// Keep every entry of the run in the log for counting.
		c.RaftConfig.SnapshotThreshold = 1 << 40
		c.RaftConfig.TrailingLogs = 1 << 40
	})
	defer s.Shutdown()
	nodes := make([]*structs.Node, jobCostNodes)
	for i := range nodes {
		nodes[i] = mock.Node()
		if _, _, err := s.raftApply(structs.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: nodes[i]}); err != nil {
			b.Fatal(err)
		}
	}
	jobs := make([]*structs.Job, n)
	for i := range jobs {
		jobs[i] = costJob()
	}
	first := s.raft.LastIndex() + 1

	bench, _ := b.(*testing.B)
	if bench != nil {
		bench.ReportAllocs()
		bench.ResetTimer()
		bench.StartTimer()
	}
	var (
		next   atomic.Int64
		failed atomic.Int64
		wg     sync.WaitGroup
	)
	// As many callers as the load generator keeps in flight.
	for range 32 {
		wg.Go(func() {
			for i := next.Add(1); i <= int64(n); i = next.Add(1) {
				var reply structs.JobRegisterResponse
				if err := s.RPC("Job.Register", &structs.JobRegisterRequest{Job: jobs[i-1]}, &reply); err != nil {
					failed.Add(1)
				}
			}
		})
	}
	playClients(b, s, events, first, jobs)
	wg.Wait()
	if bench != nil {
		bench.StopTimer()
	}
	if f := failed.Load(); f > 0 {
		b.Fatalf("%d registrations failed", f)
	}

	last := s.raft.LastIndex()
	run := &jobCostRun{n: n}
	for i := uint64(1); i <= last; i++ {
		var l raft.Log
		if err := s.raftStores.logs.GetLog(i, &l); err != nil {
			b.Fatalf("raft log %d: %v", i, err)
		}
		if i < first {
			run.setup = append(run.setup, &l)
		} else {
			run.entries = append(run.entries, &l)
		}
	}
	return run
}

// playClients plays the nodes' clients and waits until every job's alloc
// runs, its deployment succeeded and no eval is left pending. It follows
// the server's event stream, so its own cost grows with the events, not
// with the time the run takes: the allocs of each batch of events that
// are placed and still pending are reported running in one
// Node.UpdateAlloc call, as a client reports a batch of changes.
func playClients(b testing.TB, s *Server, events *stream.EventBroker, from uint64, jobs []*structs.Job) {
	b.Helper()
	n := len(jobs)
	// Events carry allocs without their job; the client knows its tasks.
	byID := make(map[string]*structs.Job, n)
	for _, j := range jobs {
		byID[j.ID] = j
	}
	sub, err := events.Subscribe(&stream.SubscribeRequest{
		Topics:    map[structs.Topic][]string{structs.TopicAllocation: nil, structs.TopicDeployment: nil},
		Namespace: "*",
		Index:     from,
	})
	if err != nil {
		b.Fatal(err)
	}
	defer sub.Unsubscribe()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var (
		reports sync.WaitGroup
		failed  atomic.Int64
	)
	reported := make(map[string]bool, n)
	succeeded := make(map[string]bool, n)
	for len(succeeded) < n {
		batch, err := sub.Next(ctx)
		if err != nil {
			b.Fatalf("%d of %d deployments succeeded: %v", len(succeeded), n, err)
		}
		var updates []*structs.Allocation
		for _, e := range batch.Events {
			switch p := e.Payload.(type) {
			case *structs.AllocationEvent:
				a := p.Allocation
				if a.ClientStatus == structs.AllocClientStatusPending && a.DesiredStatus == structs.AllocDesiredStatusRun && !reported[a.ID] {
					reported[a.ID] = true
					withJob := *a
					withJob.Job = byID[a.JobID]
					updates = append(updates, runningUpdate(&withJob, time.Now().Add(-time.Hour)))
				}
			case *structs.DeploymentEvent:
				if p.Deployment.Status == structs.DeploymentStatusSuccessful {
					succeeded[p.Deployment.ID] = true
				}
			}
		}
		if len(updates) > 0 {
			// Not waited for: the call returns once the server's batch
			// of client updates is written, and clients do not wait for
			// each other.
			reports.Go(func() {
				var reply structs.GenericResponse
				if err := s.RPC("Node.UpdateAlloc", &structs.AllocUpdateRequest{Alloc: updates}, &reply); err != nil {
					failed.Add(1)
				}
			})
		}
	}
	reports.Wait()
	if f := failed.Load(); f > 0 {
		b.Fatalf("%d client updates failed", f)
	}
	for {
		pending, err := s.State().EvalsByStatus(nil, structs.EvalStatusPending)
		if err != nil {
			b.Fatal(err)
		}
		if len(pending) == 0 {
			return
		}
		if ctx.Err() != nil {
			b.Fatalf("%d evals still pending", len(pending))
		}
		time.Sleep(time.Millisecond)
	}
}

// report adds the run's Raft entries and bytes per job to the
// benchmark's results and logs them by entry type.
func (r *jobCostRun) report(b *testing.B) {
	type tally struct{ entries, bytes int }
	byType := map[string]*tally{}
	total := tally{}
	for _, l := range r.entries {
		if l.Type != raft.LogCommand || len(l.Data) == 0 {
			continue
		}
		name := structs.MessageType(l.Data[0]).String()
		t := byType[name]
		if t == nil {
			t = &tally{}
			byType[name] = t
		}
		t.entries++
		t.bytes += len(l.Data)
		total.entries++
		total.bytes += len(l.Data)
	}
	names := make([]string, 0, len(byType))
	for name := range byType {
		names = append(names, name)
	}
	sort.Strings(names)
	var sb strings.Builder
	for _, name := range names {
		t := byType[name]
		fmt.Fprintf(&sb, "\n  %-40s %8.3f entries/job %8.0f B/job %8.0f B/entry",
			name, float64(t.entries)/float64(r.n), float64(t.bytes)/float64(r.n), float64(t.bytes)/float64(t.entries))
	}
	// Not for the one-job probe run: the testing package keeps only the
	// first lines of a benchmark's log.
	if r.n > 1 {
		b.Logf("%d jobs, Raft entries by type:%s", r.n, sb.String())
	}
	b.ReportMetric(float64(total.entries)/float64(r.n), "entries/job")
	b.ReportMetric(float64(total.bytes)/float64(r.n), "raftB/job")
}

// replay applies the run's entries to a second FSM, as a follower does,
// batch entries per ApplyBatch call (one by one through Apply when batch
// is 1), with the timer running only over the run's entries, and reports
// the state store's heap per job after GC; then the size of a snapshot of
// that state and the heap of a store restored from it, per job.
func (r *jobCostRun) replay(b *testing.B, batch int) {
	f, err := fsm.New(fsm.Config{StateConfig: state.Config{Publisher: stream.NewEventBroker(stream.Config{})}})
	if err != nil {
		b.Fatal(err)
	}
	for _, l := range r.setup {
		if err, ok := f.Apply(l).(error); ok {
			b.Fatalf("setup entry %d: %v", l.Index, err)
		}
	}
	before := heapAfterGC()
	b.ReportAllocs()
	b.ResetTimer()
	b.StartTimer()
	if batch == 1 {
		for _, l := range r.entries {
			if err, ok := f.Apply(l).(error); ok {
				b.Fatalf("entry %d: %v", l.Index, err)
			}
		}
	} else {
		for logs := range slices.Chunk(r.entries, batch) {
			for i, resp := range f.ApplyBatch(logs) {
				if err, ok := resp.(error); ok {
					b.Fatalf("entry %d: %v", logs[i].Index, err)
				}
			}
		}
	}
	b.StopTimer()
	after := heapAfterGC()
	r.report(b)
	b.ReportMetric(float64(after-before)/float64(r.n), "stateB/job")

	// A restarted server holds the state restored from its last Raft
	// snapshot instead: its size, and the heap of the restored store.
	var snap bytes.Buffer
	if err := f.State().Snapshot().Persist(&snap); err != nil {
		b.Fatal(err)
	}
	runtime.KeepAlive(f)
	data := snap.Bytes()
	before = heapAfterGC()
	restored, err := state.Restore(bytes.NewReader(data), nil)
	if err != nil {
		b.Fatal(err)
	}
	after = heapAfterGC()
	runtime.KeepAlive(restored)
	runtime.KeepAlive(data)
	b.ReportMetric(float64(len(data))/float64(r.n), "snapB/job")
	b.ReportMetric(float64(after-before)/float64(r.n), "restoreB/job")
}

// heapAfterGC is the live heap once garbage is collected.
func heapAfterGC() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
