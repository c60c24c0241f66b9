//go:build unix

package allocrunner

import (
	"strconv"
	"testing"

	"github.com/opennomad/nomad/client/state"
)

// BenchmarkSetStale is the alloc watch's diff of the servers' list
// against what the client runs: 5000 allocations, 10 of them changed.
func BenchmarkSetStale(b *testing.B) {
	s := NewSet(SetConfig{StateDB: state.NewMemDB()})
	server := make(map[string]uint64, 5000)
	for i := 0; i < 5000; i++ {
		id := "alloc-" + strconv.Itoa(i)
		s.index[id] = 100
		server[id] = 100
	}
	for i := 0; i < 10; i++ {
		server["alloc-"+strconv.Itoa(i*500)] = 200
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if got := s.Stale(server); len(got) != 10 {
			b.Fatalf("stale %d", len(got))
		}
	}
}
