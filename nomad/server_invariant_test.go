package nomad

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/go-memdb"
	"github.com/hashicorp/go-metrics"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/broker"
	"github.com/opennomad/nomad/nomad/metricstest"
	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// The scheduling invariants through the real server: eight workers
// running the builtin service scheduler race over a few hundred jobs
// registered at once, against one plan applier committing through Raft.
// Afterwards no node is overcommitted, every eval is terminal or blocked,
// and every job has exactly its count running (clients report the allocs
// running through Node.UpdateAlloc). The sizes are those of
// TestSchedulingInvariants, which runs the same workload on in-memory
// twins of Raft and the endpoints.
func TestServerInvariants(t *testing.T) {
	sink := metricstest.WithInmem(t)
	s := newPipelineServer(t, invariantWorkers, nil)
	startFakeClients(t, s, false)
	for range invariantNodes {
		registerNode(t, s, mock.Node())
	}

	jobs := make([]*structs.Job, invariantJobs)
	for i := range jobs {
		jobs[i] = mock.Job(mock.Count(invariantCount), mock.TaskResources(invariantTaskCPU, 256))
	}
	const registrars = 16
	var wg sync.WaitGroup
	errs := make(chan error, len(jobs))
	for r := range registrars {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := r; i < len(jobs); i += registrars {
				var reply structs.JobRegisterResponse
				if err := s.RPC("Job.Register", &structs.JobRegisterRequest{Job: jobs[i].Copy()}, &reply); err != nil {
					errs <- fmt.Errorf("job %s: %w", jobs[i].ID, err)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	waitForState(t, s, func(ws memdb.WatchSet, store *state.StateStore) (bool, string) {
		evals, err := store.Evals(ws, structs.AllNamespaces)
		must.NoError(t, err)
		open := 0
		for _, e := range evals {
			if !e.TerminalStatus() && e.Status != structs.EvalStatusBlocked {
				open++
			}
		}
		allocs, err := store.Allocs(ws, structs.AllNamespaces)
		must.NoError(t, err)
		running := 0
		for _, a := range allocs {
			if !a.TerminalStatus() && a.ClientStatus == structs.AllocClientStatusRunning {
				running++
			}
		}
		want := invariantJobs * invariantCount
		return open == 0 && running == want, fmt.Sprintf("%d open evals, %d of %d allocs running", open, running, want)
	})

	assertServerNoOvercommit(t, s)
	store := s.State()
	for _, j := range jobs {
		live := liveAllocs(t, nil, store, j)
		must.Len(t, invariantCount, live, must.Sprintf("job %s", j.ID))
		for _, a := range live {
			must.Eq(t, structs.AllocClientStatusRunning, a.ClientStatus)
		}
	}
	evals, err := store.Evals(nil, structs.AllNamespaces)
	must.NoError(t, err)
	for _, e := range evals {
		must.True(t, e.TerminalStatus() || e.Status == structs.EvalStatusBlocked,
			must.Sprintf("eval %s is %s", e.ID, e.Status))
	}
	st := s.evalBroker.(*broker.Broker).Stats()
	must.Eq(t, 0, st.TotalReady+st.TotalUnacked+st.TotalPending+st.TotalWaiting, must.Sprintf("broker not idle: %+v", st))
	plans, _ := metricstest.Sample(t, sink, "nomad.nomad.plan.evaluate")
	must.Positive(t, plans)
	t.Logf("%d jobs, %d evals, %d plans judged, %d node rejections", len(jobs), len(evals), plans,
		inmemCounter(sink, "nomad.nomad.plan.node_rejected"))
}

// inmemCounter sums the counter whose flattened name is name, over its
// labels.
func inmemCounter(sink *metrics.InmemSink, name string) int {
	n := 0
	for _, iv := range sink.Data() {
		iv.RLock()
		for k, c := range iv.Counters {
			if k == name || strings.HasPrefix(k, name+";") {
				n += c.Count
			}
		}
		iv.RUnlock()
	}
	return n
}
