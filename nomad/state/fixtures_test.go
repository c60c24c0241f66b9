package state

import (
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

// Small builders for test objects; each returns a fresh, valid object
// that a test edits before writing.

func testStore(t testing.TB) *StateStore {
	t.Helper()
	s, err := NewStateStore(nil)
	must.NoError(t, err)
	return s
}

func mockNode() *structs.Node {
	n := &structs.Node{
		ID:         structs.GenerateUUID(),
		SecretID:   structs.GenerateUUID(),
		Datacenter: "dc1",
		Name:       "node",
		NodePool:   structs.NodePoolDefault,
		Attributes: map[string]string{"kernel.name": "linux", "unique.network.ip-address": "10.0.0.1"},
		NodeResources: &structs.NodeResources{
			Cpu:    structs.NodeCpuResources{CpuShares: 4000},
			Memory: structs.NodeMemoryResources{MemoryMB: 8192},
			Disk:   structs.NodeDiskResources{DiskMB: 100 * 1024},
		},
		Drivers: map[string]*structs.DriverInfo{
			"exec": {Detected: true, Healthy: true},
		},
		Status:                structs.NodeStatusReady,
		SchedulingEligibility: structs.NodeSchedulingEligible,
		StatusUpdatedAt:       1_700_000_000,
	}
	n.ComputeClass()
	return n
}

func mockJob() *structs.Job {
	return &structs.Job{
		Region:      structs.DefaultRegion,
		Namespace:   structs.DefaultNamespace,
		ID:          "web-" + structs.ShortID(structs.GenerateUUID()),
		Name:        "web",
		Type:        structs.JobTypeService,
		Priority:    50,
		Datacenters: []string{"dc1"},
		NodePool:    structs.NodePoolDefault,
		TaskGroups: []*structs.TaskGroup{{
			Name:  "web",
			Count: 2,
			Tasks: []*structs.Task{{
				Name:      "server",
				Driver:    "exec",
				Config:    map[string]interface{}{"command": "/bin/sleep"},
				Resources: &structs.Resources{CPU: 500, MemoryMB: 256},
			}},
		}},
		SubmitTime: 1_700_000_000_000_000_000,
	}
}

func mockEval(job *structs.Job) *structs.Evaluation {
	return &structs.Evaluation{
		ID:          structs.GenerateUUID(),
		Namespace:   job.Namespace,
		Priority:    job.Priority,
		Type:        job.Type,
		TriggeredBy: structs.EvalTriggerJobRegister,
		JobID:       job.ID,
		Status:      structs.EvalStatusPending,
		CreateTime:  1_700_000_000_000_000_000,
		ModifyTime:  1_700_000_000_000_000_000,
	}
}

func mockAlloc(job *structs.Job, node *structs.Node) *structs.Allocation {
	return &structs.Allocation{
		ID:        structs.GenerateUUID(),
		Namespace: job.Namespace,
		EvalID:    structs.GenerateUUID(),
		Name:      structs.AllocName(job.ID, "web", 0),
		NodeID:    node.ID,
		NodeName:  node.Name,
		JobID:     job.ID,
		Job:       job,
		TaskGroup: "web",
		AllocatedResources: &structs.AllocatedResources{
			Tasks: map[string]*structs.AllocatedTaskResources{
				"server": {
					Cpu:    structs.AllocatedCpuResources{CpuShares: 500},
					Memory: structs.AllocatedMemoryResources{MemoryMB: 256},
				},
			},
			Shared: structs.AllocatedSharedResources{DiskMB: 150},
		},
		DesiredStatus: structs.AllocDesiredStatusRun,
		ClientStatus:  structs.AllocClientStatusPending,
		CreateTime:    1_700_000_000_000_000_000,
		ModifyTime:    1_700_000_000_000_000_000,
	}
}

func mockDeployment(job *structs.Job) *structs.Deployment {
	d := structs.NewDeployment(job, job.Priority, time.Unix(1_700_000_000, 0).UTC())
	d.TaskGroups["web"] = &structs.DeploymentState{DesiredTotal: 2}
	return d
}

// registered writes job at index and returns the stored job.
func registered(t testing.TB, s *StateStore, index uint64, job *structs.Job) *structs.Job {
	t.Helper()
	must.NoError(t, s.UpsertJob(index, job))
	out, err := s.JobByID(nil, job.Namespace, job.ID)
	must.NoError(t, err)
	must.NotNil(t, out)
	return out
}

func mustIndex(t testing.TB, s *StateStore, table string) uint64 {
	t.Helper()
	idx, err := s.Index(table)
	must.NoError(t, err)
	return idx
}
