package client

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

// TestClient_ReportsHostNetworkStatus: an allocation in host networking
// reaches the servers with the node's address as its NetworkStatus, and
// keeps it through later updates of its status.
func TestClient_ReportsHostNetworkStatus(t *testing.T) {
	srv := testServer(t, nil)
	c := testClient(t, testClientConfig(t, local(srv)))
	eventually(t, "ready", func() bool { return nodeStatus(t, srv, c.NodeID()) == structs.NodeStatusReady })

	job := registerJob(t, srv, mockDriverJob(1, nil))
	alloc := place(t, srv, job, c.NodeID(), 1)[0]
	eventually(t, "alloc running on the server", clientStatusIs(t, srv, alloc.ID, structs.AllocClientStatusRunning))

	node := c.Node()
	got := serverAlloc(t, srv, alloc.ID).NetworkStatus
	must.NotNil(t, got)
	must.Eq(t, node.Attributes["unique.network.ip-address"], got.Address)
	must.NotEq(t, "", got.InterfaceName)
	must.Eq(t, got, c.Allocations()[0].NetworkStatus, must.Sprint("the client shows what it reported"))

	stop(t, srv, alloc.ID)
	eventually(t, "stopped alloc complete", clientStatusIs(t, srv, alloc.ID, structs.AllocClientStatusComplete))
	must.Eq(t, got, serverAlloc(t, srv, alloc.ID).NetworkStatus)
}
