//go:build unix

package allocrunner

import (
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/opennomad/nomad/client/driver"
	"github.com/opennomad/nomad/client/driver/mock"
	"github.com/opennomad/nomad/client/state"
	"github.com/opennomad/nomad/structs"
)

func newSet(t *testing.T, root string, db state.DB) (*Set, *updates) {
	t.Helper()
	cat, _ := driver.NewCatalog(mock.New())
	u := &updates{last: map[string]*structs.Allocation{}}
	s := NewSet(SetConfig{
		AllocDirRoot: filepath.Join(root, "alloc"), StateDirRoot: filepath.Join(root, "tasks"),
		Drivers: cat, StateDB: db, Updated: u.add,
	})
	return s, u
}

type updates struct {
	mu   sync.Mutex
	last map[string]*structs.Allocation
}

func (u *updates) add(a *structs.Allocation) {
	u.mu.Lock()
	u.last[a.ID] = a
	u.mu.Unlock()
}

func (u *updates) status(id string) string {
	u.mu.Lock()
	defer u.mu.Unlock()
	if a := u.last[id]; a != nil {
		return a.ClientStatus
	}
	return ""
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func serviceAlloc(index uint64) *structs.Allocation {
	a := makeAlloc(structs.JobTypeService, task("t", map[string]interface{}{}))
	a.AllocModifyIndex = index
	return a
}

func TestSetReconcile(t *testing.T) {
	root := t.TempDir()
	s, u := newSet(t, root, state.NewMemDB())
	a, b := serviceAlloc(10), serviceAlloc(11)
	s.Reconcile([]*structs.Allocation{a, b})
	t.Cleanup(func() { destroyAll(s) })
	eventually(t, "both running", func() bool { return u.status(a.ID) == "running" && u.status(b.ID) == "running" })

	// The alloc watch asks which allocations to fetch.
	stale := s.Stale(map[string]uint64{a.ID: 10, b.ID: 20, "new": 1})
	if !slices.Equal(stale, sortedIDs(b.ID, "new")) {
		t.Fatalf("Stale = %v", stale)
	}

	// The servers stop b (a newer AllocModifyIndex).
	stop := b.Copy()
	stop.DesiredStatus = structs.AllocDesiredStatusStop
	stop.AllocModifyIndex = 20
	s.Apply(map[string]uint64{a.ID: 10, b.ID: 20}, []*structs.Allocation{stop})
	eventually(t, "b complete", func() bool { return u.status(b.ID) == "complete" })
	if u.status(a.ID) != "running" {
		t.Fatalf("a is %s", u.status(a.ID))
	}

	// An older version is ignored.
	s.Apply(map[string]uint64{a.ID: 10, b.ID: 20}, []*structs.Allocation{b})

	// b is garbage collected by the servers: its runner is destroyed.
	arB := s.Runner(b.ID)
	s.Apply(map[string]uint64{a.ID: 10}, nil)
	select {
	case <-arB.DestroyedCh():
	case <-time.After(10 * time.Second):
		t.Fatal("b not destroyed")
	}
	if s.Runner(b.ID) != nil || len(s.Runners()) != 1 {
		t.Fatalf("runners %d", len(s.Runners()))
	}

	// A new alloc the servers already stopped is not started.
	dead := serviceAlloc(30)
	dead.DesiredStatus = structs.AllocDesiredStatusStop
	s.Apply(map[string]uint64{a.ID: 10, dead.ID: 30}, []*structs.Allocation{dead})
	if s.Runner(dead.ID) != nil {
		t.Fatal("a stopped alloc was started")
	}
}

// destroyAll destroys every runner of the set and waits for it.
func destroyAll(s *Set) {
	runners := s.Runners()
	s.Reconcile(nil)
	for _, ar := range runners {
		<-ar.DestroyedCh()
	}
}

func sortedIDs(ids ...string) []string {
	slices.Sort(ids)
	return ids
}

func TestSetBadAllocReportedFailed(t *testing.T) {
	s, u := newSet(t, t.TempDir(), state.NewMemDB())
	a := serviceAlloc(1)
	a.TaskGroup = "missing"
	s.Reconcile([]*structs.Allocation{a})
	if u.status(a.ID) != structs.AllocClientStatusFailed || s.Runner(a.ID) != nil {
		t.Fatalf("status %q", u.status(a.ID))
	}
}

// A restarted client restores its allocations from the state store and
// finds their tasks still running.
func TestSetRestore(t *testing.T) {
	root := t.TempDir()
	db := state.NewMemDB()
	s, u := newSet(t, root, db)
	a := serviceAlloc(5)
	s.Reconcile([]*structs.Allocation{a})
	eventually(t, "running", func() bool { return u.status(a.ID) == "running" })
	id := s.Runner(a.ID).TaskRunner("t").Handle().ID()
	s.Shutdown()

	s2, u2 := newSet(t, root, db)
	bad, err := s2.Restore()
	if err != nil || len(bad) != 0 {
		t.Fatalf("Restore: %v %v", bad, err)
	}
	t.Cleanup(func() { destroyAll(s2) })
	eventually(t, "restored running", func() bool { return u2.status(a.ID) == "running" })
	if got := s2.Runner(a.ID).TaskRunner("t").Handle().ID(); got != id {
		t.Fatalf("instance %s, want %s (no second start)", got, id)
	}
	if stale := s2.Stale(map[string]uint64{a.ID: 5}); len(stale) != 0 {
		t.Fatalf("restored alloc considered stale: %v", stale)
	}
}
