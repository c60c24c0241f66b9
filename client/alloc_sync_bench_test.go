package client

import (
	"strconv"
	"testing"

	"github.com/opennomad/nomad/structs"
)

// BenchmarkAllocSyncQueue measures what alloc runners pay to report a
// change and the sync loop to take a batch: 1000 allocations each
// reporting three changes between two syncs.
func BenchmarkAllocSyncQueue(b *testing.B) {
	c := &Client{pending: map[string]*structs.Allocation{}}
	updates := make([]*structs.Allocation, 1000)
	for i := range updates {
		updates[i] = &structs.Allocation{ID: "alloc-" + strconv.Itoa(i), ClientStatus: structs.AllocClientStatusRunning}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for r := 0; r < 3; r++ {
			for _, u := range updates {
				c.allocUpdated(u)
			}
		}
		if batch := c.takePending(); len(batch) != len(updates) {
			b.Fatalf("batch of %d", len(batch))
		}
	}
}
