package client

import (
	"os"
	"slices"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/client/driver/executor"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

func TestMain(m *testing.M) {
	// Tasks of raw_exec and exec run under a supervisor that is this
	// test binary.
	executor.Init()
	os.Exit(m.Run())
}

func TestClient_RunsStopsAndForgetsAllocs(t *testing.T) {
	srv := testServer(t, nil)
	w := &twin{inner: srv}
	c := testClient(t, testClientConfig(t, local(w)))
	eventually(t, "ready", func() bool { return nodeStatus(t, srv, c.NodeID()) == structs.NodeStatusReady })

	job := registerJob(t, srv, mockDriverJob(2, nil))
	allocs := place(t, srv, job, c.NodeID(), 2)
	a, b := allocs[0], allocs[1]

	for _, x := range allocs {
		eventually(t, "alloc running on the server", clientStatusIs(t, srv, x.ID, structs.AllocClientStatusRunning))
		st := serverAlloc(t, srv, x.ID).TaskStates["web"]
		must.NotNil(t, st)
		must.Eq(t, structs.TaskStateRunning, st.State)
		types := []string{}
		for _, e := range st.Events {
			types = append(types, e.Type)
		}
		must.Eq(t, []string{structs.TaskReceived, structs.TaskSetup, structs.TaskStarted}, types)
	}
	fetched := w.callsOf("Alloc.GetAllocs")
	must.SliceNotEmpty(t, fetched)
	first := fetched[0].args.(*structs.AllocsGetRequest)
	must.Eq(t, sortedIDs(a.ID, b.ID), first.AllocIDs)

	// The first query reads the leader's state; later ones accept stale
	// answers and block on the index.
	watches := w.callsOf("Node.GetClientAllocs")
	q0 := watches[0].args.(*structs.NodeSpecificRequest)
	must.False(t, q0.AllowStale)
	must.Eq(t, 0, q0.MinQueryIndex)
	q1 := watches[1].args.(*structs.NodeSpecificRequest)
	must.True(t, q1.AllowStale)
	must.Positive(t, q1.MinQueryIndex)

	// The servers stop a: only a is fetched again, and it completes.
	stop(t, srv, a.ID)
	eventually(t, "stopped alloc complete", clientStatusIs(t, srv, a.ID, structs.AllocClientStatusComplete))
	last := w.callsOf("Alloc.GetAllocs")
	must.Eq(t, []string{a.ID}, last[len(last)-1].args.(*structs.AllocsGetRequest).AllocIDs)
	must.Eq(t, structs.AllocClientStatusRunning, serverAlloc(t, srv, b.ID).ClientStatus)
	states := serverAlloc(t, srv, a.ID).TaskStates["web"]
	must.Eq(t, structs.TaskStateDead, states.State)
	must.False(t, states.Failed)

	// The servers collect a: the client destroys its directory. A
	// deletion alone does not raise the index of the node's remaining
	// allocs, so the client hears of it with the node's next change.
	dir := c.allocs.Runner(a.ID).AllocDir().Dir
	var resp structs.GenericResponse
	must.NoError(t, srv.RPC("Eval.Reap", &structs.EvalDeleteRequest{Allocs: []string{a.ID}}, &resp))
	place(t, srv, job, c.NodeID(), 1)
	eventually(t, "runner removed", func() bool { return c.allocs.Runner(a.ID) == nil })
	eventually(t, "alloc dir removed", func() bool {
		_, err := os.Stat(dir)
		return os.IsNotExist(err)
	})
	must.NotNil(t, c.allocs.Runner(b.ID))
}

func TestClient_FailedAllocIsReported(t *testing.T) {
	srv := testServer(t, nil)
	c := testClient(t, testClientConfig(t, local(srv)))
	eventually(t, "ready", func() bool { return nodeStatus(t, srv, c.NodeID()) == structs.NodeStatusReady })

	job := asBatch(mockDriverJob(1, map[string]interface{}{"run_for": "10ms", "exit_code": 3}))
	job.TaskGroups[0].RestartPolicy = &structs.RestartPolicy{Attempts: 1, Interval: 10 * 60e9, Delay: 10e6, Mode: structs.RestartPolicyModeFail}
	job = registerJob(t, srv, job)
	a := place(t, srv, job, c.NodeID(), 1)[0]

	eventually(t, "alloc failed on the server", clientStatusIs(t, srv, a.ID, structs.AllocClientStatusFailed))
	st := serverAlloc(t, srv, a.ID).TaskStates["web"]
	must.True(t, st.Failed)
	must.Eq(t, uint64(1), st.Restarts)
	must.Eq(t, structs.TaskNotRestarting, st.Events[len(st.Events)-1].Type)
}

func TestClient_TerminalAllocsAreNotRun(t *testing.T) {
	srv := testServer(t, nil)
	c := testClient(t, testClientConfig(t, local(srv)))
	eventually(t, "ready", func() bool { return nodeStatus(t, srv, c.NodeID()) == structs.NodeStatusReady })
	job := registerJob(t, srv, mockDriverJob(2, nil))
	stopped := place(t, srv, job, c.NodeID(), 1, mock.DesiredStatus(structs.AllocDesiredStatusStop))[0]
	running := place(t, srv, job, c.NodeID(), 1)[0]

	eventually(t, "the live alloc runs", clientStatusIs(t, srv, running.ID, structs.AllocClientStatusRunning))
	must.Nil(t, c.allocs.Runner(stopped.ID))
	must.Eq(t, structs.AllocClientStatusPending, serverAlloc(t, srv, stopped.ID).ClientStatus)
}

func sortedIDs(ids ...string) []string {
	out := slices.Clone(ids)
	slices.Sort(out)
	return out
}
