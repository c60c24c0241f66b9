package nodesim

import (
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

func TestConfigValidate(t *testing.T) {
	cfg := DefaultConfig()
	must.NoError(t, cfg.validate())

	cfg.Nodes, cfg.CPUCores, cfg.Datacenters, cfg.SyncInterval, cfg.BatchRunTime, cfg.NamePrefix = 0, -1, []string{"dc1", ""}, 0, -time.Second, ""
	err := cfg.validate()
	for _, want := range []string{"nodes must be > 0, got 0", "cpu cores must be > 0, got -1", "datacenter 1 is empty",
		"sync interval must be > 0", "batch run time must be >= 0", "name prefix is required"} {
		must.ErrorContains(t, err, want)
	}
	_, err = New(cfg, nil)
	must.ErrorContains(t, err, "node simulator: ")
	_, err = New(DefaultConfig(), nil)
	must.ErrorContains(t, err, "at least one server is required")
	_, err = New(DefaultConfig(), []Server{{Name: "x"}})
	must.ErrorContains(t, err, `server 0 ("x") has no connection`)
}

func TestHeartbeatTimings(t *testing.T) {
	// The first heartbeat falls between a tenth of the TTL and the TTL;
	// later ones between 80% and 100% of it; no TTL means 10 s.
	for range 1000 {
		d := firstHeartbeat(100 * time.Second)
		must.Between(t, 10*time.Second, d, 100*time.Second)
		d = nextHeartbeat(100 * time.Second)
		must.Between(t, 80*time.Second, d, 100*time.Second)
		d = nextHeartbeat(0)
		must.Between(t, 8*time.Second, d, 10*time.Second)
	}
}

func TestBackoff(t *testing.T) {
	cases := []struct {
		failures int
		want     time.Duration
	}{{1, 250 * time.Millisecond}, {2, 500 * time.Millisecond}, {4, 2 * time.Second}, {6, 8 * time.Second}, {50, 8 * time.Second}}
	for _, c := range cases {
		must.Eq(t, c.want, backoff(c.failures), must.Sprint(c.failures))
	}
}

func TestNodeNames(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Nodes = 1000
	cfg.Racks = 3
	cfg.Datacenters = []string{"dc-1", "dc-2"}
	n := newSimNode(&cfg, 7, 3)
	node := n.build(&cfg, time.Now())
	must.Eq(t, "sim-007", node.Name)
	must.Eq(t, "dc-2", node.Datacenter)
	must.Eq(t, "r1", node.Meta["rack"])
	must.Eq(t, 1, n.server)
	must.Eq(t, "10.100.0.7", node.Attributes["unique.network.ip-address"])
	must.Eq(t, "initializing", node.Status)
	must.Eq(t, "default", node.NodePool)
	must.NotEq(t, "", node.ComputedClass)
}
