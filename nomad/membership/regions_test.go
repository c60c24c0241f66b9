package membership

import (
	"slices"
	"testing"

	"github.com/shoenig/test/must"
)

// Two regions in one gossip pool: each bootstraps and reconciles its own
// Raft from its own servers only, while both see every region and the
// servers of the other.
func TestRegions_OnePoolTwoRafts(t *testing.T) {
	c := newTestCluster(t)
	europe := func(cfg *Config) { cfg.Region = "europe" }
	a1 := c.start("a1", 2, nil)
	b1 := c.start("b1", 2, europe)
	// One server of each region, both expecting 2: the other region's
	// server must not count, so nobody bootstraps yet.
	_, err := a1.m.Join([]string{b1.serfAddr()})
	must.NoError(t, err)
	waitFor(t, func() bool { return len(a1.m.Members()) == 2 && len(b1.m.Members()) == 2 })
	must.Eq(t, []string{"europe", "global"}, a1.m.Regions())
	must.Eq(t, []string{"europe", "global"}, b1.m.Regions())
	must.Eq(t, 0, a1.counting.bootstraps.Load()+b1.counting.bootstraps.Load())

	a2 := c.start("a2", 2, nil)
	b2 := c.start("b2", 2, europe)
	_, err = a2.m.Join([]string{a1.serfAddr()})
	must.NoError(t, err)
	_, err = b2.m.Join([]string{a1.serfAddr()})
	must.NoError(t, err)

	for _, pair := range [][2]*testNode{{a1, a2}, {b1, b2}} {
		want := []string{"id-" + pair[0].name, "id-" + pair[1].name}
		waitFor(t, func() bool {
			got := voters(t, pair[0].raft)
			slices.Sort(got)
			return slices.Equal(got, want)
		})
	}
	// Each region's servers are its own; the others are reachable by
	// region.
	waitFor(t, func() bool { return len(a1.m.Servers()) == 2 })
	must.Len(t, 2, a1.m.KnownServers())
	waitFor(t, func() bool { return len(a1.m.RegionServers("europe")) == 2 })
	europeans := a1.m.RegionServers("europe")
	must.Eq(t, "b1.europe", europeans[0].Name)
	must.Eq(t, b1.addr, europeans[0].RPCAddr)
	must.Eq(t, "b2.europe", europeans[1].Name)
	must.Len(t, 0, a1.m.RegionServers("asia"))

	// A region whose servers are all gone is no longer listed.
	b1.stop()
	b2.stop()
	waitFor(t, func() bool { return len(a1.m.RegionServers("europe")) == 0 })
	must.Eq(t, []string{"global"}, a1.m.Regions())
	must.Eq(t, 2, len(voters(t, a1.raft)))
}
