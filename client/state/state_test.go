package state

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opennomad/nomad/client/driver"
	"github.com/opennomad/nomad/structs"
)

func sampleAlloc(id string) *structs.Allocation {
	return &structs.Allocation{
		ID: id, Name: "j.g[0]", JobID: "j", TaskGroup: "g", DesiredStatus: structs.AllocDesiredStatusRun,
		Job: &structs.Job{ID: "j", TaskGroups: []*structs.TaskGroup{{Name: "g", Tasks: []*structs.Task{{
			Name: "t", Driver: "mock_driver",
			Config: map[string]interface{}{"run_for": "5s", "exit_code": int64(3), "args": []interface{}{"a", "b"}},
		}}}}},
	}
}

// Both implementations honour the same contract.
func TestDBContract(t *testing.T) {
	impls := map[string]func(t *testing.T) DB{
		"mem": func(t *testing.T) DB { return NewMemDB() },
		"file": func(t *testing.T) DB {
			db, err := NewFileDB(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			return db
		},
	}
	for name, mk := range impls {
		t.Run(name, func(t *testing.T) {
			db := mk(t)
			defer db.Close()
			if err := db.PutAllocation(sampleAlloc("a1")); err != nil {
				t.Fatal(err)
			}
			db.PutAllocation(sampleAlloc("a2"))
			now := time.Now().UTC().Round(0)
			ts := &TaskRunnerState{
				TaskState: &structs.TaskState{State: structs.TaskStateRunning, Restarts: 2, StartedAt: now,
					Events: []*structs.TaskEvent{structs.NewTaskEvent(structs.TaskStarted, now)}},
				Handle: &driver.HandleState{Driver: "mock_driver", TaskID: "a1/t/x", StartedAt: now, Data: []byte(`{"k":1}`)},
			}
			if err := db.PutTaskRunnerState("a1", "t", ts); err != nil {
				t.Fatal(err)
			}
			ts.TaskState.Restarts = 99 // the store must hold a copy

			allocs, bad, err := db.GetAllAllocations()
			if err != nil || len(bad) != 0 || len(allocs) != 2 {
				t.Fatalf("GetAllAllocations = %d allocs, %v, %v", len(allocs), bad, err)
			}
			var a1 *structs.Allocation
			for _, a := range allocs {
				if a.ID == "a1" {
					a1 = a
				}
			}
			cfg := a1.Job.TaskGroups[0].Tasks[0].Config
			if cfg["run_for"] != "5s" || cfg["exit_code"] != int64(3) {
				t.Fatalf("driver config came back as %#v", cfg)
			}
			got, err := db.GetTaskRunnerState("a1", "t")
			if err != nil || got == nil {
				t.Fatalf("GetTaskRunnerState = %v, %v", got, err)
			}
			if got.TaskState.Restarts != 2 || !got.TaskState.StartedAt.Equal(now) || got.Handle.TaskID != "a1/t/x" ||
				string(got.Handle.Data) != `{"k":1}` || len(got.TaskState.Events) != 1 {
				t.Fatalf("task state came back as %+v / %+v", got.TaskState, got.Handle)
			}
			if none, err := db.GetTaskRunnerState("a1", "other"); none != nil || err != nil {
				t.Fatalf("missing task = %v, %v", none, err)
			}

			if err := db.DeleteAllocation("a1"); err != nil {
				t.Fatal(err)
			}
			// A task runner winding down must not resurrect it.
			db.PutTaskRunnerState("a1", "t", ts)
			db.PutAllocation(sampleAlloc("a1"))
			allocs, _, _ = db.GetAllAllocations()
			if len(allocs) != 1 || allocs[0].ID != "a2" {
				t.Fatalf("after delete: %d allocs", len(allocs))
			}
			if got, _ := db.GetTaskRunnerState("a1", "t"); got != nil {
				t.Fatal("task state survived its alloc's deletion")
			}
		})
	}
}

func TestFileDBSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	db, _ := NewFileDB(dir)
	db.PutAllocation(sampleAlloc("a1"))
	db.Close()
	// A corrupt alloc is reported, not fatal.
	os.MkdirAll(filepath.Join(dir, "allocs", "broken"), 0o700)
	os.WriteFile(filepath.Join(dir, "allocs", "broken", allocFile), []byte{0xc1}, 0o600)

	db2, _ := NewFileDB(dir)
	allocs, bad, err := db2.GetAllAllocations()
	if err != nil || len(allocs) != 1 || allocs[0].ID != "a1" {
		t.Fatalf("reopened: %v, %v", allocs, err)
	}
	if bad["broken"] == nil {
		t.Fatalf("corrupt alloc not reported: %v", bad)
	}
}

func TestFileDBRejectsBadNames(t *testing.T) {
	db, _ := NewFileDB(t.TempDir())
	if err := db.PutAllocation(&structs.Allocation{ID: "../x"}); err == nil {
		t.Error("alloc ID with a path accepted")
	}
	if err := db.PutTaskRunnerState("a", "../t", &TaskRunnerState{}); err == nil {
		t.Error("task name with a path accepted")
	}
}

func TestNodeIdentity(t *testing.T) {
	dir := t.TempDir()
	first, err := LoadOrCreateNodeIdentity(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !isUUID(first.ID) || !isUUID(first.SecretID) || first.ID == first.SecretID {
		t.Fatalf("identity = %+v", first)
	}
	again, err := LoadOrCreateNodeIdentity(dir)
	if err != nil || again != first {
		t.Fatalf("second load = %+v, %v; want the same identity", again, err)
	}
	fi, _ := os.Stat(filepath.Join(dir, nodeSecretFile))
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("secret file mode %v", fi.Mode().Perm())
	}
	os.WriteFile(filepath.Join(dir, nodeIDFile), []byte("garbage"), 0o600)
	if _, err := LoadOrCreateNodeIdentity(dir); err == nil || !strings.Contains(err.Error(), "not a UUID") {
		t.Fatalf("corrupt id file: %v", err)
	}
}
