package state

import (
	"os"
	"runtime"
	"strconv"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

// TestFootprint measures what the state store holds per job, per
// evaluation and per allocation: the live heap after a garbage collection,
// before and after writing n of each, divided by n. The job is the load
// generator's (one group of one task, canonicalized as a registration
// is), each write goes in its own transaction as the FSM applies them,
// and an allocation shares its stored job, as a placed one does. It is a
// measurement, not a check: it runs only when NOMAD_FOOTPRINT gives n.
//
//	NOMAD_FOOTPRINT=20000 go test -run TestFootprint -v ./nomad/state/
func TestFootprint(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("NOMAD_FOOTPRINT"))
	if n <= 0 {
		t.Skip("set NOMAD_FOOTPRINT to the number of objects to measure")
	}
	s := testStore(t)
	node := mockNode()
	must.NoError(t, s.UpsertNode(1, node))
	index := uint64(1)
	next := func() uint64 { index++; return index }

	jobs := make([]*structs.Job, n)
	measure(t, "job", n, func() {
		for i := range jobs {
			j := mockJob()
			j.TaskGroups[0].Count = 1
			j.TaskGroups[0].Tasks[0].Driver = "mock_driver"
			j.TaskGroups[0].Tasks[0].Config = map[string]interface{}{}
			j.Canonicalize()
			// The FSM shares a decoded job's parts before storing it.
			must.NoError(t, s.WithWriteTxn(next(), func(tx *Txn) error {
				tx.InternJobParts(j)
				return tx.UpsertJob(j)
			}))
			jobs[i], _ = s.JobByID(nil, j.Namespace, j.ID)
		}
	})
	measure(t, "evaluation", n, func() {
		for _, j := range jobs {
			must.NoError(t, s.UpsertEvals(next(), []*structs.Evaluation{mockEval(j)}))
		}
	})
	measure(t, "allocation", n, func() {
		for _, j := range jobs {
			must.NoError(t, s.UpsertAllocs(next(), []*structs.Allocation{mockAlloc(j, node)}))
		}
	})
	runtime.KeepAlive(s)
}

// measure logs the live heap fn adds, per object of n.
func measure(t *testing.T, what string, n int, fn func()) {
	before := liveHeap()
	fn()
	after := liveHeap()
	t.Logf("%-10s %7.0f bytes each (%d: %.1f MB)", what, float64(after-before)/float64(n), n, float64(after-before)/(1<<20))
}

func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}
