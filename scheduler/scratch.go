package scheduler

import (
	"math/rand"

	"github.com/opennomad/nomad/structs"
)

// Scratch is working memory a scheduler reuses from one evaluation to the
// next: the arrays a pass indexes by candidate node (the candidate list,
// its class ids and usage slots, the node index, each group selector's
// status, visiting order and counts, a system pass's covered nodes). On
// a cluster of thousands of nodes they are most of what an evaluation of
// a small job allocates, though such a job visits a handful of nodes.
//
// A Scratch carries memory, never results: a pass writes every array
// before it reads it (most are taken cleared), takes every map empty,
// and reads usage slots of earlier passes as not loaded, so an
// evaluation decides exactly as it would with fresh memory. It serves one
// Process at a time; a worker keeps one for the evaluations it runs in
// turn.
type Scratch struct {
	// rngSource is reseeded by every Process (seededRand).
	rngSource rand.Source

	nodes     []*structs.Node
	classOf   []int32
	classID   map[string]int32
	classes   []string
	classNode []int32
	byID      map[string]int32
	usage     []nodeUsage
	// usageGen is the generation of the current pass: a usage slot is
	// loaded in this pass only when it carries it, so the slots need no
	// clearing between passes.
	usageGen uint32

	// covered is a system pass's per-node mark, one group at a time.
	covered []bool

	groups []*groupScratch
	// taken is how many of groups the current pass uses.
	taken int
}

// groupScratch is the per-node memory of one group selector.
type groupScratch struct {
	status               []nodeStatus
	why                  []uint16
	next, prev           []int32
	collisions, jobCount []int32
	order                []int32
	affinity             []float64
	bucketOf             []int32
}

// scratch returns the memory a Process works in: the configured Scratch,
// or a fresh one used by this Process alone.
func (c *Config) scratch() *Scratch {
	if c == nil || c.Scratch == nil {
		return &Scratch{}
	}
	return c.Scratch
}

// releaseScratch ends a Process's use of the configured Scratch.
func (c *Config) releaseScratch() {
	if c != nil && c.Scratch != nil {
		c.Scratch.release()
	}
}

// startPass hands the memory of earlier passes back for reuse.
func (sc *Scratch) startPass() {
	sc.taken = 0
	sc.usageGen++
	if sc.usageGen == 0 {
		// Wrapped: slots of 2^32 passes ago would look loaded.
		clear(sc.usage)
		sc.usageGen = 1
	}
	if sc.classID == nil {
		sc.classID = map[string]int32{}
		sc.byID = map[string]int32{}
	}
	clear(sc.classID)
	clear(sc.byID)
}

// release drops what the scratch holds of the snapshot, so that memory
// kept between evaluations pins no node of an old state.
func (sc *Scratch) release() {
	clear(sc.nodes)
	sc.nodes = sc.nodes[:0]
	clear(sc.classes)
	sc.classes = sc.classes[:0]
	clear(sc.classID)
	clear(sc.byID)
}

// group returns memory for the next group selector of the pass.
func (sc *Scratch) group() *groupScratch {
	if sc.taken == len(sc.groups) {
		sc.groups = append(sc.groups, &groupScratch{})
	}
	g := sc.groups[sc.taken]
	sc.taken++
	return g
}

// cleared returns (*buf)[:n] with every element zero, growing *buf when
// it is too short.
func cleared[T any](buf *[]T, n int) []T {
	if cap(*buf) < n {
		*buf = make([]T, n)
		return *buf
	}
	s := (*buf)[:n]
	clear(s)
	return s
}
