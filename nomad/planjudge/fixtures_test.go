package planjudge

import (
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/state/statetest"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// allocMemMB is every test alloc's memory, as statetest.Store.Alloc
// commits it. For the arithmetic in test
// comments, a mock node offers allocs 3900 MHz and 7936 MB (4000 MHz less
// 100 reserved, 8192 MB less 256 reserved).
const allocMemMB = mock.TaskMemoryMB

// testEpoch is the tests' clock reading.
var testEpoch = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// view is the judge's view of the current state of s.
func view(s *statetest.Store) State { return s.Snapshot().SchedulerView() }

// newTestAlloc returns a new, pending alloc of job on node using cpu MHz
// and allocMemMB MB (see mock.SizedAlloc).
func newTestAlloc(job *structs.Job, node *structs.Node, cpu int64) *structs.Allocation {
	return mock.SizedAlloc(job, node, cpu, allocMemMB)
}

// newPlan starts a plan for job under a fresh eval.
func newPlan(job *structs.Job) *mock.PlanBuilder {
	return mock.BuildPlan(mock.Eval(mock.EvalForJob(job)).MakePlan(job))
}

// inPlace returns a copy of a committed alloc as an in-place update using
// cpu MHz.
func inPlace(a *structs.Allocation, cpu int64) *structs.Allocation {
	u := a.Copy()
	for _, tr := range u.AllocatedResources.Tasks {
		tr.Cpu.CpuShares = cpu
	}
	return u
}

// judge judges plan against the committed state alone, serially.
func judge(t *testing.T, s *statetest.Store, plan *structs.Plan) *Verdict {
	t.Helper()
	v, err := Judge(View{State: view(s)}, plan, 1)
	must.NoError(t, err)
	return v
}
