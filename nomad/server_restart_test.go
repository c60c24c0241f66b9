package nomad

import (
	"net"
	"net/rpc"
	"testing"
	"time"

	msgpackrpc "github.com/hashicorp/net-rpc-msgpackrpc/v2"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/state/statetest"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// populate writes a small cluster through the endpoints and Raft: nodes,
// jobs with evals, placed allocs (one reported running by its client), a
// stopped job and a deployment.
func populate(t *testing.T, s *Server) {
	t.Helper()
	nodes := []*structs.Node{mock.Node(), mock.Node()}
	for _, n := range nodes {
		registerNode(t, s, n)
	}
	for i := 0; i < 3; i++ {
		job := mock.Job()
		registerJob(t, s, job)
		alloc := placeAlloc(t, s, job, nodes[i%2], 0)
		if i == 0 {
			var reply structs.GenericResponse
			update := &structs.Allocation{ID: alloc.ID, ClientStatus: structs.AllocClientStatusRunning}
			must.NoError(t, s.RPC("Node.UpdateAlloc", &structs.AllocUpdateRequest{Alloc: []*structs.Allocation{update}}, &reply))
		}
	}
	stopped := mock.BatchJob()
	registerJob(t, s, stopped)
	var dereg structs.JobDeregisterResponse
	must.NoError(t, s.RPC("Job.Deregister", &structs.JobDeregisterRequest{JobID: stopped.ID}, &dereg))
}

func TestServer_RestartFromDataDirKeepsEverything(t *testing.T) {
	dir := t.TempDir()
	onDisk := func(c *Config) {
		c.DevMode = false
		c.DataDir = dir
	}
	s1 := newTestServer(t, onDisk)
	populate(t, s1)
	// Part of the state goes into a Raft snapshot, the rest stays in the
	// log: a restart needs both.
	must.NoError(t, s1.raft.Snapshot().Error())
	populate(t, s1)
	id := s1.ID()
	must.NoError(t, s1.Shutdown())

	s2 := newTestServer(t, onDisk)
	must.Eq(t, id, s2.ID())
	statetest.SameState(t, s1.State(), s2.State())
	jobs, err := s2.State().Jobs(nil, structs.AllNamespaces)
	must.NoError(t, err)
	must.Len(t, 8, jobs)
	allocs, err := s2.State().Allocs(nil, structs.AllNamespaces)
	must.NoError(t, err)
	must.Len(t, 6, allocs)

	// The restarted server keeps working.
	registerJob(t, s2, mock.Job())
}

func TestServer_RaftSnapshotRestoresIntoFreshServer(t *testing.T) {
	s1 := newTestServer(t, nil)
	populate(t, s1)
	future := s1.raft.Snapshot()
	must.NoError(t, future.Error())
	meta, rc, err := future.Open()
	must.NoError(t, err)
	defer rc.Close()

	s2 := newTestServer(t, nil)
	own := registerJob(t, s2, mock.Job()).EvalID
	old := s2.State()
	must.NoError(t, s2.raft.Restore(meta, rc, 10*time.Second))
	select {
	case <-old.AbandonCh():
	default:
		t.Fatal("the fresh server's old store must be abandoned")
	}
	statetest.SameState(t, s1.State(), s2.State())

	// The leader's broker now holds the restored pending evals, not its own.
	pending, err := s2.State().EvalsByStatus(nil, structs.EvalStatusPending)
	must.NoError(t, err)
	want := map[string]bool{}
	for _, e := range pending {
		want[e.ID] = true
	}
	delivered := 0
	for {
		var reply structs.EvalDequeueResponse
		must.NoError(t, s2.RPC("Eval.Dequeue", &structs.EvalDequeueRequest{
			Schedulers: []string{structs.JobTypeService, structs.JobTypeBatch}, Timeout: 100 * time.Millisecond,
			SchedulerVersion: structs.SchedulerVersion}, &reply))
		if reply.Eval == nil {
			break
		}
		delivered++
		must.NotEq(t, own, reply.Eval.ID)
		must.True(t, want[reply.Eval.ID], must.Sprintf("eval %s is not a restored pending eval", reply.Eval.ID))
		var ack structs.GenericResponse
		must.NoError(t, s2.RPC("Eval.Ack", &structs.EvalAckRequest{EvalID: reply.Eval.ID, Token: reply.Token}, &ack))
	}
	must.Positive(t, delivered)
}

func TestServer_ServesRPCOverAConnection(t *testing.T) {
	s := newTestServer(t, nil)
	srvConn, cliConn := net.Pipe()
	go s.ServeRPCConn(srvConn)
	client := rpc.NewClientWithCodec(msgpackrpc.NewCodecFromHandle(true, true, cliConn, structs.MsgpackHandle))
	// Closing the connection rather than the client: the codec's Close
	// races with the client's reading goroutine.
	defer cliConn.Close()

	must.NoError(t, client.Call("Status.Ping", struct{}{}, &struct{}{}))
	job := mock.Job()
	var reply structs.JobRegisterResponse
	must.NoError(t, client.Call("Job.Register", &structs.JobRegisterRequest{Job: job}, &reply))
	must.NotEq(t, "", reply.EvalID)
	var got structs.SingleJobResponse
	must.NoError(t, client.Call("Job.GetJob", &structs.JobSpecificRequest{JobID: job.ID}, &got))
	must.Eq(t, job.ID, got.Job.ID)

	// Errors cross as text.
	bad := mock.Job()
	bad.TaskGroups[0].Count = -1
	err := client.Call("Job.Register", &structs.JobRegisterRequest{Job: bad}, &reply)
	must.ErrorContains(t, err, "count")
}
