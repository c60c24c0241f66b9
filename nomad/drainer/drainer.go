package drainer

import (
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-memdb"

	"github.com/opennomad/nomad/nomad/clock"
	"github.com/opennomad/nomad/nomad/passloop"
	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// Defaults of Config.
const (
	// DefaultMinPassInterval spaces passes while a big drain makes state
	// change constantly: changes arriving meanwhile share one pass.
	DefaultMinPassInterval = 100 * time.Millisecond
	// DefaultBatchSize bounds how many allocs one Raft entry marks.
	DefaultBatchSize = 1000
	// DefaultRetryInterval is how long after a failed write a pass runs
	// again when nothing else wakes it.
	DefaultRetryInterval = 5 * time.Second
)

// Config configures a Drainer.
type Config struct {
	// Logger receives the drainer's logs; nil discards them.
	Logger hclog.Logger
	// Clock drives deadlines and retries; nil means the wall clock.
	Clock clock.Clock
	// State returns the server's current state store. It is called at the
	// start of every pass, so a store replaced by a snapshot restore is
	// picked up. Required.
	State func() *state.StateStore
	// Raft writes the drainer's decisions. Required.
	Raft Raft
	// MinPassInterval is the least time between the starts of two passes
	// (0: a pass per change). Negative means DefaultMinPassInterval.
	MinPassInterval time.Duration
	// BatchSize bounds the allocs marked per Raft entry; 0 means
	// DefaultBatchSize.
	BatchSize int
	// RetryInterval is the wait after a failed pass; 0 means
	// DefaultRetryInterval.
	RetryInterval time.Duration
}

// Drainer is the leader's node drainer (see the package doc). It works
// only while enabled: the server enables it when it gains leadership and
// disables it when it loses it. Its methods are safe for concurrent use.
type Drainer struct {
	cfg    Config
	logger hclog.Logger
	loop   *passloop.Loop
}

// New returns a disabled drainer.
func New(cfg Config) (*Drainer, error) {
	if cfg.State == nil {
		return nil, errors.New("drainer: config: State is required")
	}
	if cfg.Raft == nil {
		return nil, errors.New("drainer: config: Raft is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.MinPassInterval < 0 {
		cfg.MinPassInterval = DefaultMinPassInterval
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = DefaultBatchSize
	}
	if cfg.RetryInterval <= 0 {
		cfg.RetryInterval = DefaultRetryInterval
	}
	d := &Drainer{cfg: cfg, logger: cfg.Logger.Named("drainer")}
	d.loop = passloop.New(passloop.Config{
		Name: "drainer", Logger: d.logger, Clock: cfg.Clock, Pass: d.pass,
		MinInterval: cfg.MinPassInterval, RetryInterval: cfg.RetryInterval,
	})
	return d, nil
}

// SetEnabled starts (true) or stops (false) the drainer. Stopping waits
// until its pass in progress ended, so no write follows the return. Since
// every decision is read back from state, enabling after a leadership
// change resumes every drain where it stood.
func (d *Drainer) SetEnabled(enabled bool) { d.loop.SetEnabled(enabled) }

// Enabled reports whether the drainer is running.
func (d *Drainer) Enabled() bool { return d.loop.Enabled() }

// pass runs one pass at now and returns when to wake if nothing changes,
// and the state index it read.
func (d *Drainer) pass(ws memdb.WatchSet, now time.Time) (time.Time, uint64, error) {
	store := d.cfg.State()
	ws.Add(store.AbandonCh())
	snap := store.Snapshot()
	index, err := snap.LatestIndex()
	if err != nil {
		return time.Time{}, 0, err
	}
	plan, err := planPass(&snap.StateStore, ws, now)
	if err != nil {
		return time.Time{}, index, err
	}
	if err := d.apply(plan, now); err != nil {
		return time.Time{}, index, err
	}
	return plan.wakeAt, index, nil
}

// apply writes a pass's decisions: marks in batches, each Raft entry with
// the evals of the jobs it marks, then the finished drains.
func (d *Drainer) apply(p *passPlan, now time.Time) error {
	yes := true
	if len(p.reevaluate) > 0 {
		evals := make([]*structs.Evaluation, 0, len(p.reevaluate))
		for _, k := range p.reevaluate {
			evals = append(evals, drainEval(p.jobs[k], now))
		}
		if _, err := d.cfg.Raft.AllocUpdateDesiredTransition(nil, evals); err != nil {
			return fmt.Errorf("drainer: re-evaluating %d jobs: %w", len(evals), err)
		}
	}
	for start := 0; start < len(p.marks); start += d.cfg.BatchSize {
		batch := p.marks[start:min(len(p.marks), start+d.cfg.BatchSize)]
		transitions := make(map[string]*structs.DesiredTransition, len(batch))
		seen := map[structs.NamespacedID]bool{}
		var evals []*structs.Evaluation
		for _, a := range batch {
			transitions[a.ID] = &structs.DesiredTransition{Migrate: &yes}
			k := a.NamespacedJobID()
			if !seen[k] {
				seen[k] = true
				evals = append(evals, drainEval(p.jobs[k], now))
			}
		}
		if _, err := d.cfg.Raft.AllocUpdateDesiredTransition(transitions, evals); err != nil {
			return fmt.Errorf("drainer: marking %d allocs for migration: %w", len(batch), err)
		}
		d.logger.Debug("marked allocs for migration", "allocs", len(batch), "evals", len(evals))
	}
	if len(p.complete) == 0 {
		return nil
	}
	event := structs.NewNodeEvent(structs.NodeEventSubsystemDrain, structs.NodeEventMsgDrainComplete, now)
	if _, err := d.cfg.Raft.NodesDrainComplete(p.complete, event); err != nil {
		return fmt.Errorf("drainer: completing the drain of %d nodes: %w", len(p.complete), err)
	}
	for _, id := range p.complete {
		d.logger.Info("node drain complete", "node_id", id)
	}
	return nil
}

// drainEval is the evaluation that makes the scheduler act on a job's
// allocs marked for migration.
func drainEval(job *structs.Job, now time.Time) *structs.Evaluation {
	return &structs.Evaluation{
		ID:             structs.GenerateUUID(),
		Namespace:      job.Namespace,
		Priority:       job.Priority,
		Type:           job.Type,
		TriggeredBy:    structs.EvalTriggerNodeDrain,
		JobID:          job.ID,
		JobModifyIndex: job.JobModifyIndex,
		Status:         structs.EvalStatusPending,
		CreateTime:     now.UnixNano(),
		ModifyTime:     now.UnixNano(),
	}
}
