package scheduler

import (
	"math"
	"testing"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-4 }

func TestBinPackScore(t *testing.T) {
	node := mock.Node(mock.Unreserved(), mock.CPUShares(4000), mock.MemoryMB(8192), mock.Reserved(0, 0, 0))
	util := func(cpu, mem int64) *structs.ComparableResources {
		u := &structs.ComparableResources{}
		u.Flattened.Cpu.CpuShares, u.Flattened.Memory.MemoryMB = cpu, mem
		return u
	}
	cases := []struct {
		name     string
		fit      func(*structs.Node, *structs.ComparableResources) float64
		cpu, mem int64
		want     float64
	}{
		// free cpu 0.5, free mem 0.5: 20 - (10^0.5 + 10^0.5) = 20 - 6.3246 = 13.6754; /18
		{"binpack half full", structs.ScoreFitBinPack, 2000, 4096, 13.6754 / 18},
		// free 0, 0: 20 - (1 + 1) = 18; /18
		{"binpack full", structs.ScoreFitBinPack, 4000, 8192, 1},
		// free 1, 1: 20 - 20 = 0
		{"binpack empty", structs.ScoreFitBinPack, 0, 0, 0},
		// free 0.75, 0.5: 20 - (5.6234 + 3.1623) = 11.2143; /18
		{"binpack uneven", structs.ScoreFitBinPack, 1000, 4096, 11.2143 / 18},
		// spread algorithm: (10^0.5 + 10^0.5) - 2 = 4.3246; /18
		{"spread half full", structs.ScoreFitSpread, 2000, 4096, 4.3246 / 18},
		// spread: empty node is best: 20 - 2 = 18; /18
		{"spread empty", structs.ScoreFitSpread, 0, 0, 1},
	}
	for _, tc := range cases {
		if got := binPackScore(tc.fit, node, util(tc.cpu, tc.mem)); !near(got, tc.want) {
			t.Errorf("%s: got %.4f want %.4f", tc.name, got, tc.want)
		}
	}
}

func TestAntiAffinityScore(t *testing.T) {
	cases := []struct {
		collisions, desired int
		want                float64
		applies             bool
	}{
		{0, 10, 0, false},
		{1, 10, -0.2, true}, // -(1+1)/10
		{2, 10, -0.3, true}, // -(2+1)/10
		{3, 3, -4.0 / 3, true},
		{1, 0, -2, true}, // a zero count is treated as 1
	}
	for _, tc := range cases {
		got, ok := antiAffinityScore(tc.collisions, tc.desired)
		if ok != tc.applies || !near(got, tc.want) {
			t.Errorf("antiAffinityScore(%d, %d) = %v, %v; want %v, %v", tc.collisions, tc.desired, got, ok, tc.want, tc.applies)
		}
	}
}

func TestAffinityScore(t *testing.T) {
	node := mock.Node(mock.Unreserved(), mock.Meta("rack", "r1"), mock.Attr("kernel.name", "linux"))
	aff := func(l, op, r string, w int8) *structs.Affinity {
		return &structs.Affinity{LTarget: l, Operand: op, RTarget: r, Weight: w}
	}
	cases := []struct {
		name string
		as   []*structs.Affinity
		want float64
	}{
		// 50 matches: 50 / 50
		{"one match", []*structs.Affinity{aff("${meta.rack}", "=", "r1", 50)}, 1},
		// 50 matches, 25 does not: 50 / 75
		{"partial", []*structs.Affinity{aff("${meta.rack}", "=", "r1", 50), aff("${meta.rack}", "=", "r2", 25)}, 50.0 / 75},
		// -50 matches (anti-affinity), 50 does not: -50 / 100
		{"anti", []*structs.Affinity{aff("${attr.kernel.name}", "=", "linux", -50), aff("${meta.rack}", "=", "r9", 50)}, -0.5},
		// nothing matches: 0 / 100
		{"none", []*structs.Affinity{aff("${meta.rack}", "=", "r9", 100)}, 0},
	}
	for _, tc := range cases {
		job := mock.Job(mock.Count(10), mock.NoPorts())
		job.Affinities = tc.as
		got := affinityScore(compileAffinities(job, job.TaskGroups[0]), node)
		if !near(got, tc.want) {
			t.Errorf("%s: got %.4f want %.4f", tc.name, got, tc.want)
		}
	}
}

func TestEvenSpreadBoost(t *testing.T) {
	cases := []struct {
		c, lo, hi int
		want      float64
	}{
		{2, 2, 2, 0},    // even: no preference
		{3, 3, 5, 1},    // least used: 1 - 2*0/2
		{5, 3, 5, -1},   // most used:  1 - 2*2/2
		{4, 3, 5, 0},    // middle:     1 - 2*1/2
		{0, 0, 1, 1},    // one behind: as strong as far behind
		{10, 0, 40, .5}, // 1 - 2*10/40
	}
	for _, tc := range cases {
		if got := evenSpreadBoost(tc.c, tc.lo, tc.hi); !near(got, tc.want) {
			t.Errorf("evenSpreadBoost(%d, %d, %d) = %v want %v", tc.c, tc.lo, tc.hi, got, tc.want)
		}
	}
}

func TestTargetSpreadBoost(t *testing.T) {
	cases := []struct {
		desired float64
		used    int
		want    float64
	}{
		{5, 2, 0.4},  // (5 - 3) / 5
		{5, 4, 0},    // (5 - 5) / 5: the target is met by this placement
		{5, 6, -0.4}, // (5 - 7) / 5
		{5, 20, -1},  // (5 - 21) / 5 = -3.2, clamped
		{0, 0, -1},   // no share for this value
		{7, 0, 6.0 / 7},
	}
	for _, tc := range cases {
		if got := targetSpreadBoost(tc.desired, tc.used); !near(got, tc.want) {
			t.Errorf("targetSpreadBoost(%v, %d) = %v want %v", tc.desired, tc.used, got, tc.want)
		}
	}
}

func TestScoreCardFinal(t *testing.T) {
	cases := []struct {
		name string
		card scoreCard
		want float64
	}{
		{"binpack only", scoreCard{binPack: 0.6}, 0.6},
		// (0.6 + -0.3) / 2
		{"with anti-affinity", scoreCard{binPack: 0.6, antiAffinity: -0.3, hasAnti: true}, 0.15},
		// (0.6 + -1) / 2
		{"penalized", scoreCard{binPack: 0.6, penalized: true}, -0.2},
		// (0.6 + 0.5 + 1) / 3
		{"affinity and spread", scoreCard{binPack: 0.6, affinity: 0.5, hasAffinity: true, spread: 1, hasSpread: true}, 0.7},
		// a zero affinity still counts in the mean: (0.6 + 0) / 2
		{"zero affinity", scoreCard{binPack: 0.6, hasAffinity: true}, 0.3},
	}
	for _, tc := range cases {
		tc.card.finish()
		if !near(tc.card.final, tc.want) {
			t.Errorf("%s: final %v want %v", tc.name, tc.card.final, tc.want)
		}
	}
}

func TestScoreCardMeta(t *testing.T) {
	n := mock.Node(mock.Unreserved())
	c := scoreCard{binPack: 0.5, penalized: true, hasSpread: true, spread: -1}
	c.finish()
	m := c.meta(n)
	// Sorted by name, as the API lists them.
	want := structs.NamedScores{{Name: scorerSpread, Score: -1}, {Name: scorerBinPack, Score: 0.5},
		{Name: scorerAntiAffinity}, {Name: scorerPenalty, Score: -1}}
	if !m.Scores.Equal(want) {
		t.Fatalf("scores %v want %v", m.Scores, want)
	}
	if m.NodeID != n.ID || !near(m.NormScore, (0.5-1-1)/3) {
		t.Errorf("meta %+v", m)
	}
}

func TestSelectLimit(t *testing.T) {
	cases := []struct {
		typ      string
		feasible int
		want     int
	}{
		{structs.JobTypeBatch, 5000, 2},
		{structs.JobTypeService, 0, 2},
		{structs.JobTypeService, 3, 2},     // ceil(log2 3) = 2
		{structs.JobTypeService, 5, 3},     // ceil(log2 5) = 3
		{structs.JobTypeService, 2500, 12}, // ceil(11.29)
		{structs.JobTypeService, 5000, 13}, // ceil(12.29)
	}
	for _, tc := range cases {
		if got := selectLimit(tc.typ, tc.feasible); got != tc.want {
			t.Errorf("selectLimit(%s, %d) = %d want %d", tc.typ, tc.feasible, got, tc.want)
		}
	}
}

func TestGlobMatch(t *testing.T) {
	cases := []struct {
		pattern, s string
		want       bool
	}{
		{"dc1", "dc1", true},
		{"dc1", "dc2", false},
		{"*", "anything", true},
		{"dc-*", "dc-1", true},
		{"dc-*", "us-1", false},
		{"*-east", "us-east", true},
		{"us-*-1", "us-east-1", true},
		{"us-*-1", "us-east-2", false},
		{"a*b*c", "abc", true},
		{"a*b*c", "acb", false},
	}
	for _, tc := range cases {
		if got := globMatch(tc.pattern, tc.s); got != tc.want {
			t.Errorf("globMatch(%q, %q) = %v", tc.pattern, tc.s, got)
		}
	}
}
