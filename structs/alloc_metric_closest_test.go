package structs_test

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

func TestAllocMetric_NearMiss(t *testing.T) {
	node := func(name string) *structs.Node { return &structs.Node{ID: name + "-id", Name: name} }
	cases := []struct {
		name string
		// each miss: node, short cpu/mem, ask cpu/mem
		misses [][5]any
		want   []string
	}{
		{"none", nil, nil},
		{"ranked by the share of the ask missing", [][5]any{
			{"half", int64(0), int64(500), int64(100), int64(1000)},
			{"tenth", int64(0), int64(100), int64(100), int64(1000)},
		}, []string{"tenth", "half"}},
		{"a tie keeps the node seen first", [][5]any{
			{"first", int64(10), int64(0), int64(100), int64(1000)},
			{"second", int64(10), int64(0), int64(100), int64(1000)},
		}, []string{"first", "second"}},
		{"a fourth closer node pushes out the farthest", [][5]any{
			{"a", int64(0), int64(400), int64(1), int64(1000)},
			{"b", int64(0), int64(300), int64(1), int64(1000)},
			{"c", int64(0), int64(200), int64(1), int64(1000)},
			{"d", int64(0), int64(100), int64(1), int64(1000)},
		}, []string{"d", "c", "b"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := &structs.AllocMetric{}
			for _, x := range c.misses {
				m.NearMiss(node(x[0].(string)), x[1].(int64), x[2].(int64), 0, x[3].(int64), x[4].(int64), 0)
			}
			m.PopulateClosestNodes()
			var got []string
			for _, s := range m.ClosestNodes {
				got = append(got, s.NodeName)
			}
			must.Eq(t, c.want, got)

			cp := m.Copy()
			must.Eq(t, m.ClosestNodes, cp.ClosestNodes)
			if len(cp.ClosestNodes) > 0 {
				cp.ClosestNodes[0].CPU = 99999
				must.NotEq(t, int64(99999), m.ClosestNodes[0].CPU)
			}
		})
	}
}
