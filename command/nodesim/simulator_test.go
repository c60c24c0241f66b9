package nodesim

import (
	"context"
	"testing"
	"time"

	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"

	"github.com/opennomad/nomad/nomad"
	"github.com/opennomad/nomad/nomad/servertest"
	"github.com/opennomad/nomad/structs"
)

// testServer starts an in-memory single server that leads, with
// heartbeat TTLs short enough to see heartbeats in a test.
func testServer(t *testing.T) *nomad.Server {
	t.Helper()
	cfg := servertest.Config("nodesim-test")
	cfg.MinHeartbeatTTL = 500 * time.Millisecond
	cfg.HeartbeatGrace = 5 * time.Second
	return servertest.Start(t, cfg)
}

// startSim runs a simulator of n nodes against srv until the test ends.
func startSim(t *testing.T, srv *nomad.Server, cb func(*Config)) *Simulator {
	t.Helper()
	cfg := DefaultConfig()
	if cb != nil {
		cb(&cfg)
	}
	sim, err := New(cfg, []Server{{Name: "local", Conn: srv}})
	must.NoError(t, err)
	sim.Start()
	t.Cleanup(sim.Stop)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	must.NoError(t, sim.WaitRegistered(ctx))
	return sim
}

func TestSimulator_RegistersReadyNodesThatHeartbeat(t *testing.T) {
	srv := testServer(t)
	sim := startSim(t, srv, func(c *Config) {
		c.Nodes = 40
		c.Datacenters = []string{"dc-1", "dc-2"}
		c.Racks = 4
	})

	nodes, err := srv.State().Nodes(nil)
	must.NoError(t, err)
	must.Len(t, 40, nodes)
	ids := map[string]bool{}
	names := map[string]bool{}
	ips := map[string]bool{}
	for _, n := range nodes {
		must.Eq(t, structs.NodeStatusReady, n.Status, must.Sprint(n.Name))
		must.True(t, n.Ready())
		ids[n.ID], names[n.Name] = true, true
		ips[n.Attributes["unique.network.ip-address"]] = true
		must.Eq(t, "linux", n.Attributes["kernel.name"])
		must.True(t, n.HasDriver("mock_driver"))
		must.True(t, n.HasDriver("raw_exec"))
		must.Eq(t, int64(14000), n.NodeResources.Cpu.CpuShares)
		must.Eq(t, int64(32000), n.NodeResources.Memory.MemoryMB)
		must.Eq(t, int64(100*1024), n.NodeResources.Disk.DiskMB)
		must.Eq(t, int64(100), n.ReservedResources.Cpu.CpuShares)
	}
	must.MapLen(t, 40, ids)
	must.MapLen(t, 40, names)
	must.MapLen(t, 40, ips)
	must.SliceContainsAll(t, sim.NodeIDs(), keys(ids))

	// With a 500ms minimum TTL every node heartbeats again within a
	// second or so of registering.
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		return sim.Stats().Heartbeats >= 2*40
	}), wait.Timeout(10*time.Second), wait.Gap(50*time.Millisecond)))
	st := sim.Stats()
	must.Eq(t, int64(0), st.HeartbeatErrors)
	must.Eq(t, int64(40), st.Ready)
}

func TestSimulator_ForgottenNodeRegistersAgain(t *testing.T) {
	srv := testServer(t)
	sim := startSim(t, srv, func(c *Config) { c.Nodes = 3 })
	id := sim.NodeIDs()[1]

	var resp structs.NodeUpdateResponse
	must.NoError(t, srv.RPC("Node.Deregister", &structs.NodeDeregisterRequest{NodeIDs: []string{id}}, &resp))

	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		n, err := srv.State().NodeByID(nil, id)
		return err == nil && n != nil && n.Status == structs.NodeStatusReady
	}), wait.Timeout(10*time.Second), wait.Gap(50*time.Millisecond)))
	must.Positive(t, sim.Stats().Reregistrations)
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
