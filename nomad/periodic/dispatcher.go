package periodic

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-memdb"

	"github.com/opennomad/nomad/nomad/clock"
	"github.com/opennomad/nomad/nomad/passloop"
	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// DefaultRetryInterval is how long after a failed launch a pass runs
// again when nothing else wakes it.
const DefaultRetryInterval = 5 * time.Second

// ErrDisabled is returned by ForceRun on a dispatcher that is not
// enabled: only the leader launches.
var ErrDisabled = errors.New("periodic dispatcher is not enabled (this server is not the leader)")

// Config configures a Dispatcher.
type Config struct {
	// Logger receives the dispatcher's logs; nil discards them.
	Logger hclog.Logger
	// Clock tells launch times; nil means the wall clock.
	Clock clock.Clock
	// State returns the server's current state store; called at the start
	// of every pass, so a store replaced by a snapshot restore is picked
	// up. Required.
	State func() *state.StateStore
	// Raft registers launched children. Required.
	Raft Raft
	// RetryInterval is the wait after a failed pass; 0 means
	// DefaultRetryInterval.
	RetryInterval time.Duration
}

// Dispatcher is the leader's periodic dispatcher (see the package doc).
// It works only while enabled: the server enables it when it gains
// leadership and disables it when it loses it. Its methods are safe for
// concurrent use.
type Dispatcher struct {
	cfg    Config
	logger hclog.Logger
	loop   *passloop.Loop

	mu sync.Mutex
	// after holds, per template, a time at or before which no launch is
	// wanted: launches skipped for overlap, or first sight of a template
	// with nothing else to count from. It is this leader's own memory.
	after map[structs.NamespacedID]time.Time
}

// New returns a disabled dispatcher.
func New(cfg Config) (*Dispatcher, error) {
	if cfg.State == nil {
		return nil, errors.New("periodic dispatcher: config: State is required")
	}
	if cfg.Raft == nil {
		return nil, errors.New("periodic dispatcher: config: Raft is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.RetryInterval <= 0 {
		cfg.RetryInterval = DefaultRetryInterval
	}
	d := &Dispatcher{cfg: cfg, logger: cfg.Logger.Named("periodic"), after: map[structs.NamespacedID]time.Time{}}
	d.loop = passloop.New(passloop.Config{
		Name: "periodic dispatcher", Logger: d.logger, Clock: cfg.Clock, Pass: d.pass,
		RetryInterval: cfg.RetryInterval,
	})
	return d, nil
}

// SetEnabled starts (true) or stops (false) the dispatcher. Stopping
// waits for the pass in progress, so no launch follows the return.
// Enabling forgets launches skipped under an earlier leadership.
func (d *Dispatcher) SetEnabled(enabled bool) {
	if enabled {
		d.mu.Lock()
		d.after = map[structs.NamespacedID]time.Time{}
		d.mu.Unlock()
	}
	d.loop.SetEnabled(enabled)
}

// Enabled reports whether the dispatcher runs.
func (d *Dispatcher) Enabled() bool { return d.loop.Enabled() }

// pass launches every template that is due.
func (d *Dispatcher) pass(ws memdb.WatchSet, now time.Time) (time.Time, uint64, error) {
	store := d.cfg.State()
	ws.Add(store.AbandonCh())
	snap := &store.Snapshot().StateStore
	index, err := snap.LatestIndex()
	if err != nil {
		return time.Time{}, 0, err
	}
	d.mu.Lock()
	after := make(map[structs.NamespacedID]time.Time, len(d.after))
	for k, v := range d.after {
		after[k] = v
	}
	d.mu.Unlock()

	p, planErr := planLaunches(snap, ws, now, after)
	if p == nil {
		return time.Time{}, index, planErr
	}
	remember := map[structs.NamespacedID]time.Time{}
	for _, k := range p.firstSeen {
		remember[k] = now
	}
	for _, s := range p.skipped {
		remember[s.template.NamespacedID()] = s.at
		d.logger.Info("skipping launch of periodic job: a child is still running (prohibit_overlap)",
			"job_id", s.template.ID, "namespace", s.template.Namespace, "launch", s.at)
	}
	var errs []error
	for _, l := range p.launches {
		if err := d.launch(snap, l.template, l.at, now); err != nil {
			errs = append(errs, err)
		}
	}
	d.mu.Lock()
	for k, v := range remember {
		d.after[k] = v
	}
	for k := range d.after {
		if !p.templates[k] {
			delete(d.after, k) // stopped or gone
		}
	}
	d.mu.Unlock()
	return p.wakeAt, index, errors.Join(append(errs, planErr)...)
}

// launch registers the template's child for the launch time, unless a
// child of that time exists already.
func (d *Dispatcher) launch(store *state.StateStore, t *structs.Job, at, now time.Time) error {
	c := child(t, at, now)
	if existing, err := store.JobByID(nil, c.Namespace, c.ID); err != nil || existing != nil {
		return err
	}
	eval := launchEval(c, now)
	if _, err := d.cfg.Raft.RegisterChild(c, eval); err != nil {
		return fmt.Errorf("periodic: launching job %q: %w", c.ID, err)
	}
	d.logger.Info("launched periodic job", "job_id", c.ID, "namespace", c.Namespace, "eval_id", eval.ID)
	return nil
}

// Launched describes a child launched by ForceRun.
type Launched struct {
	JobID  string
	EvalID string
	// Index is the Raft index of the registration.
	Index uint64
}

// ForceRun launches a child of a periodic job now, whatever its schedule
// and overlap rule say: the `job periodic force` command. The job must
// be a periodic template that is not stopped.
func (d *Dispatcher) ForceRun(namespace, jobID string) (*Launched, error) {
	if !d.Enabled() {
		return nil, ErrDisabled
	}
	store := d.cfg.State()
	t, err := store.JobByID(nil, namespace, jobID)
	if err != nil {
		return nil, err
	}
	switch {
	case t == nil:
		return nil, fmt.Errorf("job %q in namespace %q: %w", jobID, namespace, structs.ErrUnknownJob)
	case !t.IsPeriodic():
		return nil, fmt.Errorf("job %q is not periodic", jobID)
	case t.Stop:
		return nil, fmt.Errorf("job %q is stopped", jobID)
	}
	now := d.cfg.Clock.Now()
	c := child(t, now.Truncate(time.Second), now)
	if existing, err := store.JobByID(nil, c.Namespace, c.ID); err != nil {
		return nil, err
	} else if existing != nil {
		return nil, fmt.Errorf("job %q: a child was launched this second already (%q)", jobID, c.ID)
	}
	eval := launchEval(c, now)
	index, err := d.cfg.Raft.RegisterChild(c, eval)
	if err != nil {
		return nil, fmt.Errorf("periodic: launching job %q: %w", c.ID, err)
	}
	d.logger.Info("forced launch of periodic job", "job_id", c.ID, "namespace", c.Namespace, "eval_id", eval.ID)
	return &Launched{JobID: c.ID, EvalID: eval.ID, Index: index}, nil
}
