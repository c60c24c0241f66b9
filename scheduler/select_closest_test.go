package scheduler

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// A placement that fits no node names the nodes that came closest: those
// lacking the least, relative to the ask. The ask is 1000 MHz and 2000 MB;
// each case lists the nodes' free CPU and memory and the closest ones
// expected, nearest first, with what they lacked.
func TestSelectClosestNodes(t *testing.T) {
	type node struct {
		name     string
		cpu, mem int64
	}
	type want struct {
		name     string
		cpu, mem int64
	}
	cases := []struct {
		name  string
		nodes []node
		want  []want
	}{
		{
			// Short 100 MB = 0.05 of the ask < 500 MB = 0.25 < 1000 MB = 0.5.
			name:  "by memory missing",
			nodes: []node{{"a", 4000, 1000}, {"b", 4000, 1900}, {"c", 4000, 1500}},
			want:  []want{{"b", 0, 100}, {"c", 0, 500}, {"a", 0, 1000}},
		},
		{
			// d lacks 10% of the CPU and 5% of the memory: 0.15 in all,
			// behind e's 0.10 of memory alone.
			name:  "shares of the ask add up over dimensions",
			nodes: []node{{"d", 900, 1900}, {"e", 4000, 1800}},
			want:  []want{{"e", 0, 200}, {"d", 100, 100}},
		},
		{
			name:  "only the three closest are kept",
			nodes: []node{{"n1", 4000, 100}, {"n2", 4000, 1990}, {"n3", 4000, 500}, {"n4", 4000, 1999}, {"n5", 4000, 1000}},
			want:  []want{{"n4", 0, 1}, {"n2", 0, 10}, {"n5", 0, 1000}},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var nodes []*structs.Node
			for _, n := range c.nodes {
				nodes = append(nodes, mock.Node(mock.Unreserved(), mock.NodeName(n.name), mock.CPUShares(n.cpu), mock.MemoryMB(n.mem)))
			}
			job := mock.Job(mock.Count(1), mock.NoPorts())
			job.TaskGroups[0].Tasks[0].Resources.CPU = 1000
			job.TaskGroups[0].Tasks[0].Resources.MemoryMB = 2000
			ctx := newTestContext(t, job, nodes)
			sel, m := ctx.selector(job.TaskGroups[0]).selectNode(selectOptions{preferred: -1})
			must.Nil(t, sel)
			m.PopulateClosestNodes()
			var got []want
			for _, s := range m.ClosestNodes {
				got = append(got, want{s.NodeName, s.CPU, s.MemoryMB})
			}
			must.Eq(t, c.want, got)
		})
	}
}

// A placed allocation's metric does not carry the nodes that came close.
func TestSelectClosestNodesNotOnPlacements(t *testing.T) {
	nodes := []*structs.Node{
		mock.Node(mock.Unreserved(), mock.MemoryMB(100)),
		mock.Node(mock.Unreserved(), mock.MemoryMB(8000)),
	}
	job := mock.Job(mock.Count(1), mock.NoPorts())
	job.TaskGroups[0].Tasks[0].Resources.MemoryMB = 2000
	ctx := newTestContext(t, job, nodes)
	sel, m := ctx.selector(job.TaskGroups[0]).selectNode(selectOptions{preferred: -1})
	must.NotNil(t, sel)
	must.Nil(t, m.ClosestNodes)
}
