package command

import (
	"fmt"
	"io"
	"testing"

	"github.com/hashicorp/cli"

	"github.com/opennomad/nomad/api"
)

// The CLI's hot paths are rendering: large listings (a 5,000-node
// cluster, thousands of evaluations) and the monitor's per-wake-up diff
// of an evaluation's allocations.

func BenchmarkFormatNodeList5000(b *testing.B) {
	nodes := make([]*api.NodeListStub, 5000)
	for i := range nodes {
		nodes[i] = &api.NodeListStub{ID: fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i), Name: fmt.Sprintf("node-%05d", i),
			NodePool: "default", Datacenter: "dc1", SchedulingEligibility: "eligible", Status: "ready"}
	}
	b.ReportAllocs()
	for b.Loop() {
		formatNodeList(nodes, shortIDLength)
	}
}

func BenchmarkFormatEvalList2000(b *testing.B) {
	evals := make([]*api.Evaluation, 2000)
	for i := range evals {
		evals[i] = &api.Evaluation{ID: fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i), Priority: 50,
			TriggeredBy: "job-register", JobID: fmt.Sprintf("job-%d", i), Namespace: "default", Status: "complete",
			CreateIndex: uint64(i)}
	}
	b.ReportAllocs()
	for b.Loop() {
		formatEvalList(evals, shortIDLength, false)
	}
}

// BenchmarkMonitorUpdate1000Allocs measures one monitor wake-up on an
// evaluation that placed 1,000 allocations, all already seen, one of
// which changed status.
func BenchmarkMonitorUpdate1000Allocs(b *testing.B) {
	ui := &cli.BasicUi{Writer: io.Discard, ErrorWriter: io.Discard}
	m := &evalMonitor{meta: &Meta{Ui: ui}, length: shortIDLength}
	ev := &api.Evaluation{ID: "e", JobID: "web", Status: api.EvalStatusPending, CreateIndex: 1}
	allocs := make([]*api.AllocationListStub, 1000)
	view := &evalView{allocStatus: map[string]string{}}
	for i := range allocs {
		allocs[i] = &api.AllocationListStub{ID: fmt.Sprintf("%08x", i), NodeID: "n", TaskGroup: "web",
			ClientStatus: api.AllocClientStatusPending, CreateIndex: uint64(2 + i)}
	}
	m.update(view, ev, allocs)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		a := allocs[i%len(allocs)]
		if a.ClientStatus == api.AllocClientStatusPending {
			a.ClientStatus = api.AllocClientStatusRunning
		} else {
			a.ClientStatus = api.AllocClientStatusPending
		}
		m.update(view, ev, allocs)
		i++
	}
}

// BenchmarkFormatJobDiff renders the diff of a job with 50 edited groups
// of 4 tasks, each with a changed config object.
func BenchmarkFormatJobDiff(b *testing.B) {
	d := &api.JobDiff{Type: edited, ID: "big"}
	for g := 0; g < 50; g++ {
		gd := &api.TaskGroupDiff{Type: edited, Name: fmt.Sprintf("g%d", g), Updates: map[string]uint64{"create/destroy update": 3},
			Fields: []*api.FieldDiff{fd(edited, "Count", "3", "4", "forces create")}}
		for t := 0; t < 4; t++ {
			gd.Tasks = append(gd.Tasks, &api.TaskDiff{Type: edited, Name: fmt.Sprintf("t%d", t),
				Annotations: []string{"forces create/destroy update"},
				Objects: []*api.ObjectDiff{od(edited, "Config", []*api.FieldDiff{
					fd(edited, "image", "app:1", "app:2"), fd(none, "args[0]", "-v", "-v"), fd(added, "args[1]", "", "--fast"),
				})}})
		}
		d.TaskGroups = append(d.TaskGroups, gd)
	}
	b.ReportAllocs()
	for b.Loop() {
		formatJobDiff(d, false)
	}
}

func BenchmarkExplainMetric(b *testing.B) {
	m := &api.AllocationMetric{NodesEvaluated: 5000, NodesFiltered: 3000, NodesExhausted: 2000, NodesInPool: 5000,
		NodePool: "default", NodesAvailable: map[string]int{"dc1": 2500, "dc2": 2500},
		ClassFiltered:      map[string]int{"gpu": 1000, "arm": 500},
		ConstraintFiltered: map[string]int{"${attr.kernel.name} = linux": 2000, "missing drivers": 1000},
		ClassExhausted:     map[string]int{"large": 1500, "small": 500},
		DimensionExhausted: map[string]int{"memory": 1500, "cpu": 500}}
	b.ReportAllocs()
	for b.Loop() {
		explainMetric(m)
	}
}
