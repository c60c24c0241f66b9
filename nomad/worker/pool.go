package worker

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"

	"github.com/opennomad/nomad/structs"
)

// ErrUnknownWorker is wrapped by a pause or resume of a worker ID the
// pool does not run.
var ErrUnknownWorker = fmt.Errorf("unknown scheduler worker: %w", structs.ErrNotFound)

// ErrInvalidSchedulerConfig is wrapped by every rejection of a worker
// pool configuration; the HTTP layer answers it with 400 "Invalid
// request".
var ErrInvalidSchedulerConfig = errors.New("invalid scheduler worker configuration")

// DefaultLeaderPausedFraction is the share of its workers a leader
// pauses, rounded down, to keep CPU for Raft, the broker and the plan
// applier.
const DefaultLeaderPausedFraction = 0.75

// PoolConfig configures a Pool.
type PoolConfig struct {
	// NumSchedulers is how many workers run (num_schedulers).
	NumSchedulers int
	// EnabledSchedulers are the eval types every worker takes; they must
	// include structs.JobTypeCore.
	EnabledSchedulers []string
	// MaxSchedulers bounds NumSchedulers; runtime.NumCPU() when 0.
	MaxSchedulers int
	// LeaderPausedFraction is the share of workers paused while this
	// server leads (floor(fraction * n)), in [0, 1].
	LeaderPausedFraction float64
	// Worker is the template every worker is built from; its
	// EnabledSchedulers is ignored.
	Worker Config
}

// AllSchedulers lists every eval type a worker can process: the builtin
// job types (those of scheduler.Builtin) and the garbage collector. It is
// the one list of them: the agent's configuration and the CLI check
// names against it.
func AllSchedulers() []string {
	return []string{structs.JobTypeService, structs.JobTypeBatch, structs.JobTypeSystem,
		structs.JobTypeSysBatch, structs.JobTypeCore}
}

// DefaultPoolConfig returns one worker per CPU enabled for every
// builtin scheduler, and the leader pausing three quarters of them.
func DefaultPoolConfig(w Config) PoolConfig {
	return PoolConfig{
		NumSchedulers:        runtime.NumCPU(),
		EnabledSchedulers:    AllSchedulers(),
		LeaderPausedFraction: DefaultLeaderPausedFraction,
		Worker:               w,
	}
}

// Pool runs the scheduling workers of a server and lets operators
// and leadership changes shape it at run time. All methods are safe for
// concurrent use.
type Pool struct {
	template Config
	max      int
	fraction float64

	mu      sync.Mutex
	ctx     context.Context
	num     int
	enabled []string
	workers []*Worker
	// retired workers were stopped and may still be finishing an eval.
	retired []*Worker
	leader  bool
	paused  bool
	// held are the workers an operator paused one by one, by ID.
	held map[string]bool
}

// NewPool checks cfg and returns a pool with no worker running.
func NewPool(cfg PoolConfig) (*Pool, error) {
	p := &Pool{template: cfg.Worker, max: cfg.MaxSchedulers, fraction: cfg.LeaderPausedFraction}
	if p.max == 0 {
		p.max = runtime.NumCPU()
	}
	if math.IsNaN(cfg.LeaderPausedFraction) || cfg.LeaderPausedFraction < 0 || cfg.LeaderPausedFraction > 1 {
		return nil, fmt.Errorf("worker pool config: LeaderPausedFraction must be in [0, 1], got %v", cfg.LeaderPausedFraction)
	}
	if err := p.validate(cfg.NumSchedulers, cfg.EnabledSchedulers); err != nil {
		return nil, fmt.Errorf("worker pool config: %w", err)
	}
	// The template must be usable; build one worker to find out now.
	probe := cfg.Worker
	probe.EnabledSchedulers = cfg.EnabledSchedulers
	if _, err := New(probe); err != nil {
		return nil, fmt.Errorf("worker pool config: %w", err)
	}
	p.num, p.enabled = cfg.NumSchedulers, slices.Clone(cfg.EnabledSchedulers)
	return p, nil
}

// validate applies the rules of /v1/agent/schedulers/config.
func (p *Pool) validate(num int, enabled []string) error {
	var errs []error
	if num < 0 || num > p.max {
		errs = append(errs, fmt.Errorf("num_schedulers must be between 0 and %d, got %d", p.max, num))
	}
	if !slices.Contains(enabled, structs.JobTypeCore) {
		errs = append(errs, fmt.Errorf("enabled_schedulers must include %q", structs.JobTypeCore))
	}
	for _, s := range enabled {
		if !slices.Contains(AllSchedulers(), s) {
			errs = append(errs, fmt.Errorf("enabled_schedulers: unknown scheduler %q", s))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %w", ErrInvalidSchedulerConfig, errors.Join(errs...))
	}
	return nil
}

// Start starts the configured workers; they run until Shutdown or until
// ctx ends. Later calls do nothing.
func (p *Pool) Start(ctx context.Context) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ctx != nil {
		return
	}
	p.ctx = ctx
	p.resizeLocked()
}

// SetSchedulerConfig changes the number of workers and the schedulers
// they take, at run time (not persisted). A change of schedulers replaces
// every worker; a change of number only starts or stops the difference.
// Stopped workers finish the eval in hand first. The leader's and the
// operator's pauses carry over to the new workers.
func (p *Pool) SetSchedulerConfig(num int, enabled []string) error {
	if err := p.validate(num, enabled); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !sameSet(enabled, p.enabled) {
		for _, w := range p.workers {
			p.retireLocked(w)
		}
		p.workers = nil
		p.enabled = slices.Clone(enabled)
	}
	p.num = num
	if p.ctx != nil {
		p.resizeLocked()
	}
	return nil
}

// SchedulerConfig returns the configuration in effect.
func (p *Pool) SchedulerConfig() (num int, enabled []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.num, slices.Clone(p.enabled)
}

// SetLeader pauses floor(LeaderPausedFraction * n) of the workers while
// this server leads (the server calls it with true when it gains
// leadership and false when it loses it).
func (p *Pool) SetLeader(leader bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.leader = leader
	p.applyPausesLocked()
}

// Pause pauses every worker: each finishes the eval in hand and takes no
// other until Resume.
func (p *Pool) Pause() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.paused = true
	p.applyPausesLocked()
}

// Resume undoes Pause, and the pauses of single workers too; workers
// the leader keeps paused stay paused.
func (p *Pool) Resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.paused = false
	p.held = nil
	p.applyPausesLocked()
}

// SetWorkerPaused pauses (true) or resumes (false) the one worker with
// the ID, as Pause and Resume do all of them. A worker paused so stays
// paused until resumed, or until the pool is resumed as a whole or the
// worker replaced; one the leader or a pause of the pool holds stays
// paused when resumed alone. An ID the pool does not run is
// ErrUnknownWorker.
func (p *Pool) SetWorkerPaused(id string, paused bool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !slices.ContainsFunc(p.workers, func(w *Worker) bool { return w.ID() == id }) {
		return fmt.Errorf("worker %q: %w", id, ErrUnknownWorker)
	}
	if paused {
		if p.held == nil {
			p.held = map[string]bool{}
		}
		p.held[id] = true
	} else {
		delete(p.held, id)
	}
	p.applyPausesLocked()
	return nil
}

// WorkerPaused reports whether an operator paused the worker with the ID
// on its own (SetWorkerPaused).
func (p *Pool) WorkerPaused(id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.held[id]
}

// Paused reports whether an operator paused the pool (the leader's own
// pauses do not count).
func (p *Pool) Paused() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.paused
}

// Workers describes the current workers, for /v1/agent/schedulers.
func (p *Pool) Workers() []Info {
	p.mu.Lock()
	workers := slices.Clone(p.workers)
	p.mu.Unlock()
	out := make([]Info, len(workers))
	for i, w := range workers {
		out[i] = w.Info()
	}
	return out
}

// LeadershipGained pauses the leader's share of the workers
// (package nomad's LeadershipObserver).
func (p *Pool) LeadershipGained(context.Context) { p.SetLeader(true) }

// LeadershipLost resumes them (LeadershipObserver too).
func (p *Pool) LeadershipLost() { p.SetLeader(false) }

// Shutdown stops every worker and waits until all have exited, including
// those stopped earlier that were still finishing an eval.
func (p *Pool) Shutdown() {
	p.mu.Lock()
	for _, w := range p.workers {
		p.retireLocked(w)
	}
	p.workers = nil
	retired := p.retired
	p.retired = nil
	p.mu.Unlock()
	for _, w := range retired {
		<-w.Done()
	}
}

func (p *Pool) resizeLocked() {
	for len(p.workers) > p.num {
		last := len(p.workers) - 1
		p.retireLocked(p.workers[last])
		p.workers = p.workers[:last]
	}
	for len(p.workers) < p.num {
		cfg := p.template
		cfg.EnabledSchedulers = p.enabled
		w := newWorker(cfg) // NewPool checked the template
		w.Start(p.ctx)
		p.workers = append(p.workers, w)
	}
	p.applyPausesLocked()
}

// applyPausesLocked pauses the first floor(fraction*n) workers while
// leading, and all of them while the operator paused the pool.
func (p *Pool) applyPausesLocked() {
	leaderPaused := 0
	if p.leader {
		leaderPaused = int(math.Floor(p.fraction * float64(len(p.workers))))
	}
	for i, w := range p.workers {
		if p.paused || i < leaderPaused || p.held[w.ID()] {
			w.Pause()
		} else {
			w.Resume()
		}
	}
}

func (p *Pool) retireLocked(w *Worker) {
	delete(p.held, w.ID())
	w.Stop()
	// Forget those that are gone already, so the list stays short.
	p.retired = slices.DeleteFunc(p.retired, func(r *Worker) bool {
		select {
		case <-r.Done():
			return true
		default:
			return false
		}
	})
	p.retired = append(p.retired, w)
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}
