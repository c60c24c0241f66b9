package state

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

// benchCluster is a store with nodes and one registered job.
func benchCluster(b *testing.B, numNodes int) (*StateStore, []*structs.Node, *structs.Job) {
	b.Helper()
	s := testStore(b)
	nodes := make([]*structs.Node, numNodes)
	must.NoError(b, s.WithWriteTxn(1, func(tx *Txn) error {
		for i := range nodes {
			n := mockNode()
			n.Name = fmt.Sprintf("node-%d", i)
			nodes[i] = n
			if err := tx.UpsertNode(n); err != nil {
				return err
			}
		}
		return nil
	}))
	job := registered(b, s, 2, mockJob())
	return s, nodes, job
}

func benchAllocs(job *structs.Job, nodes []*structs.Node, n int) []*structs.Allocation {
	out := make([]*structs.Allocation, n)
	for i := range out {
		out[i] = mockAlloc(job, nodes[i%len(nodes)])
	}
	return out
}

// BenchmarkUpsertAllocs10kOneTxn writes 10,000 new allocations in one
// transaction, as one large plan result would.
func BenchmarkUpsertAllocs10kOneTxn(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		s, nodes, job := benchCluster(b, 500)
		allocs := benchAllocs(job, nodes, 10_000)
		b.StartTimer()
		must.NoError(b, s.UpsertAllocs(3, allocs))
	}
}

// BenchmarkSnapshot takes a snapshot of a store holding 10,000 allocs.
func BenchmarkSnapshot(b *testing.B) {
	s, nodes, job := benchCluster(b, 500)
	must.NoError(b, s.UpsertAllocs(3, benchAllocs(job, nodes, 10_000)))
	b.ReportAllocs()
	for b.Loop() {
		_ = s.Snapshot()
	}
}

// benchNodeAllocs is 5,000 nodes with 20 allocs each.
func benchNodeAllocs(b *testing.B) (*StateStore, []*structs.Node) {
	s, nodes, job := benchCluster(b, 5_000)
	must.NoError(b, s.UpsertAllocs(3, benchAllocs(job, nodes, 100_000)))
	return s, nodes
}

// BenchmarkAllocsByNode reads the allocs of one node among 5,000 nodes
// with 20 allocs each.
func BenchmarkAllocsByNode(b *testing.B) {
	s, nodes := benchNodeAllocs(b)
	snap := s.Snapshot()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		allocs, err := snap.AllocsByNode(nil, nodes[i%len(nodes)].ID)
		if err != nil || len(allocs) != 20 {
			b.Fatalf("got %d allocs, %v", len(allocs), err)
		}
		i++
	}
}

// BenchmarkAllocsByNodeTerminal reads the live allocs of one node, what
// the plan applier and the scheduler's fit checks ask for.
func BenchmarkAllocsByNodeTerminal(b *testing.B) {
	s, nodes := benchNodeAllocs(b)
	snap := s.Snapshot()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		allocs, err := snap.AllocsByNodeTerminal(nil, nodes[i%len(nodes)].ID, false)
		if err != nil || len(allocs) != 20 {
			b.Fatalf("got %d allocs, %v", len(allocs), err)
		}
		i++
	}
}

// BenchmarkSchedulerNodes lists 10,000 nodes through the scheduler view,
// once per evaluation on the scheduler's hot path.
func BenchmarkSchedulerNodes(b *testing.B) {
	s, _, _ := benchCluster(b, 10_000)
	view := s.Snapshot().SchedulerView()
	b.ReportAllocs()
	for b.Loop() {
		nodes, err := view.Nodes()
		if err != nil || len(nodes) != 10_000 {
			b.Fatalf("got %d nodes, %v", len(nodes), err)
		}
	}
}

// BenchmarkSchedulerNodesCold is BenchmarkSchedulerNodes right after the
// node table changed, when the listing must walk the tree.
func BenchmarkSchedulerNodesCold(b *testing.B) {
	s, _, _ := benchCluster(b, 10_000)
	view := s.Snapshot().SchedulerView()
	b.ReportAllocs()
	for b.Loop() {
		s.nodeList.Store(nil)
		nodes, err := view.Nodes()
		if err != nil || len(nodes) != 10_000 {
			b.Fatalf("got %d nodes, %v", len(nodes), err)
		}
	}
}

// BenchmarkUpsertPlanResults100 applies plan results that each place 100
// allocs and stop 10, on a cluster of 1,000 nodes, as the FSM does for
// every plan the applier commits.
func BenchmarkUpsertPlanResults100(b *testing.B) {
	s, nodes, job := benchCluster(b, 1_000)
	ev := mockEval(job)
	must.NoError(b, s.UpsertEvals(3, []*structs.Evaluation{ev}))
	index := uint64(4)
	var previous []*structs.Allocation
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		placed := benchAllocs(job, nodes, 100)
		req := &structs.ApplyPlanResultsRequest{
			AllocUpdateRequest: structs.AllocUpdateRequest{Job: job},
			EvalID:             ev.ID,
		}
		for _, a := range placed {
			a.Job = nil
			a.EvalID = ev.ID
			req.AllocsUpdated = append(req.AllocsUpdated, a)
		}
		for _, a := range previous[:min(10, len(previous))] {
			req.AllocsStopped = append(req.AllocsStopped, &structs.AllocStop{
				ID: a.ID, DesiredDescription: structs.AllocNotNeeded})
		}
		previous = placed
		index++
		b.StartTimer()
		if err := s.UpsertPlanResults(index, req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUpdateAllocsFromClient applies one client status update in a
// store of 10,000 allocs.
func BenchmarkUpdateAllocsFromClient(b *testing.B) {
	s, nodes, job := benchCluster(b, 500)
	allocs := benchAllocs(job, nodes, 10_000)
	must.NoError(b, s.UpsertAllocs(3, allocs))
	index := uint64(4)
	statuses := []string{structs.AllocClientStatusRunning, structs.AllocClientStatusPending}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		a := allocs[i%len(allocs)]
		upd := &structs.Allocation{ID: a.ID, ClientStatus: statuses[(i/len(allocs))%2]}
		if err := s.UpdateAllocsFromClient(index, []*structs.Allocation{upd}); err != nil {
			b.Fatal(err)
		}
		index++
		i++
	}
}

// BenchmarkPersist writes a Raft snapshot of a store with 10,000 allocs.
func BenchmarkPersist(b *testing.B) {
	s, nodes, job := benchCluster(b, 500)
	must.NoError(b, s.UpsertAllocs(3, benchAllocs(job, nodes, 10_000)))
	snap := s.Snapshot()
	var buf bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		must.NoError(b, snap.Persist(&buf))
	}
	b.ReportMetric(float64(buf.Len()), "bytes/snapshot")
}

// BenchmarkRestore rebuilds a store with 10,000 allocs from a snapshot.
func BenchmarkRestore(b *testing.B) {
	s, nodes, job := benchCluster(b, 500)
	must.NoError(b, s.UpsertAllocs(3, benchAllocs(job, nodes, 10_000)))
	var buf bytes.Buffer
	must.NoError(b, s.Snapshot().Persist(&buf))
	data := buf.Bytes()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Restore(bytes.NewReader(data), nil); err != nil {
			b.Fatal(err)
		}
	}
}
