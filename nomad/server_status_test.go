package nomad

import (
	"fmt"
	"net"
	"net/rpc"
	"testing"
	"time"

	msgpackrpc "github.com/hashicorp/net-rpc-msgpackrpc/v2"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/worker"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// Who leads and who the servers are, as agents and the CLI ask.
func TestStatusEndpoint_ReportsAdvertisedAddresses(t *testing.T) {
	s := newTestServer(t, func(c *Config) {
		c.NodeName = "alpha"
		c.RPCAdvertise = "127.0.0.1:4647"
		c.SerfAdvertise = "127.0.0.1:4648"
	})
	var leader string
	must.NoError(t, s.RPC("Status.Leader", &structs.GenericRequest{}, &leader))
	must.Eq(t, "127.0.0.1:4647", leader)
	var peers []string
	must.NoError(t, s.RPC("Status.Peers", &structs.GenericRequest{}, &peers))
	must.Eq(t, []string{"127.0.0.1:4647"}, peers)

	var members structs.ServerMembersResponse
	must.NoError(t, s.RPC("Status.Members", &structs.GenericRequest{}, &members))
	must.Eq(t, "alpha", members.ServerName)
	must.Len(t, 1, members.Members)
	m := members.Members[0]
	must.Eq(t, "alpha.global", m.Name)
	must.Eq(t, "127.0.0.1", m.Addr)
	must.Eq(t, uint16(4648), m.Port)
	must.Eq(t, "alive", m.Status)
	must.Eq(t, "127.0.0.1", m.Tags["rpc_addr"])
	must.Eq(t, "4647", m.Tags["port"])
	must.Eq(t, s.ID(), m.Tags["id"])
	must.Eq(t, "1", m.Tags["bootstrap"])

	var raftCfg structs.RaftConfigurationResponse
	must.NoError(t, s.RPC("Operator.RaftGetConfiguration", &structs.GenericRequest{}, &raftCfg))
	must.Len(t, 1, raftCfg.Servers)
	must.Eq(t, structs.RaftServer{ID: s.ID(), Node: "alpha.global", Address: "127.0.0.1:4647",
		Leader: true, Voter: true, RaftProtocol: "3"}, *raftCfg.Servers[0])

	var regions []string
	must.NoError(t, s.RPC("Region.List", &structs.GenericRequest{}, &regions))
	must.Eq(t, []string{"global"}, regions)

	err := s.RPC("Status.Leader", &structs.GenericRequest{QueryOptions: structs.QueryOptions{Region: "mars"}}, &leader)
	must.ErrorIs(t, err, ErrNoRegionPath)
}

// Followers report the leader by the RPC address the membership layer
// gave them.
func TestStatusEndpoint_PeersByRPCAddress(t *testing.T) {
	servers := newTestCluster(t, 3)
	addrs := map[string]string{}
	for i, s := range servers {
		addrs[s.ID()] = fmt.Sprintf("10.0.0.1:%d647", i+1)
	}
	for _, s := range servers {
		for id, addr := range addrs {
			s.SetPeer(id, addr, "node-"+id[:4]+".global")
		}
	}
	leader := leaderOf(t, servers)
	for _, s := range servers {
		var got string
		waitFor(t, func() bool {
			must.NoError(t, s.RPC("Status.Leader", &structs.GenericRequest{}, &got))
			return got != ""
		})
		must.Eq(t, addrs[leader.ID()], got)
		// A follower learns the configuration from the leader's log.
		var peers []string
		waitFor(t, func() bool {
			must.NoError(t, s.RPC("Status.Peers", &structs.GenericRequest{}, &peers))
			return len(peers) == 3
		})
		must.SliceContainsAll(t, []string{"10.0.0.1:1647", "10.0.0.1:2647", "10.0.0.1:3647"}, peers)
	}
}

// Errors keep their HTTP status across a connection, as text.
func TestServer_CodedErrorsCrossTheNetwork(t *testing.T) {
	s := newTestServer(t, nil)
	srvConn, cliConn := net.Pipe()
	go s.ServeRPCConn(srvConn)
	client := rpc.NewClientWithCodec(msgpackrpc.NewCodecFromHandle(true, true, cliConn, structs.MsgpackHandle))
	defer cliConn.Close()

	bad := mock.Job()
	bad.TaskGroups[0].Count = -1
	var reply structs.JobRegisterResponse
	err := client.Call("Job.Register", &structs.JobRegisterRequest{Job: bad}, &reply)
	code, msg, ok := structs.ErrorCode(err)
	must.True(t, ok, must.Sprintf("%v", err))
	must.Eq(t, 400, code)
	must.StrContains(t, msg, "count")

	err = client.Call("Job.Evaluate", &structs.JobEvaluateRequest{JobID: "nope"}, &reply)
	code, _, _ = structs.ErrorCode(err)
	must.Eq(t, 404, code)

	err = client.Call("Nope.Nothing", &structs.GenericRequest{}, &reply)
	must.ErrorContains(t, err, "unknown RPC method")
	// The connection still serves after an unknown method.
	var leader string
	must.NoError(t, client.Call("Status.Leader", &structs.GenericRequest{}, &leader))
}

// While the scheduler configuration pauses the broker, a dequeue waits
// for the resume instead of answering at once; it takes the eval that
// was waiting as soon as the broker is back.
func TestEvalEndpoint_DequeueWaitsOutAPausedBroker(t *testing.T) {
	s := newTestServer(t, nil)
	setPause := func(pause bool) {
		t.Helper()
		var get structs.SchedulerConfigurationResponse
		must.NoError(t, s.RPC("Operator.SchedulerGetConfiguration", &structs.GenericRequest{}, &get))
		cfg := *get.SchedulerConfig
		cfg.PauseEvalBroker = pause
		var set structs.SchedulerSetConfigurationResponse
		must.NoError(t, s.RPC("Operator.SchedulerSetConfiguration", &structs.SchedulerSetConfigRequest{Config: cfg}, &set))
	}
	setPause(true)
	job := mock.Job()
	registerJob(t, s, job)

	// Timed out while paused: an empty answer, no error, after the wait.
	start := time.Now()
	var empty structs.EvalDequeueResponse
	must.NoError(t, s.RPC("Eval.Dequeue", &structs.EvalDequeueRequest{
		Schedulers: []string{structs.JobTypeService}, Timeout: 50 * time.Millisecond, SchedulerVersion: structs.SchedulerVersion,
	}, &empty))
	must.Nil(t, empty.Eval)
	must.GreaterEq(t, 50*time.Millisecond, time.Since(start))

	got := make(chan *structs.EvalDequeueResponse, 1)
	errs := make(chan error, 1)
	go func() {
		var reply structs.EvalDequeueResponse
		err := s.RPC("Eval.Dequeue", &structs.EvalDequeueRequest{
			Schedulers: []string{structs.JobTypeService}, Timeout: time.Minute, SchedulerVersion: structs.SchedulerVersion,
		}, &reply)
		errs <- err
		got <- &reply
	}()
	select {
	case err := <-errs:
		t.Fatalf("dequeue returned while paused: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	setPause(false)
	select {
	case err := <-errs:
		must.NoError(t, err)
		reply := <-got
		must.NotNil(t, reply.Eval)
		must.Eq(t, job.ID, reply.Eval.JobID)
	case <-time.After(10 * time.Second):
		t.Fatal("dequeue did not take the eval after the resume")
	}
}

// The server runs its workers from the start and stops them on
// shutdown; while leading it pauses its share of them.
func TestServer_WorkerPoolFollowsLeadership(t *testing.T) {
	s := newTestServer(t, func(c *Config) {
		c.NumSchedulers = 4
		c.LeaderPausedFraction = 0.75
	})
	waitFor(t, func() bool {
		paused := 0
		for _, w := range s.Workers().Workers() {
			if w.Status == worker.Paused.String() {
				paused++
			}
		}
		return paused == 3
	})
	num, enabled := s.Workers().SchedulerConfig()
	must.Eq(t, 4, num)
	must.Eq(t, worker.AllSchedulers(), enabled)
	// The one working worker schedules.
	registerNode(t, s, mock.Node())
	job := mock.Job(mock.Count(1))
	registerJob(t, s, job)
	waitForLive(t, s, job, 1)

	must.NoError(t, s.Shutdown())
	for _, w := range s.Workers().Workers() {
		t.Fatalf("worker %s still listed after shutdown", w.ID)
	}
}
