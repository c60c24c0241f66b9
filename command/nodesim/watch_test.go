package nodesim

import (
	"testing"
	"time"

	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"

	"github.com/opennomad/nomad/structs"
)

// refuse is a server that is never called by these tests.
type refuse struct{}

func (refuse) RPC(string, interface{}, interface{}) error { return ErrServerUnreachable }

// allocFor builds an allocation of a one-group, one-task job of type typ
// with update block u (none when nil), in a deployment when deployed.
func allocFor(typ string, u *structs.UpdateStrategy, deployed bool) *structs.Allocation {
	job := &structs.Job{ID: "j", Type: typ, TaskGroups: []*structs.TaskGroup{{
		Name: "g", Update: u, Tasks: []*structs.Task{{Name: "t1"}, {Name: "t2"}},
	}}}
	a := &structs.Allocation{
		ID: structs.GenerateUUID(), Job: job, TaskGroup: "g", AllocModifyIndex: 5,
		DesiredStatus: structs.AllocDesiredStatusRun, ClientStatus: structs.AllocClientStatusPending,
	}
	if deployed {
		a.DeploymentID = "d"
	}
	return a
}

func TestNewSimAlloc(t *testing.T) {
	cases := []struct {
		name        string
		alloc       *structs.Allocation
		batch       bool
		healthAfter time.Duration
	}{
		{"service without deployment", allocFor(structs.JobTypeService, nil, false), false, -1},
		{"deployment: healthy after min_healthy_time",
			allocFor(structs.JobTypeService, &structs.UpdateStrategy{HealthCheck: "checks", MinHealthyTime: 10 * time.Second}, true), false, 10 * time.Second},
		{"deployment with no minimum: healthy at once",
			allocFor(structs.JobTypeService, &structs.UpdateStrategy{HealthCheck: "task_states"}, true), false, 0},
		{"manual health check: never", allocFor(structs.JobTypeService, &structs.UpdateStrategy{HealthCheck: "manual"}, true), false, -1},
		{"update block but no deployment", allocFor(structs.JobTypeService, &structs.UpdateStrategy{MinHealthyTime: time.Second}, false), false, -1},
		{"batch", allocFor(structs.JobTypeBatch, nil, false), true, -1},
		{"sysbatch", allocFor(structs.JobTypeSysBatch, nil, false), true, -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sa := newSimAlloc(c.alloc)
			must.Eq(t, c.batch, sa.batch)
			must.Eq(t, c.healthAfter, sa.healthAfter)
			must.Eq(t, []string{"t1", "t2"}, sa.tasks)
		})
	}
}

func TestHandle_ReportsWhatAClientWould(t *testing.T) {
	cfg := DefaultConfig()
	cfg.BatchRunTime = 20 * time.Millisecond
	s, err := New(cfg, []Server{{Name: "none", Conn: refuse{}}})
	must.NoError(t, err)
	n := s.nodes[0]
	pending := func(id string) *structs.Allocation {
		s.reports.mu.Lock()
		defer s.reports.mu.Unlock()
		return s.reports.pending[id]
	}

	// A service alloc in a deployment runs at once and turns healthy
	// after its min_healthy_time.
	svc := allocFor(structs.JobTypeService, &structs.UpdateStrategy{HealthCheck: "checks", MinHealthyTime: 30 * time.Millisecond}, true)
	n.mu.Lock()
	s.handle(n, svc, time.Now())
	n.mu.Unlock()
	u := pending(svc.ID)
	must.Eq(t, structs.AllocClientStatusRunning, u.ClientStatus)
	must.Eq(t, n.id, u.NodeID)
	must.Nil(t, u.DeploymentStatus)
	must.MapLen(t, 2, u.TaskStates)
	must.Eq(t, structs.TaskStateRunning, u.TaskStates["t1"].State)
	s.reports.take()
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		u := pending(svc.ID)
		return u != nil && u.DeploymentStatus.IsHealthy() && u.ClientStatus == structs.AllocClientStatusRunning
	}), wait.Timeout(5*time.Second), wait.Gap(5*time.Millisecond)))

	// Seen again unchanged: nothing new to report.
	s.reports.take()
	n.mu.Lock()
	s.handle(n, svc, time.Now())
	n.mu.Unlock()
	must.Nil(t, pending(svc.ID))

	// The servers stop it: complete, tasks dead.
	stopped := *svc
	stopped.DesiredStatus = structs.AllocDesiredStatusStop
	stopped.AllocModifyIndex = 9
	n.mu.Lock()
	s.handle(n, &stopped, time.Now())
	n.mu.Unlock()
	u = pending(svc.ID)
	must.Eq(t, structs.AllocClientStatusComplete, u.ClientStatus)
	must.Eq(t, structs.TaskStateDead, u.TaskStates["t2"].State)

	// A batch alloc completes by itself after BatchRunTime.
	batch := allocFor(structs.JobTypeBatch, nil, false)
	n.mu.Lock()
	s.handle(n, batch, time.Now())
	n.mu.Unlock()
	must.Eq(t, structs.AllocClientStatusRunning, pending(batch.ID).ClientStatus)
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		u := pending(batch.ID)
		return u != nil && u.ClientStatus == structs.AllocClientStatusComplete
	}), wait.Timeout(5*time.Second), wait.Gap(5*time.Millisecond)))

	st := s.Stats()
	must.Eq(t, int64(2), st.AllocsSeen)
	must.Eq(t, int64(2), st.AllocsRunning)
	must.Eq(t, int64(2), st.AllocsComplete)
	must.Eq(t, int64(1), st.AllocsHealthy)
}
