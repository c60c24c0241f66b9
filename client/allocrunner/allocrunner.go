// Package allocrunner runs one allocation on a client: it lays out the
// alloc directory, runs a task runner per task in lifecycle order
// (prestart, main, poststart, poststop), stops the tasks when the servers
// stop the allocation, derives the allocation's ClientStatus and
// TaskStates from its tasks, and reports every change through a
// callback. A client loop drives a set of alloc runners from the list of
// allocations the servers assign to the node (see Set).
package allocrunner

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/opennomad/nomad/client/allocdir"
	"github.com/opennomad/nomad/client/driver"
	"github.com/opennomad/nomad/client/state"
	"github.com/opennomad/nomad/client/taskrunner"
	"github.com/opennomad/nomad/structs"
)

// Config is what an alloc runner is built from.
type Config struct {
	Alloc *structs.Allocation
	// AllocDirRoot holds alloc directories (<data_dir>/alloc).
	AllocDirRoot string
	// StateDirRoot holds the drivers' private per-task directories,
	// outside anything tasks can see.
	StateDirRoot string
	Drivers      driver.Catalog
	Node         *structs.Node
	HostEnv      map[string]string
	StateDB      state.DB
	// MaxKillTimeout caps tasks' kill_timeout; 0 means no cap.
	MaxKillTimeout time.Duration
	Logger         hclog.Logger
	Clock          taskrunner.Clock
	// Updated is called from the alloc runner's goroutine whenever the
	// allocation's client status or task states change, with a fresh
	// copy holding only what the client reports (ID, NodeID, status,
	// description, task states, network status). It must not block for
	// long: a client queues the update for its next batch to the servers.
	Updated func(*structs.Allocation)
}

// AllocRunner runs one allocation. Its exported methods are safe to call
// from any goroutine.
type AllocRunner struct {
	cfg      Config
	allocDir *allocdir.AllocDir
	logger   hclog.Logger
	tasks    []*taskrunner.TaskRunner
	byName   map[string]*taskrunner.TaskRunner

	notifyCh   chan struct{}
	destroyCh  chan struct{}
	shutdownCh chan struct{}
	waitCh     chan struct{}
	destroyed  chan struct{}

	destroyOnce  sync.Once
	shutdownOnce sync.Once

	// lastReport is touched only by Run's goroutine.
	lastReport string

	// netStatus is the allocation's network, set when the runner is
	// built (host mode: the node's own network) and reported with every
	// update.
	netStatus *structs.AllocNetworkStatus

	mu         sync.Mutex
	alloc      *structs.Allocation
	status     string
	statusDesc string
	restored   bool
}

// New builds the runner and its task runners. Nothing runs until Run.
func New(cfg *Config) (*AllocRunner, error) {
	a := cfg.Alloc
	if a == nil || a.Job == nil {
		return nil, errors.New("alloc runner: an allocation with its job is required")
	}
	tg := a.Job.LookupTaskGroup(a.TaskGroup)
	if tg == nil {
		return nil, fmt.Errorf("alloc %s: job %q has no task group %q", a.ID, a.JobID, a.TaskGroup)
	}
	ad, err := allocdir.New(cfg.AllocDirRoot, a.ID)
	if err != nil {
		return nil, err
	}
	logger := cfg.Logger
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	ar := &AllocRunner{
		cfg:        *cfg,
		allocDir:   ad,
		logger:     logger.With("alloc_id", a.ID),
		byName:     map[string]*taskrunner.TaskRunner{},
		notifyCh:   make(chan struct{}, 1),
		destroyCh:  make(chan struct{}),
		shutdownCh: make(chan struct{}),
		waitCh:     make(chan struct{}),
		destroyed:  make(chan struct{}),
		alloc:      a,
		status:     structs.AllocClientStatusPending,
		statusDesc: descPending,
		netStatus:  hostNetworkStatus(cfg.Node, tg),
	}
	if ar.cfg.Updated == nil {
		ar.cfg.Updated = func(*structs.Allocation) {}
	}
	for _, t := range tg.Tasks {
		td, err := ad.TaskDir(t.Name)
		if err != nil {
			return nil, fmt.Errorf("alloc %s: %w", a.ID, err)
		}
		drv, drvErr := cfg.Drivers.Lookup(t.Driver)
		tr, err := taskrunner.New(&taskrunner.Config{
			Alloc:          a,
			Task:           t,
			TaskDir:        td,
			Driver:         drv,
			DriverErr:      drvErr,
			Node:           cfg.Node,
			HostEnv:        cfg.HostEnv,
			StateDB:        cfg.StateDB,
			StateDir:       filepath.Join(cfg.StateDirRoot, a.ID, t.Name),
			MaxKillTimeout: cfg.MaxKillTimeout,
			Logger:         logger,
			Clock:          cfg.Clock,
			OnStateChange:  ar.notify,
		})
		if err != nil {
			return nil, err
		}
		ar.tasks = append(ar.tasks, tr)
		ar.byName[t.Name] = tr
	}
	return ar, nil
}

// notify wakes the runner's loop; task runners call it on every change.
func (ar *AllocRunner) notify() {
	select {
	case ar.notifyCh <- struct{}{}:
	default:
	}
}

// ID is the allocation's ID.
func (ar *AllocRunner) ID() string { return ar.cfg.Alloc.ID }

// AllocDir is the allocation's directory tree.
func (ar *AllocRunner) AllocDir() *allocdir.AllocDir { return ar.allocDir }

// TaskRunner returns the runner of a task, or nil.
func (ar *AllocRunner) TaskRunner(name string) *taskrunner.TaskRunner { return ar.byName[name] }

// WaitCh is closed when Run returns: every task is dead, or the runner
// was shut down.
func (ar *AllocRunner) WaitCh() <-chan struct{} { return ar.waitCh }

// DestroyedCh is closed once Destroy has removed everything.
func (ar *AllocRunner) DestroyedCh() <-chan struct{} { return ar.destroyed }

// Alloc returns a copy of the allocation as the client sees it: the
// servers' latest version with the client status and task states.
func (ar *AllocRunner) Alloc() *structs.Allocation {
	ar.mu.Lock()
	a := ar.alloc.Copy()
	a.ClientStatus, a.ClientDescription = ar.status, ar.statusDesc
	ar.mu.Unlock()
	a.TaskStates = ar.taskStates()
	a.NetworkStatus = ar.netStatus.Copy()
	return a
}

func (ar *AllocRunner) taskStates() map[string]*structs.TaskState {
	out := make(map[string]*structs.TaskState, len(ar.tasks))
	for _, tr := range ar.tasks {
		out[tr.Name()] = tr.TaskState()
	}
	return out
}

// Update hands the runner a newer version of the allocation from the
// servers. A stop or evict desired status stops the tasks.
func (ar *AllocRunner) Update(alloc *structs.Allocation) {
	if err := ar.cfg.StateDB.PutAllocation(alloc); err != nil {
		ar.logger.Error("persisting allocation", "error", err)
	}
	ar.mu.Lock()
	ar.alloc = alloc
	ar.mu.Unlock()
	ar.notify()
}

// Destroy stops every task (poststop ones included), then removes the
// alloc directory, the drivers' task state and the stored allocation.
// It returns at once; DestroyedCh is closed when it is done, which
// requires Run to have been started.
func (ar *AllocRunner) Destroy() {
	ar.destroyOnce.Do(func() {
		close(ar.destroyCh)
		go func() {
			<-ar.waitCh
			var errs []error
			errs = append(errs, ar.allocDir.Destroy())
			if err := os.RemoveAll(filepath.Join(ar.cfg.StateDirRoot, ar.ID())); err != nil {
				errs = append(errs, err)
			}
			errs = append(errs, ar.cfg.StateDB.DeleteAllocation(ar.ID()))
			if err := errors.Join(errs...); err != nil {
				ar.logger.Error("destroying allocation", "error", err)
			}
			close(ar.destroyed)
		}()
	})
}

// Shutdown stops the runner without stopping its tasks: the client is
// going down and will reattach when it comes back. It returns when the
// runner has let go.
func (ar *AllocRunner) Shutdown() {
	ar.shutdownOnce.Do(func() { close(ar.shutdownCh) })
	<-ar.waitCh
}

// Restore loads the tasks' persisted state and reattaches to running
// tasks. Call it instead of nothing, before Run, for an allocation the
// client had before it restarted.
func (ar *AllocRunner) Restore() error {
	ar.mu.Lock()
	ar.restored = true
	ar.mu.Unlock()
	for _, tr := range ar.tasks {
		found, err := tr.Restore()
		if err != nil {
			return fmt.Errorf("alloc %s: %w", ar.ID(), err)
		}
		if !found {
			tr.EmitReceived()
		}
	}
	return nil
}

// Run runs the allocation until every task is dead (or Shutdown). Call
// it once, in its own goroutine.
func (ar *AllocRunner) Run() {
	defer close(ar.waitCh)
	ar.mu.Lock()
	restored := ar.restored
	ar.mu.Unlock()
	if !restored {
		if err := ar.cfg.StateDB.PutAllocation(ar.cfg.Alloc); err != nil {
			ar.logger.Error("persisting allocation", "error", err)
		}
		for _, tr := range ar.tasks {
			tr.EmitReceived()
		}
	}
	if err := ar.allocDir.Build(); err != nil {
		// Tasks build their own directories under it and fail with a
		// Setup Failure event; the allocation then fails.
		ar.logger.Error("building alloc dir", "error", err)
	}
	for _, tr := range ar.tasks {
		go tr.Run()
	}

	started := map[string]bool{}
	killed := map[string]bool{}
	var stopping, destroying bool
	ar.mu.Lock()
	stopping = ar.alloc.ServerTerminalStatus()
	ar.mu.Unlock()
	destroyCh := ar.destroyCh
	for {
		ar.coordinate(started, killed, stopping, destroying)
		if ar.allDone() {
			ar.coordinate(started, killed, stopping, destroying)
			return
		}
		select {
		case <-ar.notifyCh:
			ar.mu.Lock()
			stopping = stopping || ar.alloc.ServerTerminalStatus()
			ar.mu.Unlock()
		case <-destroyCh:
			destroying = true
			destroyCh = nil // fires once
		case <-ar.shutdownCh:
			for _, tr := range ar.tasks {
				tr.Shutdown()
			}
			for _, tr := range ar.tasks {
				<-tr.WaitCh()
			}
			return
		}
	}
}

// coordinate applies the lifecycle plan and reports status changes.
func (ar *AllocRunner) coordinate(started, killed map[string]bool, stopping, destroying bool) {
	views := make([]taskView, 0, len(ar.tasks))
	states := make(map[string]*structs.TaskState, len(ar.tasks))
	for _, tr := range ar.tasks {
		st := tr.TaskState()
		states[tr.Name()] = st
		views = append(views, taskView{
			name: tr.Name(), role: roleOf(tr.Lifecycle()), leader: tr.IsLeader(),
			state: st, started: started[tr.Name()], killed: killed[tr.Name()],
		})
	}
	plan := planLifecycle(views, stopping, destroying, time.Now().UTC())
	for name, reason := range plan.kill {
		killed[name] = true
		tr := ar.byName[name]
		go tr.Kill(context.Background(), reason)
	}
	for _, name := range plan.start {
		started[name] = true
		ar.byName[name].AllowStart()
	}

	status, desc := clientStatus(states)
	ar.mu.Lock()
	ar.status, ar.statusDesc = status, desc
	update := &structs.Allocation{
		ID: ar.alloc.ID, NodeID: ar.alloc.NodeID, Namespace: ar.alloc.Namespace, JobID: ar.alloc.JobID,
		TaskGroup: ar.alloc.TaskGroup, ClientStatus: status, ClientDescription: desc, TaskStates: states,
		NetworkStatus: ar.netStatus.Copy(),
	}
	ar.mu.Unlock()
	if fp := reportFingerprint(update); fp != ar.lastReport {
		ar.lastReport = fp
		ar.cfg.Updated(update)
	}
}

// reportFingerprint summarises what an update tells the servers, so that
// wake-ups that changed nothing are not reported.
func reportFingerprint(a *structs.Allocation) string {
	var b strings.Builder
	b.WriteString(a.ClientStatus + "|" + a.ClientDescription)
	for _, name := range slices.Sorted(maps.Keys(a.TaskStates)) {
		s := a.TaskStates[name]
		fmt.Fprintf(&b, "|%s:%s:%v:%d:%d", name, s.State, s.Failed, s.Restarts, len(s.Events))
		if n := len(s.Events); n > 0 {
			fmt.Fprintf(&b, ":%d", s.Events[n-1].Time)
		}
	}
	return b.String()
}

// allDone reports whether every task runner has returned.
func (ar *AllocRunner) allDone() bool {
	for _, tr := range ar.tasks {
		select {
		case <-tr.WaitCh():
		default:
			return false
		}
	}
	return true
}
