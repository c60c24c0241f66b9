package structs

import (
	"maps"
	"slices"
	"time"
)

// MaxRetainedNodeScores is how many of the best-scoring nodes an
// AllocMetric keeps, to explain a placement without bloating the alloc.
const MaxRetainedNodeScores = 5

// AllocMetric explains a placement decision: which nodes were looked at,
// why the rest were filtered or exhausted, and how the best ones scored.
type AllocMetric struct {
	NodesEvaluated     int
	NodesFiltered      int
	NodesInPool        int
	NodePool           string
	NodesAvailable     map[string]int
	ClassFiltered      map[string]int
	ConstraintFiltered map[string]int
	NodesExhausted     int
	ClassExhausted     map[string]int
	DimensionExhausted map[string]int
	QuotaExhausted     []string
	ResourcesExhausted map[string]*Resources
	// Scores is kept for wire compatibility; ScoreMetaData supersedes it.
	Scores            map[string]float64
	ScoreMetaData     []*NodeScoreMeta
	AllocationTime    time.Duration
	CoalescedFailures int
	// ClosestNodes are, for a failed placement, the nodes that lacked the
	// least (see NearMiss); nil on a placed allocation's metric.
	ClosestNodes []*NodeShortfall

	// nearMisses collects the closest exhausted nodes while a placement
	// runs; PopulateClosestNodes publishes them on a failure.
	nearMisses []nearMiss
}

// NodeScoreMeta is one node's scores by scorer and its final score.
type NodeScoreMeta struct {
	NodeID    string
	Scores    NamedScores
	NormScore float64
}

// Copy returns a deep copy.
func (a *AllocMetric) Copy() *AllocMetric {
	if a == nil {
		return nil
	}
	n := *a
	n.NodesAvailable = maps.Clone(a.NodesAvailable)
	n.ClassFiltered = maps.Clone(a.ClassFiltered)
	n.ConstraintFiltered = maps.Clone(a.ConstraintFiltered)
	n.ClassExhausted = maps.Clone(a.ClassExhausted)
	n.DimensionExhausted = maps.Clone(a.DimensionExhausted)
	n.QuotaExhausted = slices.Clone(a.QuotaExhausted)
	if a.ResourcesExhausted != nil {
		n.ResourcesExhausted = make(map[string]*Resources, len(a.ResourcesExhausted))
		for k, r := range a.ResourcesExhausted {
			n.ResourcesExhausted[k] = r.Copy()
		}
	}
	n.Scores = maps.Clone(a.Scores)
	if a.ScoreMetaData != nil {
		n.ScoreMetaData = make([]*NodeScoreMeta, len(a.ScoreMetaData))
		for i, s := range a.ScoreMetaData {
			sc := *s
			sc.Scores = s.Scores.Copy()
			n.ScoreMetaData[i] = &sc
		}
	}
	if a.ClosestNodes != nil {
		n.ClosestNodes = make([]*NodeShortfall, len(a.ClosestNodes))
		for i, c := range a.ClosestNodes {
			cc := *c
			n.ClosestNodes[i] = &cc
		}
	}
	n.nearMisses = nil
	return &n
}

// EvaluateNode counts one more node looked at.
func (a *AllocMetric) EvaluateNode() { a.NodesEvaluated++ }

// FilterNode records a node excluded by feasibility. The constraint text
// (or reason) is the key operators read in `job status` and `job run`.
func (a *AllocMetric) FilterNode(node *Node, constraint string) {
	a.NodesFiltered++
	if node != nil && node.NodeClass != "" {
		if a.ClassFiltered == nil {
			a.ClassFiltered = map[string]int{}
		}
		a.ClassFiltered[node.NodeClass]++
	}
	if constraint != "" {
		if a.ConstraintFiltered == nil {
			a.ConstraintFiltered = map[string]int{}
		}
		a.ConstraintFiltered[constraint]++
	}
}

// ExhaustedNode records a feasible node without room for the ask.
func (a *AllocMetric) ExhaustedNode(node *Node, dimension string) {
	a.NodesExhausted++
	if node != nil && node.NodeClass != "" {
		if a.ClassExhausted == nil {
			a.ClassExhausted = map[string]int{}
		}
		a.ClassExhausted[node.NodeClass]++
	}
	if dimension != "" {
		if a.DimensionExhausted == nil {
			a.DimensionExhausted = map[string]int{}
		}
		a.DimensionExhausted[dimension]++
	}
}
