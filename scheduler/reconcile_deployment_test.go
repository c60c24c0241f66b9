package scheduler

import (
	"github.com/opennomad/nomad/nomad/state"
	"testing"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// The deployment the reconciler reads is the stored one, shared with the
// deployment watcher and every other reader. Whatever the reconciler
// changes in it goes into the plan as a changed copy (runReconcile fails
// the test on any write into its inputs).
func TestReconcileChangesACopyOfTheDeployment(t *testing.T) {
	node := mock.Node(mock.Unreserved())
	cases := []struct {
		name string
		// setup returns the job (version 1), its allocs and the stored
		// deployment of version 1.
		setup func() (*structs.Job, []*structs.Allocation, *structs.Deployment)
		// check inspects the deployment the plan writes; nil means the
		// plan writes none.
		check func(t *testing.T, stored, written *structs.Deployment)
	}{
		{
			name: "canaries asked of an existing deployment",
			setup: func() (*structs.Job, []*structs.Allocation, *structs.Deployment) {
				old := versioned(mock.Job(mock.Count(10), mock.NoPorts()), 0, 10)
				old.TaskGroups[0].Count = 3
				old.TaskGroups[0].Update = &structs.UpdateStrategy{MaxParallel: 1, Canary: 2}
				job := versioned(old.Copy(), 1, 20)
				job.TaskGroups[0].Tasks[0].Env["FOO"] = "baz"
				d := structs.NewDeployment(job, 50, testNow)
				d.TaskGroups["web"] = &structs.DeploymentState{DesiredTotal: 3}
				return job, allocsOn(old, node, 3), d
			},
			check: func(t *testing.T, stored, written *structs.Deployment) {
				if written == nil || written == stored || written.ID != stored.ID {
					t.Fatalf("want a copy of deployment %s, got %p (stored %p)", stored.ID, written, stored)
				}
				if got := written.TaskGroups["web"].DesiredCanaries; got != 2 {
					t.Errorf("DesiredCanaries %d, want 2", got)
				}
			},
		},
		{
			name: "a group joining an existing deployment",
			setup: func() (*structs.Job, []*structs.Allocation, *structs.Deployment) {
				job := versioned(mock.Job(mock.Count(10), mock.NoPorts()), 1, 20)
				job.TaskGroups[0].Count = 2
				job.TaskGroups[0].Update = &structs.UpdateStrategy{MaxParallel: 1}
				api := job.TaskGroups[0].Copy()
				api.Name, api.Count = "api", 3
				job.TaskGroups = append(job.TaskGroups, api)
				d := structs.NewDeployment(job, 50, testNow)
				d.TaskGroups["web"] = &structs.DeploymentState{DesiredTotal: 2}
				return job, allocsOn(job, node, 2), d
			},
			check: func(t *testing.T, stored, written *structs.Deployment) {
				if written == nil || written == stored {
					t.Fatalf("want a copy of deployment %s", stored.ID)
				}
				ds, ok := written.TaskGroups["api"]
				if !ok || ds.DesiredTotal != 3 {
					t.Fatalf("group api: %+v (present %v), want DesiredTotal 3", ds, ok)
				}
				if written.TaskGroups["web"].DesiredTotal != 2 {
					t.Errorf("group web changed: %+v", written.TaskGroups["web"])
				}
			},
		},
		{
			name: "nothing to change, nothing written",
			setup: func() (*structs.Job, []*structs.Allocation, *structs.Deployment) {
				old := versioned(mock.Job(mock.Count(10), mock.NoPorts()), 0, 10)
				old.TaskGroups[0].Count = 3
				old.TaskGroups[0].Update = &structs.UpdateStrategy{MaxParallel: 1, Canary: 1}
				job := versioned(old.Copy(), 1, 20)
				job.TaskGroups[0].Tasks[0].Env["FOO"] = "baz"
				d := structs.NewDeployment(job, 50, testNow)
				d.TaskGroups["web"] = &structs.DeploymentState{DesiredTotal: 3, DesiredCanaries: 1}
				return job, allocsOn(old, node, 3), d
			},
			check: func(t *testing.T, stored, written *structs.Deployment) {
				if written != nil {
					t.Fatalf("an unchanged deployment is not written: %+v", written)
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job, allocs, d := tc.setup()
			r := runReconcile(t, job, allocs, nil, d)
			tc.check(t, d, r.deployment)
			if r.deployment != nil && r.currentDeployment != r.deployment {
				t.Errorf("placements must join the written copy")
			}
		})
	}
}

// TestServiceWritesDeploymentChangesThroughThePlan runs the scheduler on
// a stored deployment that must change: the stored object stays as it
// was (the harness fails the test otherwise) and the change lands in
// state through the plan.
func TestServiceWritesDeploymentChangesThroughThePlan(t *testing.T) {
	h := NewHarness(t)
	nodes := addNodes(h, 3)
	job := mock.Job(mock.Count(10), mock.NoPorts())
	job.TaskGroups[0].Count = 3
	job.TaskGroups[0].Update = &structs.UpdateStrategy{MaxParallel: 1, Canary: 1}
	h.UpsertJob(job)
	for i, n := range nodes {
		h.UpsertAllocs(mock.Alloc(mock.ForJob(job, i), mock.OnNode(n), mock.ClientStatus(structs.AllocClientStatusRunning)))
	}
	update := job.Copy()
	update.TaskGroups[0].Tasks[0].Env["V"] = "2"
	h.UpsertJob(update)
	update, _ = h.Snapshot().JobByID(update.Namespace, update.ID)
	d := structs.NewDeployment(update, 50, h.Now)
	d.TaskGroups["web"] = &structs.DeploymentState{DesiredTotal: 3}
	h.write(func(tx *state.Txn) error { return tx.UpsertDeployment(d) })

	if err := h.Process(mock.Eval(mock.EvalForJob(update), mock.TriggeredBy(structs.EvalTriggerDeploymentWatcher))); err != nil {
		t.Fatal(err)
	}
	stored, _ := h.Snapshot().DeploymentByID(d.ID)
	ds := stored.TaskGroups["web"]
	if ds.DesiredCanaries != 1 || len(ds.PlacedCanaries) != 1 {
		t.Fatalf("stored deployment after the plan: %+v", ds)
	}
	if c := h.alloc(ds.PlacedCanaries[0]); c == nil || c.DeploymentID != d.ID || !c.DeploymentStatus.Canary {
		t.Fatalf("canary %+v", c)
	}
}
