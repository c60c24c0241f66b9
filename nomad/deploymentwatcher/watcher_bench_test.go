package deploymentwatcher

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/hashicorp/go-memdb"

	"github.com/opennomad/nomad/nomad/state"
)

// BenchmarkWatcherPass measures one watcher pass over active deployments
// whose allocs all have verdicts an eval has seen: the steady state of a
// pass woken by an unrelated change, where nothing is written.
func BenchmarkWatcherPass(b *testing.B) {
	for _, n := range []int{10, 200, 5000} {
		b.Run(fmt.Sprintf("deployments=%d/allocs=%d", n, n*10), func(b *testing.B) {
			now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
			s, _ := steadyFixture(b, now, n, 10)
			w, err := New(Config{State: func() *state.StateStore { return s }, Raft: NewStateRaft(func() *state.StateStore { return s })})
			if err != nil {
				b.Fatal(err)
			}
			runtime.GC()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, _, err := w.pass(memdb.NewWatchSet(), now); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			if got := len(w.cfg.Raft.(*StateRaft).Evals()); got != 0 {
				b.Fatalf("the steady state wrote %d evals", got)
			}
		})
	}
}
