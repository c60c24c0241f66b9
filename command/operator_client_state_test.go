package command

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/client/driver"
	"github.com/opennomad/nomad/client/state"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// TestOperatorClientState dumps a client state directory written by the
// client's own store: allocations with their deployment status, tasks
// with a running instance with their handle and the driver's state.
func TestOperatorClientState(t *testing.T) {
	dataDir := t.TempDir()
	db, err := state.NewFileDB(filepath.Join(dataDir, "client", "state"))
	must.NoError(t, err)
	job := mock.Job()
	alloc := mock.Alloc(mock.ForJob(job, 0))
	alloc.DeploymentStatus = &structs.AllocDeploymentStatus{Healthy: new(true)}
	must.NoError(t, db.PutAllocation(alloc))
	task := job.TaskGroups[0].Tasks[0].Name
	must.NoError(t, db.PutTaskRunnerState(alloc.ID, task, &state.TaskRunnerState{
		TaskState: &structs.TaskState{State: structs.TaskStateRunning},
		Handle:    &driver.HandleState{Driver: "raw_exec", TaskID: "t1", StartedAt: time.Unix(100, 0), Data: []byte(`{"pid":42}`)},
	}))
	idle := mock.Alloc(mock.ForJob(job, 1))
	must.NoError(t, db.PutAllocation(idle))

	for _, dir := range []string{dataDir, filepath.Join(dataDir, "client")} {
		res := runCommand(t, "http://127.0.0.1:0", runOpts{}, "operator", "client-state", dir)
		must.Eq(t, 0, res.code, must.Sprint(res.stderr))
		var got struct {
			Allocations map[string]struct {
				Alloc        struct{ ID, JobID string }
				DeployStatus *struct{ Healthy *bool }
				Tasks        map[string]struct {
					LocalState struct {
						TaskHandle struct{ Driver, TaskID string }
					}
					RemoteState struct{ State string }
					DriverState map[string]any
				}
			}
		}
		must.NoError(t, json.Unmarshal([]byte(res.stdout), &got))
		must.MapLen(t, 2, got.Allocations)
		a := got.Allocations[alloc.ID]
		must.Eq(t, job.ID, a.Alloc.JobID)
		must.True(t, *a.DeployStatus.Healthy)
		must.MapLen(t, 1, a.Tasks)
		must.Eq(t, "raw_exec", a.Tasks[task].LocalState.TaskHandle.Driver)
		must.Eq(t, structs.TaskStateRunning, a.Tasks[task].RemoteState.State)
		must.Eq(t, map[string]any{"pid": float64(42)}, a.Tasks[task].DriverState)
		must.MapEmpty(t, got.Allocations[idle.ID].Tasks, must.Sprint("tasks without an instance are left out"))
	}

	empty := t.TempDir()
	res := runCommand(t, "http://127.0.0.1:0", runOpts{}, "operator", "client-state", empty)
	must.Eq(t, 1, res.code)
	must.StrContains(t, res.stderr, "no client state under")
	entries, _ := os.ReadDir(empty)
	must.SliceEmpty(t, entries, must.Sprint("nothing is created"))
	res = runCommand(t, "http://127.0.0.1:0", runOpts{}, "operator", "client-state")
	must.Eq(t, 1, res.code)
	must.StrContains(t, res.stderr, "This command takes one argument")
}
