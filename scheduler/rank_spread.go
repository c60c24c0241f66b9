package scheduler

import (
	"encoding/binary"
	"slices"

	"github.com/opennomad/nomad/structs"
)

// evenSpreadBoost scores a value of an attribute spread without targets,
// from the number of the group's allocs on nodes with that value (c) and
// the fewest and most on any value (lo, hi):
//
//	lo == hi: 0                         (perfectly even: no preference)
//	else:     1 - 2 * (c - lo) / (hi - lo)
//
// so the least used values score +1 and the most used -1. Because the
// boost is relative to the spread of counts, a value that falls behind by
// one alloc is preferred as strongly as one that is far behind, which is
// what keeps the distribution within one alloc of even.
func evenSpreadBoost(c, lo, hi int) float64 {
	if hi <= lo {
		return 0
	}
	return 1 - 2*float64(c-lo)/float64(hi-lo)
}

// targetSpreadBoost scores a value of an attribute spread with targets:
// desired is the value's target share times the group count, used the
// allocs already on it. The boost is how far below its target the value
// stays once one more alloc lands there:
//
//	(desired - (used + 1)) / desired, clamped to [-1, 1]
//
// A value with no share at all scores -1.
func targetSpreadBoost(desired float64, used int) float64 {
	if desired <= 0 {
		return -1
	}
	return clampUnit((desired - float64(used+1)) / desired)
}

func clampUnit(v float64) float64 {
	return max(-1, min(1, v))
}

// spreadSpec is one spread block of a group, with the group's alloc
// counts per value of its attribute.
type spreadSpec struct {
	attr   target
	weight float64 // this block's share of the group's total spread weight
	// Targets: share (0..1) per value id, -1 for values without a target,
	// which share the remainder of 100%.
	targeted  bool
	shares    map[string]float64
	share     []float64
	remainder float64

	valueID map[string]int32
	counts  []int
	// seen marks the values an even spread balances over: those of any
	// feasible node and those that already hold allocs.
	seen       []bool
	otherCount int // targeted: allocs on values without a target

	lo, hi int // even: fewest and most allocs per seen value, per pass
}

func (s *spreadSpec) intern(v string) int32 {
	if id, ok := s.valueID[v]; ok {
		return id
	}
	id := int32(len(s.counts))
	s.valueID[v] = id
	s.counts = append(s.counts, 0)
	s.seen = append(s.seen, false)
	share := -1.0
	if p, ok := s.shares[v]; ok {
		share = p
	}
	s.share = append(s.share, share)
	return id
}

// valueOf returns the node's value id, -1 when the attribute is unset.
func (s *spreadSpec) valueOf(n *structs.Node) int32 {
	v, ok := s.attr.resolve(n)
	if !ok {
		return -1
	}
	return s.intern(v)
}

func (s *spreadSpec) note(v int32, delta int) {
	if v < 0 {
		return
	}
	s.counts[v] += delta
	s.seen[v] = true
	if s.targeted && s.share[v] < 0 {
		s.otherCount += delta
	}
}

// prepare computes the per-pass bounds an even spread scores against.
func (s *spreadSpec) prepare() {
	first := true
	for v, c := range s.counts {
		if !s.seen[v] {
			continue
		}
		if first || c < s.lo {
			s.lo = c
		}
		if first || c > s.hi {
			s.hi = c
		}
		first = false
	}
}

func (s *spreadSpec) boost(v int32, groupCount int) float64 {
	if v < 0 {
		// Nodes without the attribute cannot take part in the spread.
		return -1
	}
	if !s.targeted {
		return evenSpreadBoost(s.counts[v], s.lo, s.hi)
	}
	share, used := s.share[v], s.counts[v]
	if share < 0 {
		share, used = s.remainder, s.otherCount
	}
	return targetSpreadBoost(share*float64(groupCount), used)
}

// spreadScorer scores the spread blocks of one group. Nodes are grouped
// into buckets of equal attribute values; a bucket's score is the same
// for all its nodes, so a pass scores buckets, not nodes, and the
// selector visits the best buckets first. That is what makes spread cheap:
// the work per placement grows with the number of distinct values, not
// with the number of nodes or allocs.
type spreadScorer struct {
	specs      []*spreadSpec
	groupCount int

	bucketOf    []int32   // per candidate node; -1 for infeasible nodes
	bucketVals  [][]int32 // value id per spec, per bucket
	bucketScore []float64 // per pass
	bucketKey   map[string]int32
	keyBuf      []byte
	valBuf      []int32
	// byClass caches each computed class's bucket when no spread reads a
	// unique.* attribute, so equal nodes are resolved once.
	byClass map[int32]int32

	// other caches the value ids of nodes outside the candidate set that
	// hold allocs of the group (a down node, another datacenter).
	other map[string][]int32
}

// newSpreadScorer returns nil when the group has no spread. Its per-node
// buckets, one per candidate node, are taken from buf.
func newSpreadScorer(job *structs.Job, tg *structs.TaskGroup, buf *[]int32, nodes int) *spreadScorer {
	blocks := append(append([]*structs.Spread{}, job.Spreads...), tg.Spreads...)
	if len(blocks) == 0 {
		return nil
	}
	total := 0.0
	for _, b := range blocks {
		total += float64(b.Weight)
	}
	sc := &spreadScorer{
		groupCount: tg.Count,
		bucketOf:   cleared(buf, nodes),
		bucketKey:  map[string]int32{},
		other:      map[string][]int32{},
	}
	for i := range sc.bucketOf {
		sc.bucketOf[i] = -1
	}
	sc.byClass = map[int32]int32{}
	for _, b := range blocks {
		if (&structs.Constraint{LTarget: b.Attribute}).EscapesComputedClass() {
			sc.byClass = nil
		}
	}
	for _, b := range blocks {
		w := 1.0 / float64(len(blocks))
		if total > 0 {
			w = float64(b.Weight) / total
		}
		spec := &spreadSpec{attr: parseTarget(b.Attribute), weight: w, valueID: map[string]int32{}}
		if len(b.SpreadTarget) > 0 {
			spec.targeted = true
			spec.shares = map[string]float64{}
			sum := 0.0
			for _, t := range b.SpreadTarget {
				spec.shares[t.Value] = float64(t.Percent) / 100
				sum += float64(t.Percent) / 100
			}
			spec.remainder = max(0, 1-sum)
		}
		sc.specs = append(sc.specs, spec)
	}
	return sc
}

// addNode assigns a feasible candidate node of the given computed class
// to its bucket. It allocates only when the node opens a new bucket.
func (sc *spreadScorer) addNode(i int32, n *structs.Node, class int32) int32 {
	if sc.byClass != nil {
		if b, ok := sc.byClass[class]; ok {
			sc.bucketOf[i] = b
			return b
		}
	}
	b := sc.resolveBucket(n)
	sc.bucketOf[i] = b
	if sc.byClass != nil && n.ComputedClass != "" {
		sc.byClass[class] = b
	}
	return b
}

func (sc *spreadScorer) resolveBucket(n *structs.Node) int32 {
	sc.keyBuf = sc.keyBuf[:0]
	sc.valBuf = sc.valBuf[:0]
	for _, spec := range sc.specs {
		v := spec.valueOf(n)
		if v >= 0 {
			spec.seen[v] = true
		}
		sc.valBuf = append(sc.valBuf, v)
		sc.keyBuf = binary.LittleEndian.AppendUint32(sc.keyBuf, uint32(v))
	}
	b, ok := sc.bucketKey[string(sc.keyBuf)]
	if !ok {
		b = int32(len(sc.bucketVals))
		sc.bucketKey[string(sc.keyBuf)] = b
		sc.bucketVals = append(sc.bucketVals, slices.Clone(sc.valBuf))
		sc.bucketScore = append(sc.bucketScore, 0)
	}
	return b
}

// note counts (delta 1) or uncounts (-1) an alloc of the group on a node;
// i is the node's candidate index or -1.
func (sc *spreadScorer) note(i int32, n *structs.Node, delta int) {
	var vals []int32
	switch {
	case i >= 0 && sc.bucketOf[i] >= 0:
		vals = sc.bucketVals[sc.bucketOf[i]]
	case n != nil:
		vals = sc.other[n.ID]
		if vals == nil {
			vals = make([]int32, len(sc.specs))
			for k, spec := range sc.specs {
				vals[k] = spec.valueOf(n)
			}
			sc.other[n.ID] = vals
		}
	default:
		return
	}
	for k, spec := range sc.specs {
		spec.note(vals[k], delta)
	}
}

// prepare scores every bucket for the next placement.
func (sc *spreadScorer) prepare() {
	for _, spec := range sc.specs {
		if !spec.targeted {
			spec.prepare()
		}
	}
	for b, vals := range sc.bucketVals {
		score := 0.0
		for k, spec := range sc.specs {
			score += spec.weight * spec.boost(vals[k], sc.groupCount)
		}
		sc.bucketScore[b] = score
	}
}

// nodeScore is the spread score of candidate node i in this pass.
func (sc *spreadScorer) nodeScore(i int32) float64 {
	return sc.bucketScore[sc.bucketOf[i]]
}
