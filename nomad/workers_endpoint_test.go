package nomad

import (
	"fmt"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

// Workers.Info and Workers.SetPaused answer for the server the request
// names, whichever server it reaches: one server reads and pauses
// another's workers, one by one or all together.
func TestWorkersEndpoint_AnyServer(t *testing.T) {
	n := 0
	servers := newInmemCluster(t, 3, func(c *Config) {
		n++
		c.NodeName = fmt.Sprintf("server%d", n)
		c.NumSchedulers = 2
	}).servers
	asked, target := servers[0], servers[2]

	info := func(serverID string) *structs.SchedulerWorkersResponse {
		t.Helper()
		var out structs.SchedulerWorkersResponse
		must.NoError(t, asked.RPC("Workers.Info", &structs.SchedulerWorkersRequest{ServerID: serverID}, &out))
		return &out
	}
	own := info("")
	must.Eq(t, asked.memberName(), own.ServerID)
	other := info(target.memberName())
	must.Eq(t, target.memberName(), other.ServerID)
	must.Eq(t, len(target.Workers().Workers()), len(other.Workers))
	must.Eq(t, target.Workers().Workers()[0].ID, other.Workers[0].ID)
	// The node name alone names it too.
	must.Eq(t, target.memberName(), info(target.config.NodeName).ServerID)

	// Pause one of the target's workers from the server asked.
	id := other.Workers[0].ID
	var out structs.SchedulerWorkersResponse
	must.NoError(t, asked.RPC("Workers.SetPaused", &structs.SchedulerWorkerPauseRequest{ServerID: target.memberName(), WorkerID: id, Paused: true}, &out))
	must.True(t, target.Workers().WorkerPaused(id))
	must.True(t, out.Workers[0].OperatorPaused)
	must.False(t, asked.Workers().Paused())

	// Resume all of them.
	must.NoError(t, asked.RPC("Workers.SetPaused", &structs.SchedulerWorkerPauseRequest{ServerID: target.memberName(), Paused: false}, &out))
	must.False(t, target.Workers().WorkerPaused(id))
	must.False(t, out.Paused)

	cases := []struct {
		name string
		req  *structs.SchedulerWorkerPauseRequest
	}{
		{"an unknown server", &structs.SchedulerWorkerPauseRequest{ServerID: "nowhere.global", Paused: true}},
		{"an unknown worker", &structs.SchedulerWorkerPauseRequest{ServerID: target.memberName(), WorkerID: structs.GenerateUUID(), Paused: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := asked.RPC("Workers.SetPaused", c.req, &out)
			must.True(t, structs.IsKind(err, structs.ErrNotFound), must.Sprint(err))
		})
	}
}

// The Workers endpoint asks the agent ACL: read to look, write to pause.
func TestWorkersEndpoint_ACL(t *testing.T) {
	s, boot := newBootstrappedACLServer(t, nil)
	reader := aclTestToken(t, s, boot.SecretID, "agent-read", `agent { policy = "read" }`, 0)
	writer := aclTestToken(t, s, boot.SecretID, "agent-write", `agent { policy = "write" }`, 0)
	var out structs.SchedulerWorkersResponse
	pause := func(secret string) error {
		return s.RPC("Workers.SetPaused", &structs.SchedulerWorkerPauseRequest{Paused: false,
			WriteRequest: structs.WriteRequest{AuthToken: secret}}, &out)
	}
	read := func(secret string) error {
		return s.RPC("Workers.Info", &structs.SchedulerWorkersRequest{QueryOptions: structs.QueryOptions{AuthToken: secret}}, &out)
	}
	must.NoError(t, read(reader))
	must.True(t, structs.IsKind(read(""), structs.ErrPermissionDenied))
	must.True(t, structs.IsKind(pause(reader), structs.ErrPermissionDenied))
	must.NoError(t, pause(writer))
}
