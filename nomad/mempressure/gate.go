package mempressure

import (
	"sync"

	"github.com/opennomad/nomad/structs"
)

// The water marks, as fractions of a server's memory figure. The live
// heap is what the last garbage collection kept; with the Go runtime's
// soft limit at 90% of the figure, the collector runs harder as the heap
// nears it and the process's resident memory (live heap, garbage not yet
// collected, stacks, the runtime's own, and the binary's code outside
// the runtime's count) stays under the figure. Past 70% live, the
// collector has little room left to do so, so refusals start there; they
// stop at 60%, so that one collection's swing does not turn them on and
// off.
const (
	HighWater = 0.70
	LowWater  = 0.60
)

// Gate holds whether writes are refused for memory, with hysteresis. Its
// methods are safe for concurrent use: the leader's collector updates it
// and every write endpoint reads it.
type Gate struct {
	mu       sync.Mutex
	refusing bool
	worst    structs.ServerMemory
}

// Update judges the latest reading of every server and returns whether
// writes are refused now: it turns on when a server's live heap reaches
// HighWater of its limit, and off only once every server is below
// LowWater of its own. A reading without a limit counts for nothing.
func (g *Gate) Update(readings []structs.ServerMemory) bool {
	var worst structs.ServerMemory
	for _, r := range readings {
		if r.Limit > 0 && (worst.Limit == 0 || Fraction(r) > Fraction(worst)) {
			worst = r
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.worst = worst
	switch f := Fraction(worst); {
	case f >= HighWater:
		g.refusing = true
	case f < LowWater:
		g.refusing = false
	}
	return g.refusing
}

// Refusing reports whether writes are refused, and the fullest server's
// reading at the last Update.
func (g *Gate) Refusing() (bool, structs.ServerMemory) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.refusing, g.worst
}

// Reset forgets everything: a server that loses leadership refuses
// nothing, and the next leader starts from its own readings.
func (g *Gate) Reset() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.refusing = false
	g.worst = structs.ServerMemory{}
}

// Fraction is the share of its limit a server's live heap fills; 0
// without a limit.
func Fraction(r structs.ServerMemory) float64 {
	if r.Limit == 0 {
		return 0
	}
	return float64(r.HeapLive) / float64(r.Limit)
}
