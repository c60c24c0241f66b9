package nomad

import (
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/clock"
)

// TestVersionGate: the answer is checked at first use and again only
// once it is versionGateTTL old, so a server that upgrades (or an old
// one that joins) is seen within that time.
func TestVersionGate(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC))
	checks, answer := 0, false
	g := newVersionGate(clk, func() bool { checks++; return answer })

	must.False(t, g.Open())
	answer = true
	must.False(t, g.Open(), must.Sprint("cached"))
	must.Eq(t, 1, checks)

	clk.Advance(versionGateTTL)
	must.True(t, g.Open())
	must.Eq(t, 2, checks)

	answer = false
	clk.Advance(versionGateTTL / 2)
	must.True(t, g.Open(), must.Sprint("cached"))
	clk.Advance(versionGateTTL / 2)
	must.False(t, g.Open())
	must.Eq(t, 3, checks)
}
