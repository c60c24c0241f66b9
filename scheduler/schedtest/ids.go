package schedtest

import (
	"fmt"
	"sync/atomic"
)

var idCounter atomic.Uint64

// NextID returns a UUID-shaped ID that is unique within the test binary.
// IDs come from a counter, not from crypto randomness, so a test that
// builds the same fixtures in the same order sees the same IDs and the
// scheduler's seeded shuffles repeat exactly.
func NextID() string {
	return IDFor(idCounter.Add(1))
}

// IDFor returns the UUID-shaped ID for n; IDFor(1) < IDFor(2) < ...
func IDFor(n uint64) string {
	return fmt.Sprintf("00000000-0000-4000-8000-%012x", n)
}
