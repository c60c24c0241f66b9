package scheduler

import (
	"github.com/opennomad/nomad/structs"
)

// Scorer names, as they appear in AllocMetric.ScoreMetaData.
const (
	scorerBinPack      = structs.ScorerBinPack
	scorerAntiAffinity = structs.ScorerAntiAffinity
	scorerPenalty      = structs.ScorerPenalty
	scorerAffinity     = structs.ScorerAffinity
	scorerSpread       = structs.ScorerSpread
	scorerPreemption   = structs.ScorerPreemption
)

// scoreCard holds one candidate node's scores. A node's final score is the
// mean of the scores that apply to it: bin-packing always; job
// anti-affinity when the node already runs allocs of the group; the
// reschedule penalty on nodes where the replaced alloc failed; node
// affinity and allocation spread when the group has any; preemption when
// the placement evicts allocs.
type scoreCard struct {
	node         int32
	binPack      float64
	antiAffinity float64
	affinity     float64
	spread       float64
	preemption   float64
	hasAnti      bool
	penalized    bool
	hasAffinity  bool
	hasSpread    bool
	hasPreempt   bool
	final        float64
	// grant holds the cores and ports the node would hand out, for asks
	// that need them.
	grant *nodeGrant
}

// finish computes the final score.
func (s *scoreCard) finish() {
	sum, n := s.binPack, 1.0
	if s.hasAnti {
		sum += s.antiAffinity
		n++
	}
	if s.penalized {
		sum += -1
		n++
	}
	if s.hasAffinity {
		sum += s.affinity
		n++
	}
	if s.hasSpread {
		sum += s.spread
		n++
	}
	if s.hasPreempt {
		sum += s.preemption
		n++
	}
	s.final = sum / n
}

// meta renders the card for AllocMetric.ScoreMetaData. Scorers that ran
// but did not apply to the node are reported as 0, so every node of a
// placement lists the same scorers.
func (s *scoreCard) meta(node *structs.Node) *structs.NodeScoreMeta {
	m := &structs.NodeScoreMeta{}
	s.fill(m, node)
	return m
}

// fill writes the card into m.
func (s *scoreCard) fill(m *structs.NodeScoreMeta, node *structs.Node) {
	n := 3
	for _, has := range [...]bool{s.hasAffinity, s.hasSpread, s.hasPreempt} {
		if has {
			n++
		}
	}
	scores := make(structs.NamedScores, 0, n)
	scores.Set(scorerBinPack, s.binPack)
	scores.Set(scorerAntiAffinity, s.antiAffinity)
	penalty := 0.0
	if s.penalized {
		penalty = -1
	}
	scores.Set(scorerPenalty, penalty)
	if s.hasAffinity {
		scores.Set(scorerAffinity, s.affinity)
	}
	if s.hasSpread {
		scores.Set(scorerSpread, s.spread)
	}
	if s.hasPreempt {
		scores.Set(scorerPreemption, s.preemption)
	}
	m.NodeID, m.NormScore, m.Scores = node.ID, s.final, scores
}

// binPackScore is the fit score of the node once util is placed on it,
// normalized into [0, 1] (1 is a perfectly packed node under the binpack
// algorithm, an empty one under spread).
func binPackScore(fit func(*structs.Node, *structs.ComparableResources) float64,
	node *structs.Node, util *structs.ComparableResources) float64 {
	return structs.NormalizeFitScore(fit(node, util))
}

// fitKey is what a fit score depends on: the node's schedulable CPU and
// memory and what would be used of them.
type fitKey struct{ capCPU, capMem, cpu, mem int64 }

// fitScores memoizes fit scores within a pass. Clusters are made of few
// machine shapes and allocs of few sizes, so the same few keys repeat for
// thousands of candidates, and each miss costs two powers.
type fitScores struct {
	fit   func(*structs.Node, *structs.ComparableResources) float64
	known map[fitKey]float64
}

func (f *fitScores) score(node *structs.Node, u *nodeUsage, util *structs.ComparableResources) float64 {
	k := fitKey{u.capCPU, u.capMem, util.Flattened.Cpu.CpuShares, util.Flattened.Memory.MemoryMB}
	if v, ok := f.known[k]; ok {
		return v
	}
	v := binPackScore(f.fit, node, util)
	if f.known == nil {
		f.known = map[fitKey]float64{}
	}
	f.known[k] = v
	return v
}

// antiAffinityScore discourages stacking a group's allocs on one node:
// with c of the group's allocs already on the node and a desired count d,
//
//	score = -(c + 1) / d
//
// It applies only when c > 0.
func antiAffinityScore(collisions, desired int) (float64, bool) {
	if collisions <= 0 {
		return 0, false
	}
	if desired < 1 {
		desired = 1
	}
	return -float64(collisions+1) / float64(desired), true
}

// compiledAffinity is an affinity parsed for repeated checking.
type compiledAffinity struct {
	constraint compiledConstraint
	weight     float64
}

func compileAffinities(job *structs.Job, tg *structs.TaskGroup) []compiledAffinity {
	var out []compiledAffinity
	add := func(as []*structs.Affinity) {
		for _, a := range as {
			c := compileConstraint(&structs.Constraint{LTarget: a.LTarget, RTarget: a.RTarget, Operand: a.Operand})
			out = append(out, compiledAffinity{constraint: c, weight: float64(a.Weight)})
		}
	}
	add(job.Affinities)
	add(tg.Affinities)
	for _, t := range tg.Tasks {
		add(t.Affinities)
	}
	return out
}

// affinityScore is the weighted share of the affinities the node matches:
//
//	score = sum(weight of matching affinities) / sum(|weight|)
//
// in [-1, 1]; negative weights express anti-affinity.
func affinityScore(as []compiledAffinity, n *structs.Node) float64 {
	var total, matched float64
	for i := range as {
		w := as[i].weight
		if w < 0 {
			total -= w
		} else {
			total += w
		}
		if as[i].constraint.holds(n) {
			matched += w
		}
	}
	if total == 0 {
		return 0
	}
	return matched / total
}

// affinitiesEscape reports whether any affinity reads unique.* values.
func affinitiesEscape(as []compiledAffinity) bool {
	for i := range as {
		if as[i].constraint.escapes {
			return true
		}
	}
	return false
}
