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

func TestAllocMetricKeepsTheBestScores(t *testing.T) {
	m := &structs.AllocMetric{}
	for i := range 30 {
		// scores 0.00, 0.01, ..., 0.29 in a scrambled order
		s := float64((i*7)%30) / 100
		m.ScoreNode(&structs.Node{ID: string(rune('A' + (i*7)%30))}, map[string]float64{"binpack": s}, s)
	}
	m.PopulateScoreMetaData()
	if len(m.ScoreMetaData) != structs.MaxRetainedNodeScores {
		t.Fatalf("kept %d scores", len(m.ScoreMetaData))
	}
	for i, want := range []float64{0.29, 0.28, 0.27, 0.26, 0.25} {
		if got := m.ScoreMetaData[i].NormScore; got != want {
			t.Errorf("score %d = %v, want %v", i, got, want)
		}
	}
	c := m.Copy()
	c.ScoreMetaData[0].Scores["binpack"] = -1
	if m.ScoreMetaData[0].Scores["binpack"] == -1 {
		t.Error("Copy shares score maps")
	}
	empty := &structs.AllocMetric{}
	empty.PopulateScoreMetaData()
	if empty.ScoreMetaData != nil {
		t.Error("no scores should leave ScoreMetaData nil")
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
