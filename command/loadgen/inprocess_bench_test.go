package loadgen

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/command/nodesim"
)

// BenchmarkInProcess_W2 is W2 in one process: one server writing its Raft
// log with fsync, 1,000 simulated nodes and the load generator over the
// HTTP API on loopback. Each op is one job of per_job allocations; the
// reported allocs/s is the load generator's (first registration to last
// commit). Profile it with -cpuprofile to see the whole pipeline.
func BenchmarkInProcess_W2(b *testing.B) {
	for _, perJob := range []int{1, 10, 100} {
		b.Run(fmt.Sprintf("per_job=%d", perJob), func(b *testing.B) { benchInProcessW2(b, perJob) })
	}
}

func benchInProcessW2(b *testing.B, perJob int) {
	c := startInProcessClusterOn(b, b.TempDir())
	simCfg := nodesim.DefaultConfig()
	simCfg.Nodes = 1000
	sim, err := nodesim.New(simCfg, []nodesim.Server{{Name: "local", Conn: c.srv}})
	must.NoError(b, err)
	sim.Start()
	b.Cleanup(sim.Stop)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	must.NoError(b, sim.WaitRegistered(ctx))

	cfg := DefaultConfig()
	cfg.Addresses = []string{c.addr}
	cfg.Jobs = b.N
	cfg.Count = perJob
	cfg.Concurrency = 32
	cfg.IDPrefix = fmt.Sprintf("bench-%d", b.N)
	cfg.Timeout = 5 * time.Minute
	b.ResetTimer()
	res, err := Run(ctx, cfg)
	b.StopTimer()
	must.NoError(b, err)
	must.False(b, res.Incomplete)
	b.Logf("jobs=%d simulator: %s", b.N, sim.Stats())
	b.ReportMetric(res.AllocsPerSec, "allocs/s")
	b.ReportMetric(ms(res.CommitP50), "p50-ms")
	b.ReportMetric(ms(res.CommitP99), "p99-ms")
}
