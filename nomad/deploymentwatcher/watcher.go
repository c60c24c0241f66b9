package deploymentwatcher

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
	"github.com/opennomad/nomad/scheduler"
	"github.com/opennomad/nomad/structs"
)

// Defaults of Config.
const (
	// DefaultMinPassInterval spaces passes while allocs report in bursts.
	DefaultMinPassInterval = 100 * time.Millisecond
	// DefaultRetryInterval is how long after a failed write a pass runs
	// again when nothing else wakes it.
	DefaultRetryInterval = 5 * time.Second
	// DefaultMaxPassShare is the share of the time passes may take. A
	// pass reads every active deployment (1–2 µs each when quiet, more
	// on a loaded machine), and while a flood keeps 100,000 of them
	// active a change arrives every few milliseconds: unbounded, the
	// watcher would pass back to back on the leader. At a tenth, a
	// 200 ms pass is followed by the next 2 s after it started.
	DefaultMaxPassShare = 0.1
)

// Config configures a Watcher.
type Config struct {
	// Logger receives the watcher's logs; nil discards them.
	Logger hclog.Logger
	// Clock drives health and progress deadlines; nil means the wall
	// clock.
	Clock clock.Clock
	// State returns the server's current state store; called at the start
	// of every pass and operation, so a store replaced by a snapshot
	// restore is picked up. Required.
	State func() *state.StateStore
	// Raft writes the watcher's decisions. Required.
	Raft Raft
	// MinPassInterval is the least time between the starts of two passes
	// (0: a pass per change). Negative means DefaultMinPassInterval.
	MinPassInterval time.Duration
	// RetryInterval is the wait after a failed pass; 0 means
	// DefaultRetryInterval.
	RetryInterval time.Duration
	// AllocHealthBatch reports whether every server applies
	// DeploymentAllocHealthBatch entries
	// (structs.MinVersionAllocHealthBatch); asked once per pass. Nil:
	// never, each deployment's verdicts go in an entry of their own.
	AllocHealthBatch func() bool
	// Schedulers, when set, build the scheduler a pass runs as a dry run
	// before it asks for the follow-up eval of a roll-out that may be
	// over: when all that eval would do is mark the deployment
	// successful, the watcher writes the success instead (see settle).
	// Nil: always the eval.
	Schedulers scheduler.Factories
}

// Watcher is the leader's deployment watcher (see the package doc). It
// works only while enabled: the server enables it when it gains
// leadership and disables it when it loses it. Its methods are safe for
// concurrent use.
type Watcher struct {
	cfg    Config
	logger hclog.Logger
	loop   *passloop.Loop

	// dryScratch is the working memory of settle's dry runs; passes use
	// it one at a time (under quietMu).
	dryScratch scheduler.Scratch

	// quietMu guards quiet: passes run on the loop's goroutine, but
	// SetEnabled clears it from the caller's.
	quietMu sync.Mutex
	// quiet holds, by deployment ID, the deployments whose last pass
	// decided to write nothing, with what that decision read. A pass
	// skips such a deployment while none of it has changed, so a pass
	// woken by one deployment does not re-read all the others.
	quiet map[string]*quietDeployment
}

// quietDeployment is what a pass that wrote nothing about a deployment
// read: the store, the deployment's ModifyIndex, the watches on its job
// and allocs, and when its decision asked to be woken.
type quietDeployment struct {
	store       *state.StateStore
	modifyIndex uint64
	ws          memdb.WatchSet
	wakeAt      time.Time
}

// still reports whether the deployment d, read from store at now, would
// be decided as before: nothing it read has changed and its wake-up time
// has not come.
func (q *quietDeployment) still(store *state.StateStore, d *structs.Deployment, now time.Time) bool {
	if q.store != store || q.modifyIndex != d.ModifyIndex {
		return false
	}
	if !q.wakeAt.IsZero() && !now.Before(q.wakeAt) {
		return false
	}
	for ch := range q.ws {
		select {
		case <-ch:
			return false
		default:
		}
	}
	return true
}

// New returns a disabled watcher.
func New(cfg Config) (*Watcher, error) {
	if cfg.State == nil {
		return nil, errors.New("deployment watcher: config: State is required")
	}
	if cfg.Raft == nil {
		return nil, errors.New("deployment watcher: config: Raft is required")
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
	if cfg.RetryInterval <= 0 {
		cfg.RetryInterval = DefaultRetryInterval
	}
	w := &Watcher{cfg: cfg, logger: cfg.Logger.Named("deployment_watcher")}
	w.loop = passloop.New(passloop.Config{
		Name: "deployment watcher", Logger: w.logger, Clock: cfg.Clock, Pass: w.pass,
		MinInterval: cfg.MinPassInterval, RetryInterval: cfg.RetryInterval, MaxShare: DefaultMaxPassShare,
	})
	return w, nil
}

// SetEnabled starts (true) or stops (false) the watcher. Stopping waits
// for the pass in progress, so no write of the loop follows the return.
func (w *Watcher) SetEnabled(enabled bool) {
	w.loop.SetEnabled(enabled)
	if !enabled {
		// The next leadership starts from state alone.
		w.quietMu.Lock()
		w.quiet = nil
		w.quietMu.Unlock()
	}
}

// Enabled reports whether the watcher runs.
func (w *Watcher) Enabled() bool { return w.loop.Enabled() }

// pass decides and writes for every active deployment, skipping those
// found quiet before and unchanged since.
func (w *Watcher) pass(ws memdb.WatchSet, now time.Time) (time.Time, uint64, error) {
	store := w.cfg.State()
	ws.Add(store.AbandonCh())
	ss := store.Snapshot()
	snap := &ss.StateStore
	index, err := snap.LatestIndex()
	if err != nil {
		return time.Time{}, 0, err
	}
	deployments, err := snap.Deployments(ws, structs.AllNamespaces)
	if err != nil {
		return time.Time{}, index, fmt.Errorf("deployment watcher: listing deployments: %w", err)
	}
	w.quietMu.Lock()
	defer w.quietMu.Unlock()
	quiet := make(map[string]*quietDeployment, len(w.quiet))
	var wake time.Time
	wakeBy := func(t time.Time) {
		if !t.IsZero() && (wake.IsZero() || t.Before(wake)) {
			wake = t
		}
	}
	var errs []error
	// Evals that are all a decision writes wait for the end of the pass
	// and go to Raft together: a burst of client health reports asks an
	// eval of every deployment it touched, and one entry per deployment
	// would cost each a Raft round trip in this loop.
	var evals []*structs.Evaluation
	// Verdicts that need no other write wait too, when every server can
	// apply them together: one entry per deployment cost the same.
	var verdicts []*structs.ApplyDeploymentAllocHealthRequest
	batchVerdicts := w.cfg.AllocHealthBatch != nil && w.cfg.AllocHealthBatch()
	for _, d := range deployments {
		if d.Status != structs.DeploymentStatusRunning && d.Status != structs.DeploymentStatusPaused {
			continue
		}
		if q := w.quiet[d.ID]; q != nil && q.still(store, d, now) {
			quiet[d.ID] = q
			addAll(ws, q.ws)
			wakeBy(q.wakeAt)
			continue
		}
		dws := memdb.NewWatchSet()
		v, err := readView(snap, dws, d)
		addAll(ws, dws)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		dec := decide(v, now)
		w.settle(ss, v, &dec, now)
		switch {
		case dec.evalOnly():
			evals = append(evals, newEval(d, v.job, now))
		case batchVerdicts && dec.succeedsOnly():
			verdicts = append(verdicts, healthRequest(d, dec, nil, nil, now))
		case batchVerdicts && dec.verdictsOnly():
			var eval *structs.Evaluation
			if dec.eval {
				eval = newEval(d, v.job, now)
			}
			verdicts = append(verdicts, healthRequest(d, dec, nil, eval, now))
		default:
			if err := w.apply(snap, v, dec, now); err != nil {
				errs = append(errs, fmt.Errorf("deployment %q: %w", d.ID, err))
				continue
			}
		}
		wakeBy(dec.wakeAt)
		if dec.writesNothing() {
			quiet[d.ID] = &quietDeployment{store: store, modifyIndex: d.ModifyIndex, ws: dws, wakeAt: dec.wakeAt}
		}
	}
	w.quiet = quiet
	if err := w.writeVerdicts(verdicts); err != nil {
		errs = append(errs, err)
	}
	if err := w.writeEvals(evals); err != nil {
		errs = append(errs, err)
	}
	return wake, index, errors.Join(errs...)
}

// Bounds of the DeploymentAllocHealthBatch entries writeVerdicts makes:
// a request with its eval is about 0.8 KB encoded, and each alloc
// verdict adds an ID of 36 bytes (a big deployment may have many).
const (
	maxHealthRequestsPerEntry = 256
	maxAllocVerdictsPerEntry  = 4096
)

// nextVerdictEntry returns how many of reqs the next entry takes: at
// most maxHealthRequestsPerEntry, with at most maxAllocVerdictsPerEntry
// alloc verdicts unless its first request alone has more; at least one.
func nextVerdictEntry(reqs []*structs.ApplyDeploymentAllocHealthRequest) int {
	n, verdicts := 0, 0
	for n < len(reqs) && n < maxHealthRequestsPerEntry {
		k := len(reqs[n].HealthyAllocationIDs) + len(reqs[n].UnhealthyAllocationIDs)
		if n > 0 && verdicts+k > maxAllocVerdictsPerEntry {
			break
		}
		n, verdicts = n+1, verdicts+k
	}
	return n
}

// writeVerdicts writes the pass's verdict-only decisions in
// DeploymentAllocHealthBatch entries (see nextVerdictEntry).
// The pass decided on a snapshot: a deployment may have been cancelled,
// failed or marked successful since, and the state store refuses
// verdicts on it, which refuses the whole entry. The requests of a
// refused entry are then written one entry each, so that deployment does
// not hold back the others; its own write fails as it would have alone.
// Without a leader nothing can be written, and nothing is retried. As
// with writeEvals, a deployment whose verdicts were not written is not
// quiet, so the next pass decides it again.
func (w *Watcher) writeVerdicts(reqs []*structs.ApplyDeploymentAllocHealthRequest) error {
	var errs []error
	for len(reqs) > 0 {
		n := nextVerdictEntry(reqs)
		chunk := reqs[:n]
		reqs = reqs[n:]
		_, err := w.cfg.Raft.UpdateDeploymentAllocHealthBatch(chunk)
		if err == nil {
			for _, req := range chunk {
				w.logVerdicts(req)
			}
			continue
		}
		if errors.Is(err, structs.ErrNoLeader) {
			return errors.Join(append(errs, fmt.Errorf("writing alloc health of %d deployments: %w", n, err))...)
		}
		w.logger.Debug("alloc health batch refused: writing its deployments one by one", "deployments", n, "error", err)
		for _, req := range chunk {
			if _, err := w.cfg.Raft.UpdateDeploymentAllocHealth(req); err != nil {
				errs = append(errs, fmt.Errorf("deployment %q: writing alloc health: %w", req.DeploymentID, err))
				if errors.Is(err, structs.ErrNoLeader) {
					return errors.Join(errs...)
				}
				continue
			}
			w.logVerdicts(req)
		}
	}
	return errors.Join(errs...)
}

func (w *Watcher) logVerdicts(req *structs.ApplyDeploymentAllocHealthRequest) {
	if u := req.DeploymentUpdate; u != nil && u.Status == structs.DeploymentStatusSuccessful {
		w.logger.Debug("deployment successful", "deployment_id", req.DeploymentID)
	}
	if len(req.HealthyAllocationIDs)+len(req.UnhealthyAllocationIDs) == 0 {
		return
	}
	w.logger.Debug("alloc health", "deployment_id", req.DeploymentID,
		"healthy", len(req.HealthyAllocationIDs), "unhealthy", len(req.UnhealthyAllocationIDs))
}

// maxEvalsPerEntry bounds the Raft entry writeEvals makes (an eval is
// about 0.7 KB encoded).
const maxEvalsPerEntry = 256

// writeEvals writes the pass's eval-only decisions, maxEvalsPerEntry to
// an entry. A deployment whose eval was not written is not quiet (its
// decision wrote something), so the next pass decides it again.
func (w *Watcher) writeEvals(evals []*structs.Evaluation) error {
	for len(evals) > 0 {
		n := min(len(evals), maxEvalsPerEntry)
		if _, err := w.cfg.Raft.UpsertEvals(evals[:n]); err != nil {
			return fmt.Errorf("writing %d evals: %w", n, err)
		}
		evals = evals[n:]
	}
	return nil
}

// addAll adds every channel of from to ws.
func addAll(ws, from memdb.WatchSet) {
	for ch := range from {
		ws[ch] = struct{}{}
	}
}

// readView reads what decide needs about d, watching the job and the
// deployment's allocs.
func readView(store *state.StateStore, ws memdb.WatchSet, d *structs.Deployment) (*view, error) {
	job, err := store.JobByID(ws, d.Namespace, d.JobID)
	if err != nil {
		return nil, fmt.Errorf("deployment %q: job %q: %w", d.ID, d.JobID, err)
	}
	allocs, err := store.AllocsByDeployment(ws, d.ID)
	if err != nil {
		return nil, fmt.Errorf("deployment %q: listing allocs: %w", d.ID, err)
	}
	evals, err := store.EvalsByJob(nil, d.Namespace, d.JobID)
	if err != nil {
		return nil, fmt.Errorf("deployment %q: listing evals: %w", d.ID, err)
	}
	v := &view{d: d, job: job, allocs: allocs}
	for _, e := range evals {
		v.lastEvalIndex = max(v.lastEvalIndex, e.CreateIndex)
	}
	return v, nil
}

// apply writes a decision: a cancellation alone; else the verdicts with
// the failure, revert and eval they bring in one entry (or the failure,
// or the eval, alone); then the promotion or its description.
func (w *Watcher) apply(store *state.StateStore, v *view, dec decision, now time.Time) error {
	d, raft := v.d, w.cfg.Raft
	if dec.cancel != nil {
		if _, err := raft.UpdateDeploymentStatus(dec.cancel, nil, nil); err != nil {
			return fmt.Errorf("cancelling: %w", err)
		}
		w.logger.Info("deployment cancelled", "deployment_id", d.ID, "job_id", d.JobID, "reason", dec.cancel.StatusDescription)
		return nil
	}
	var eval *structs.Evaluation
	if dec.eval {
		eval = newEval(d, v.job, now)
	}
	var revert *structs.Job
	if dec.fail != nil && dec.revert {
		var err error
		revert, dec.fail.StatusDescription, err = revertTarget(store, v, dec.fail.StatusDescription, now)
		if err != nil {
			return err
		}
	}
	switch {
	case dec.verdicts():
		req := healthRequest(d, dec, revert, eval, now)
		if _, err := raft.UpdateDeploymentAllocHealth(req); err != nil {
			return fmt.Errorf("writing alloc health: %w", err)
		}
		w.logVerdicts(req)
	case dec.fail != nil:
		if _, err := raft.UpdateDeploymentStatus(dec.fail, revert, eval); err != nil {
			return fmt.Errorf("failing: %w", err)
		}
	case dec.succeed != nil:
		if _, err := raft.UpdateDeploymentStatus(dec.succeed, nil, nil); err != nil {
			return fmt.Errorf("marking successful: %w", err)
		}
		w.logger.Debug("deployment successful", "deployment_id", d.ID)
		return nil
	case eval != nil:
		if _, err := raft.UpsertEvals([]*structs.Evaluation{eval}); err != nil {
			return fmt.Errorf("writing eval: %w", err)
		}
	}
	if dec.fail != nil {
		w.logger.Info("deployment failed", "deployment_id", d.ID, "job_id", d.JobID, "reason", dec.fail.StatusDescription)
		return nil
	}
	if dec.needsPromotion {
		u := statusUpdate(d, structs.DeploymentStatusRunning, structs.DeploymentStatusDescriptionRunningNeedsPromotion)
		if _, err := raft.UpdateDeploymentStatus(u, nil, nil); err != nil {
			return fmt.Errorf("describing: %w", err)
		}
	}
	if dec.promote {
		req := &structs.ApplyDeploymentPromoteRequest{
			DeploymentPromoteRequest: structs.DeploymentPromoteRequest{DeploymentID: d.ID, All: true},
			Eval:                     newEval(d, v.job, now),
		}
		if _, err := raft.UpdateDeploymentPromotion(req); err != nil {
			return fmt.Errorf("promoting: %w", err)
		}
		w.logger.Info("deployment canaries auto-promoted", "deployment_id", d.ID, "job_id", d.JobID)
	}
	return nil
}

// healthRequest is the entry of a decision's verdicts, with the failure
// (and the job version it reverts to) and the eval the decision brings.
func healthRequest(d *structs.Deployment, dec decision, revert *structs.Job, eval *structs.Evaluation, now time.Time) *structs.ApplyDeploymentAllocHealthRequest {
	return &structs.ApplyDeploymentAllocHealthRequest{
		DeploymentAllocHealthRequest: structs.DeploymentAllocHealthRequest{
			DeploymentID:           d.ID,
			HealthyAllocationIDs:   dec.healthy,
			UnhealthyAllocationIDs: dec.unhealthy,
		},
		Timestamp:        now,
		DeploymentUpdate: dec.deploymentUpdate(),
		Job:              revert,
		Eval:             eval,
	}
}

// newEval is the eval that makes the scheduler continue (or revert) the
// deployment's roll-out.
func newEval(d *structs.Deployment, job *structs.Job, now time.Time) *structs.Evaluation {
	prio := d.EvalPriority
	if prio == 0 {
		prio = job.Priority
	}
	return &structs.Evaluation{
		ID:             structs.GenerateUUID(),
		Namespace:      d.Namespace,
		Priority:       prio,
		Type:           job.Type,
		TriggeredBy:    structs.EvalTriggerDeploymentWatcher,
		JobID:          d.JobID,
		JobModifyIndex: job.JobModifyIndex,
		DeploymentID:   d.ID,
		Status:         structs.EvalStatusPending,
		CreateTime:     now.UnixNano(),
		ModifyTime:     now.UnixNano(),
	}
}

// revertTarget finds the job version a failed deployment reverts to: the
// newest stable version older than the deployment's, of the same job
// instance. It returns the job to register (nil when there is none, or
// when it has the current specification) and the failure's description.
func revertTarget(store *state.StateStore, v *view, base string, now time.Time) (*structs.Job, string, error) {
	versions, err := store.JobVersionsByID(nil, v.d.Namespace, v.d.JobID)
	if err != nil {
		return nil, "", fmt.Errorf("listing versions of job %q: %w", v.d.JobID, err)
	}
	for _, j := range versions { // newest first
		if !j.Stable || j.Version >= v.d.JobVersion || j.CreateIndex != v.job.CreateIndex {
			continue
		}
		if !j.SpecChanged(v.job) {
			return nil, structs.DeploymentStatusDescriptionRollbackNoop(base, j.Version), nil
		}
		revert := j.RevertedCopy()
		revert.SubmitTime = now.UnixNano()
		return revert, structs.DeploymentStatusDescriptionRollback(base, j.Version), nil
	}
	return nil, structs.DeploymentStatusDescriptionNoRollbackTarget(base), nil
}
