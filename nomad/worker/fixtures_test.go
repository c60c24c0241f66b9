package worker

import (
	"time"

	"github.com/opennomad/nomad/nomad/worker/workertest"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// The workers' tests run against workertest.Leader over a statetest.Store.
var _ Endpoints = (*workertest.Leader)(nil)

// testEpoch is the fake clocks' starting time.
var testEpoch = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// allocMemMB is every test alloc's memory, as statetest.Store.Alloc
// commits it. For the arithmetic in test comments, a mock node offers
// allocs 3900 MHz and 7936 MB (4000 MHz less 100 reserved, 8192 MB less
// 256 reserved).
const allocMemMB = mock.TaskMemoryMB

// newTestAlloc returns a new, pending alloc of job on node using cpu MHz
// and allocMemMB MB (see mock.SizedAlloc).
func newTestAlloc(job *structs.Job, node *structs.Node, cpu int64) *structs.Allocation {
	return mock.SizedAlloc(job, node, cpu, allocMemMB)
}
