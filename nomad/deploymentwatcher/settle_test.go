package deploymentwatcher

import (
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/scheduler"
	"github.com/opennomad/nomad/structs"
)

// healthyButRunning brings a rig's first roll-out of webJob to the point
// where the watcher has written the verdicts that complete it, and no
// eval: the deployment is still running. It returns the deployment.
func healthyButRunning(t *testing.T, r *rig) *structs.Deployment {
	t.Helper()
	r.c.Register(webJob())
	r.until(t, "every alloc healthy", func() bool {
		d, _ := r.c.Store.LatestDeploymentByJobID(nil, "default", "web")
		return d != nil && d.TaskGroups["web"].HealthyAllocs == 3
	}, nil)
	d := r.latest(t)
	must.Eq(t, structs.DeploymentStatusRunning, d.Status)
	must.SliceEmpty(t, r.raft.Evals(), must.Sprint("the verdicts that complete a roll-out come without an eval"))
	return d
}

// view reads what a pass would know of d now.
func (r *rig) view(t *testing.T, d *structs.Deployment) *view {
	t.Helper()
	v, err := readView(&r.c.Store.Snapshot().StateStore, nil, d)
	must.NoError(t, err)
	return v
}

func TestSettle_OnlySucceeds(t *testing.T) {
	for _, tc := range []struct {
		name string
		// after edits the cluster once every verdict is in.
		after func(r *rig)
		want  bool
	}{
		{name: "every alloc healthy and running", want: true},
		{
			name: "an alloc's node went down: the scheduler replaces the lost alloc",
			after: func(r *rig) {
				a := r.c.LiveAllocs(r.c.Job("default", "web"))[0]
				r.c.Write(func(tx *state.Txn) error {
					return tx.UpdateNodeStatus(a.NodeID, structs.NodeStatusDown, r.c.Now().UnixNano(), nil)
				})
			},
		},
		{
			name: "an alloc was stopped on a draining node: the scheduler migrates it",
			after: func(r *rig) {
				a := r.c.LiveAllocs(r.c.Job("default", "web"))[0]
				r.c.Drain(a.NodeID, time.Hour, false)
				r.c.MarkMigrate(structs.EvalTriggerNodeDrain, a.ID)
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t)
			d := healthyButRunning(t, r)
			if tc.after != nil {
				tc.after(r)
			}
			snap := r.c.Store.Snapshot()
			must.Eq(t, tc.want, onlySucceeds(scheduler.Builtin(), &scheduler.Scratch{}, snap, r.view(t, d), r.c.Now()))
		})
	}
}

func TestSettle_NextPassMarksSuccessWithoutEval(t *testing.T) {
	r := newRig(t)
	d := healthyButRunning(t, r)
	r.pass(t)
	got := r.deployment(t, d.ID)
	must.Eq(t, structs.DeploymentStatusSuccessful, got.Status)
	must.Eq(t, structs.DeploymentStatusDescriptionSuccessful, got.StatusDescription)
	must.True(t, r.c.Job("default", "web").Stable, must.Sprint("the success marks the job version stable"))
	must.SliceEmpty(t, r.raft.Evals())
	// The success rode in a health entry of its own, with no verdicts.
	updates := r.raft.HealthUpdates()
	last := updates[len(updates)-1]
	must.SliceEmpty(t, last.HealthyAllocationIDs)
	must.Eq(t, structs.DeploymentStatusSuccessful, last.DeploymentUpdate.Status)
	must.Nil(t, last.Eval)

	// Nothing is left to decide.
	r.pass(t)
	must.Len(t, len(updates), r.raft.HealthUpdates())
	must.SliceEmpty(t, r.raft.Evals())
}

func TestSettle_DryRunSaysNoAsksForTheEval(t *testing.T) {
	r := newRig(t)
	d := healthyButRunning(t, r)
	a := r.c.LiveAllocs(r.c.Job("default", "web"))[0]
	r.c.Write(func(tx *state.Txn) error {
		return tx.UpdateNodeStatus(a.NodeID, structs.NodeStatusDown, r.c.Now().UnixNano(), nil)
	})
	r.pass(t)
	must.Eq(t, structs.DeploymentStatusRunning, r.deployment(t, d.ID).Status)
	evals := r.raft.Evals()
	must.Len(t, 1, evals)
	must.Eq(t, d.ID, evals[0].DeploymentID)
}

func TestSettle_WithoutSchedulersEveryVerdictBringsAnEval(t *testing.T) {
	r := newRigWith(t, nil)
	r.c.Register(webJob())
	r.until(t, "every alloc healthy", func() bool {
		d, _ := r.c.Store.LatestDeploymentByJobID(nil, "default", "web")
		return d != nil && d.TaskGroups["web"].HealthyAllocs == 3
	}, nil)
	must.Len(t, 1, r.raft.Evals())
}
