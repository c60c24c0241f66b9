package structs_test

import (
	"testing"

	"github.com/opennomad/nomad/structs"
)

func TestAllocMetricCounts(t *testing.T) {
	m := &structs.AllocMetric{}
	small := &structs.Node{ID: "a", NodeClass: "small"}
	classless := &structs.Node{ID: "b"}
	m.EvaluateNode()
	m.EvaluateNode()
	m.FilterNode(small, "${attr.kernel.name} = linux")
	m.FilterNode(classless, "missing drivers")
	m.FilterNode(nil, "")
	m.ExhaustedNode(small, "memory")
	m.ExhaustedNode(classless, "")
	if m.NodesEvaluated != 2 || m.NodesFiltered != 3 || m.NodesExhausted != 2 {
		t.Errorf("counts %+v", m)
	}
	// classes are counted only for nodes that have one; reasons only when given
	if m.ClassFiltered["small"] != 1 || len(m.ClassFiltered) != 1 ||
		m.ConstraintFiltered["${attr.kernel.name} = linux"] != 1 || m.ConstraintFiltered["missing drivers"] != 1 ||
		len(m.ConstraintFiltered) != 2 || m.ClassExhausted["small"] != 1 || m.DimensionExhausted["memory"] != 1 ||
		len(m.DimensionExhausted) != 1 {
		t.Errorf("maps %+v", m)
	}
}

func TestAllocMetricCopyScores(t *testing.T) {
	m := &structs.AllocMetric{ScoreMetaData: []*structs.NodeScoreMeta{
		{NodeID: "a", Scores: structs.NamedScoresOf(map[string]float64{"binpack": 0.5}), NormScore: 0.5},
		{NodeID: "b", Scores: structs.NamedScores{}},
		{NodeID: "c"},
	}}
	c := m.Copy()
	c.ScoreMetaData[0].Scores.Set("binpack", -1)
	c.ScoreMetaData[0].NodeID = "z"
	if v, _ := m.ScoreMetaData[0].Scores.Get("binpack"); v != 0.5 || m.ScoreMetaData[0].NodeID != "a" {
		t.Error("Copy shares scores")
	}
	// Empty and nil scores encode differently, so a copy keeps them apart.
	if c.ScoreMetaData[1].Scores == nil || c.ScoreMetaData[2].Scores != nil {
		t.Errorf("copy of empty and nil scores: %#v, %#v", c.ScoreMetaData[1].Scores, c.ScoreMetaData[2].Scores)
	}
}

func TestAllocMetricCopy(t *testing.T) {
	m := &structs.AllocMetric{NodesAvailable: map[string]int{"dc1": 1}, ResourcesExhausted: map[string]*structs.Resources{
		"web": {CPU: 1}}, QuotaExhausted: []string{"q"}}
	c := m.Copy()
	c.NodesAvailable["dc1"] = 9
	c.ResourcesExhausted["web"].CPU = 9
	c.QuotaExhausted[0] = "z"
	if m.NodesAvailable["dc1"] != 1 || m.ResourcesExhausted["web"].CPU != 1 || m.QuotaExhausted[0] != "q" {
		t.Fatal("Copy shares state")
	}
	var nilMetric *structs.AllocMetric
	if nilMetric.Copy() != nil {
		t.Fatal("nil copy")
	}
}
