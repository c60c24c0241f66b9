package client

import (
	"fmt"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// serviceJob is a mock_driver job with a group service "web" on its
// "http" port (one http check) and a task service "web-task".
func serviceJob() *structs.Job {
	j := mock.Job(mock.Count(1), mock.TaskDriver("mock_driver"))
	tg := j.TaskGroups[0]
	// run_for: a mock_driver task without it exits at once.
	tg.Tasks[0].Config = map[string]interface{}{"run_for": "1h"}
	tg.Services = []*structs.Service{{Name: "web", PortLabel: "http", Provider: structs.ServiceProviderNomad,
		Tags: []string{"${NOMAD_ALLOC_INDEX}", "v1"}}}
	tg.Tasks[0].Services = []*structs.Service{{Name: "web-task", PortLabel: "http",
		Provider: structs.ServiceProviderNomad}}
	return j
}

func registrationsOf(t *testing.T, s *nomad.Server, allocID string) []*structs.ServiceRegistration {
	t.Helper()
	regs, err := s.State().ServiceRegistrationsByAllocID(nil, allocID)
	must.NoError(t, err)
	return regs
}

// A running alloc's group and task services are registered with the
// port the alloc was given; stopping the alloc removes them.
func TestClient_RegistersServicesOfRunningAllocs(t *testing.T) {
	s := testServer(t, nil)
	w := &twin{inner: s}
	c := testClient(t, testClientConfig(t, local(w)))
	eventually(t, "node ready", func() bool { return nodeStatus(t, s, c.NodeID()) == structs.NodeStatusReady })

	job := registerJob(t, s, serviceJob())
	alloc := place(t, s, job, c.NodeID(), 1)[0]
	eventually(t, "two registrations", func() bool { return len(registrationsOf(t, s, alloc.ID)) == 2 })

	byName := map[string]*structs.ServiceRegistration{}
	for _, r := range registrationsOf(t, s, alloc.ID) {
		byName[r.ServiceName] = r
	}
	web := byName["web"]
	must.NotNil(t, web)
	must.Eq(t, fmt.Sprintf("_nomad-task-%s-group-web-web-http", alloc.ID), web.ID)
	must.Eq(t, mock.NodeIP, web.Address)
	must.Eq(t, 23456, web.Port)
	must.Eq(t, []string{"0", "v1"}, web.Tags)
	must.Eq(t, c.NodeID(), web.NodeID)
	must.Eq(t, job.ID, web.JobID)
	task := byName["web-task"]
	must.NotNil(t, task)
	must.Eq(t, fmt.Sprintf("_nomad-task-%s-web-web-task-http", alloc.ID), task.ID)

	stop(t, s, alloc.ID)
	eventually(t, "registrations removed", func() bool { return len(registrationsOf(t, s, alloc.ID)) == 0 })
	// The client removed them itself, before its alloc was terminal.
	must.SliceNotEmpty(t, w.callsOf("ServiceRegistration.DeleteByAllocIDs"))
}

// A failed registration is tried again.
func TestClient_RetriesFailedServiceRegistration(t *testing.T) {
	s := testServer(t, nil)
	w := &twin{inner: s}
	w.setFail(func(method string, n int) error {
		if method == "ServiceRegistration.Upsert" && n < 2 {
			return fmt.Errorf("%s: %w", method, ErrServerUnreachable)
		}
		return nil
	})
	c := testClient(t, testClientConfig(t, local(w)))
	eventually(t, "node ready", func() bool { return nodeStatus(t, s, c.NodeID()) == structs.NodeStatusReady })

	job := registerJob(t, s, serviceJob())
	alloc := place(t, s, job, c.NodeID(), 1)[0]
	eventually(t, "registered after failures", func() bool { return len(registrationsOf(t, s, alloc.ID)) == 2 })
	must.GreaterEq(t, 3, len(w.callsOf("ServiceRegistration.Upsert")))
}

func TestWantedServices(t *testing.T) {
	node := mock.Node()
	job := serviceJob()
	base := mock.Alloc(mock.ForJob(job, 0), mock.OnNode(node))
	running := map[string]*structs.TaskState{"web": {State: structs.TaskStateRunning}}
	cases := []struct {
		name  string
		edit  func(a *structs.Allocation)
		names []string
	}{
		{"pending", func(a *structs.Allocation) {}, nil},
		{"running", func(a *structs.Allocation) {
			a.ClientStatus, a.TaskStates = structs.AllocClientStatusRunning, running
		}, []string{"web", "web-task"}},
		{"running, task not yet", func(a *structs.Allocation) {
			a.ClientStatus = structs.AllocClientStatusRunning
		}, []string{"web"}},
		{"stopping", func(a *structs.Allocation) {
			a.ClientStatus, a.TaskStates = structs.AllocClientStatusRunning, running
			a.DesiredStatus = structs.AllocDesiredStatusStop
		}, nil},
		{"complete", func(a *structs.Allocation) { a.ClientStatus = structs.AllocClientStatusComplete }, nil},
		{"consul service skipped", func(a *structs.Allocation) {
			a.ClientStatus = structs.AllocClientStatusRunning
			a.Job = a.Job.Copy()
			a.Job.TaskGroups[0].Services[0].Provider = structs.ServiceProviderConsul
		}, nil},
		{"canary tags", func(a *structs.Allocation) {
			a.ClientStatus = structs.AllocClientStatusRunning
			a.DeploymentStatus = &structs.AllocDeploymentStatus{Canary: true}
			a.Job = a.Job.Copy()
			a.Job.TaskGroups[0].Services[0].CanaryTags = []string{"canary"}
		}, []string{"web"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := base.Copy()
			tc.edit(a)
			got, _ := wantedServices(a, node, "global")
			var names []string
			for _, r := range got {
				names = append(names, r.ServiceName)
				must.NoError(t, r.Validate())
			}
			must.SliceContainsAll(t, tc.names, names)
			if tc.name == "canary tags" {
				for _, r := range got {
					must.Eq(t, []string{"canary"}, r.Tags)
				}
			}
		})
	}
}

// An in-place update that drops a service removes that registration
// alone, by ID.
func TestClient_InPlaceUpdateRemovesDroppedService(t *testing.T) {
	s := testServer(t, nil)
	w := &twin{inner: s}
	c := testClient(t, testClientConfig(t, local(w)))
	eventually(t, "node ready", func() bool { return nodeStatus(t, s, c.NodeID()) == structs.NodeStatusReady })

	job := registerJob(t, s, serviceJob())
	alloc := place(t, s, job, c.NodeID(), 1)[0]
	eventually(t, "two registrations", func() bool { return len(registrationsOf(t, s, alloc.ID)) == 2 })

	next := job.Copy()
	next.TaskGroups[0].Tasks[0].Services = nil
	next = registerJob(t, s, next)
	updated := alloc.Copy()
	updated.Job = next
	commitPlan(t, s, &structs.ApplyPlanResultsRequest{
		AllocUpdateRequest: structs.AllocUpdateRequest{AllocsUpdated: []*structs.Allocation{updated}, Job: next},
	})
	eventually(t, "the task service removed", func() bool {
		regs := registrationsOf(t, s, alloc.ID)
		return len(regs) == 1 && regs[0].ServiceName == "web"
	})
	must.SliceNotEmpty(t, w.callsOf("ServiceRegistration.DeleteByID"))
}
