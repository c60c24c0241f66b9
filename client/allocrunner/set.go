package allocrunner

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/opennomad/nomad/client/driver"
	"github.com/opennomad/nomad/client/state"
	"github.com/opennomad/nomad/client/taskrunner"
	"github.com/opennomad/nomad/structs"
)

// SetConfig is what every alloc runner of a client shares.
type SetConfig struct {
	AllocDirRoot   string
	StateDirRoot   string
	Drivers        driver.Catalog
	HostEnv        map[string]string
	StateDB        state.DB
	MaxKillTimeout time.Duration
	Logger         hclog.Logger
	Clock          taskrunner.Clock
	// Node returns the client's current node, for interpolation in new
	// tasks; nil is allowed.
	Node func() *structs.Node
	// Updated receives every alloc runner's status changes (see
	// Config.Updated). It is called from many goroutines.
	Updated func(*structs.Allocation)
}

// Set holds the alloc runners of one client and brings them in line with
// the allocations the servers assign to the node. A client's alloc watch
// loop calls Stale to learn which allocations to fetch and Apply with
// what it fetched; tests and simple callers use Reconcile with the full
// list. Methods are safe for concurrent use.
type Set struct {
	cfg    SetConfig
	logger hclog.Logger

	// applyMu serialises Apply so one allocation never gets two runners.
	applyMu sync.Mutex

	mu      sync.Mutex
	runners map[string]*AllocRunner
	// index is the AllocModifyIndex of every allocation the set has seen
	// and still hears of from the servers: those with a runner, those it
	// declined to run (already terminal) and those collected.
	index map[string]uint64
	// collected holds allocations whose runners Collect destroyed while
	// the servers still list them; they are never run again.
	collected map[string]bool
}

// NewSet returns an empty set.
func NewSet(cfg SetConfig) *Set {
	logger := cfg.Logger
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	if cfg.Node == nil {
		cfg.Node = func() *structs.Node { return nil }
	}
	return &Set{cfg: cfg, logger: logger, runners: map[string]*AllocRunner{}, index: map[string]uint64{},
		collected: map[string]bool{}}
}

func (s *Set) newRunner(a *structs.Allocation) (*AllocRunner, error) {
	return New(&Config{
		Alloc:          a,
		AllocDirRoot:   s.cfg.AllocDirRoot,
		StateDirRoot:   s.cfg.StateDirRoot,
		Drivers:        s.cfg.Drivers,
		Node:           s.cfg.Node(),
		HostEnv:        s.cfg.HostEnv,
		StateDB:        s.cfg.StateDB,
		MaxKillTimeout: s.cfg.MaxKillTimeout,
		Logger:         s.logger,
		Clock:          s.cfg.Clock,
		Updated:        s.cfg.Updated,
	})
}

// Restore rebuilds a runner for every stored allocation, reattaching to
// tasks that kept running while the client was down, and runs them.
// Allocations that cannot be restored are reported by ID and skipped.
func (s *Set) Restore() (map[string]error, error) {
	allocs, bad, err := s.cfg.StateDB.GetAllAllocations()
	if err != nil {
		return nil, err
	}
	for _, a := range allocs {
		ar, err := s.newRunner(a)
		if err == nil {
			err = ar.Restore()
		}
		if err != nil {
			bad[a.ID] = err
			continue
		}
		s.mu.Lock()
		s.runners[a.ID] = ar
		s.index[a.ID] = a.AllocModifyIndex
		s.mu.Unlock()
		go ar.Run()
	}
	return bad, nil
}

// Stale returns, sorted, the IDs among the servers' allocations (ID ->
// AllocModifyIndex) that the set does not have or has at an older index:
// the ones to fetch in full. Collected allocations are never stale.
func (s *Set) Stale(serverIndex map[string]uint64) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for id, idx := range serverIndex {
		if s.collected[id] {
			continue
		}
		if have, ok := s.index[id]; !ok || idx > have {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// Apply starts runners for new allocations in changed, hands newer
// versions to existing runners (a stop or evict stops the tasks), and
// destroys runners of allocations absent from serverIndex (the servers
// garbage collected them). A new allocation that is already terminal
// (the servers stopped it, or it finished before the client restarted
// without its state) is not started, and a collected one never again.
func (s *Set) Apply(serverIndex map[string]uint64, changed []*structs.Allocation) {
	s.applyMu.Lock()
	defer s.applyMu.Unlock()
	s.mu.Lock()
	var gone []*AllocRunner
	for id, ar := range s.runners {
		if _, ok := serverIndex[id]; !ok {
			gone = append(gone, ar)
			delete(s.runners, id)
		}
	}
	for id := range s.index {
		if _, ok := serverIndex[id]; !ok {
			delete(s.index, id)
			delete(s.collected, id)
		}
	}
	s.mu.Unlock()
	for _, ar := range gone {
		ar.Destroy()
	}

	for _, a := range changed {
		s.mu.Lock()
		if have, seen := s.index[a.ID]; seen && a.AllocModifyIndex <= have {
			s.mu.Unlock()
			continue
		}
		ar, ok := s.runners[a.ID]
		if ok || s.collected[a.ID] || a.TerminalStatus() {
			s.index[a.ID] = a.AllocModifyIndex
			s.mu.Unlock()
			if ok {
				ar.Update(a)
			}
			continue
		}
		s.mu.Unlock()
		ar, err := s.newRunner(a)
		if err != nil {
			s.logger.Error("cannot run allocation", "alloc_id", a.ID, "error", err)
			s.mu.Lock()
			s.index[a.ID] = a.AllocModifyIndex
			s.mu.Unlock()
			s.cfg.Updated(failedAlloc(a, err))
			continue
		}
		s.mu.Lock()
		s.runners[a.ID] = ar
		s.index[a.ID] = a.AllocModifyIndex
		s.mu.Unlock()
		go ar.Run()
	}
}

// Reconcile applies a full list of the node's allocations.
func (s *Set) Reconcile(allocs []*structs.Allocation) {
	idx := make(map[string]uint64, len(allocs))
	for _, a := range allocs {
		idx[a.ID] = a.AllocModifyIndex
	}
	s.Apply(idx, allocs)
}

// Collect destroys the runner of a finished allocation that the servers
// still list, to free its disk (client garbage collection). The set
// remembers it so it is never fetched or run again. It reports false when
// the allocation has no runner or its tasks have not all finished.
func (s *Set) Collect(id string) bool {
	s.applyMu.Lock()
	defer s.applyMu.Unlock()
	s.mu.Lock()
	ar := s.runners[id]
	if ar == nil {
		s.mu.Unlock()
		return false
	}
	select {
	case <-ar.WaitCh():
	default:
		s.mu.Unlock()
		return false
	}
	delete(s.runners, id)
	s.collected[id] = true
	s.mu.Unlock()
	ar.Destroy()
	return true
}

// Runner returns the runner of an allocation, or nil.
func (s *Set) Runner(id string) *AllocRunner {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runners[id]
}

// Runners returns every runner, in no particular order.
func (s *Set) Runners() []*AllocRunner {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*AllocRunner, 0, len(s.runners))
	for _, ar := range s.runners {
		out = append(out, ar)
	}
	return out
}

// Shutdown lets go of every runner, leaving tasks running for the next
// client to reattach to.
func (s *Set) Shutdown() {
	var wg sync.WaitGroup
	for _, ar := range s.Runners() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ar.Shutdown()
		}()
	}
	wg.Wait()
}

// failedAlloc is the update reported for an allocation the client cannot
// even set up (unknown task group, invalid task name).
func failedAlloc(a *structs.Allocation, err error) *structs.Allocation {
	return &structs.Allocation{
		ID: a.ID, NodeID: a.NodeID, Namespace: a.Namespace, JobID: a.JobID, TaskGroup: a.TaskGroup,
		ClientStatus:      structs.AllocClientStatusFailed,
		ClientDescription: fmt.Sprintf("client could not run the allocation: %v", err),
	}
}
