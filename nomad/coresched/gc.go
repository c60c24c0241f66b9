package coresched

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-metrics"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/scheduler"
	"github.com/opennomad/nomad/structs"
)

// maxIDsPerReap bounds the IDs in one deletion Raft entry (about 256 KiB
// of UUIDs): one huge entry would stall the FSM on every server.
const maxIDsPerReap = (1024 * 256) / 36

// Thresholds say how old (since its last change) each kind of terminal
// object must be to be collected.
type Thresholds struct {
	Eval, BatchEval, Job, Node, Deployment time.Duration
}

// Config is what the garbage collector needs of the server it runs in.
type Config struct {
	// RPC calls the server's endpoints in process (Server.RPC): every
	// deletion goes through them, to the leader and Raft.
	RPC func(method string, args, reply interface{}) error
	// Now is the time of the run, on the server's clock.
	Now        time.Time
	Thresholds Thresholds
	Logger     hclog.Logger
}

// CoreScheduler is the garbage collector: the scheduler of "_core" evals.
// It decides on an immutable snapshot what is old and finished enough to
// delete, and deletes it through the RPC endpoints, which go through the
// leader and Raft. Like every scheduler it is run by a worker on any
// server; the leader enqueues its evals straight into the broker (they are
// never written to Raft) every few minutes, and System.GarbageCollect
// enqueues a force-gc eval that ignores the thresholds.
type CoreScheduler struct {
	snap       *state.StateSnapshot
	rpc        func(method string, args, reply interface{}) error
	now        time.Time
	thresholds Thresholds
	logger     hclog.Logger
}

// New returns the garbage collector for one core eval, reading snap and
// deleting through c.RPC. Workers build it for evals of type
// structs.JobTypeCore.
func New(c Config, snap *state.StateSnapshot) scheduler.Scheduler {
	return &CoreScheduler{snap: snap, rpc: c.RPC, now: c.Now, thresholds: c.Thresholds, logger: c.Logger}
}

// Process runs the collection the eval's JobID names (anything after a
// ":" is ignored).
func (c *CoreScheduler) Process(eval *structs.Evaluation) error {
	kind, _, _ := strings.Cut(eval.JobID, ":")
	defer metrics.MeasureSinceWithLabels([]string{"nomad", "core", "gc"}, time.Now(),
		[]metrics.Label{{Name: "kind", Value: kind}})
	switch kind {
	case structs.CoreJobEvalGC:
		return c.evalGC(false)
	case structs.CoreJobJobGC:
		return c.jobGC(false)
	case structs.CoreJobNodeGC:
		return c.nodeGC(false)
	case structs.CoreJobDeploymentGC:
		return c.deploymentGC(false)
	case structs.CoreJobACLExpiredGC:
		return c.aclExpiredGC()
	case structs.CoreJobForceGC:
		// Jobs first, so their evals and allocs go with them; nodes last,
		// once the allocs that kept them are gone.
		for _, gc := range []func(bool) error{c.jobGC, c.evalGC, c.deploymentGC, c.nodeGC} {
			if err := gc(true); err != nil {
				return err
			}
		}
		return c.aclExpiredGC()
	}
	return fmt.Errorf("core scheduler cannot handle job %q", eval.JobID)
}

// cutoff returns the instant before which an object is old enough: now
// minus the threshold, or, when forced, any time at all.
func (c *CoreScheduler) cutoff(threshold time.Duration, force bool) time.Time {
	if force {
		return time.Unix(0, math.MaxInt64)
	}
	return c.now.Add(-threshold)
}

// before reports whether a Unix-nanosecond time lies before cutoff.
func before(unixNano int64, cutoff time.Time) bool {
	return unixNano < cutoff.UnixNano()
}

// evalGC collects terminal evals older than their threshold (longer for
// batch jobs' evals, whose allocs tell users how a run ended) together with
// their allocs, and old terminal allocs of evals that must stay.
func (c *CoreScheduler) evalGC(force bool) error {
	evals, err := c.snap.Evals(nil, structs.AllNamespaces)
	if err != nil {
		return err
	}
	cutoff := c.cutoff(c.thresholds.Eval, force)
	batchCutoff := c.cutoff(c.thresholds.BatchEval, force)
	var gcEvals, gcAllocs []string
	for _, e := range evals {
		cut := cutoff
		if e.Type == structs.JobTypeBatch {
			cut = batchCutoff
		}
		gc, allocs, err := c.gcEval(e, cut, false)
		if err != nil {
			return err
		}
		if gc {
			gcEvals = append(gcEvals, e.ID)
		}
		gcAllocs = append(gcAllocs, allocs...)
	}
	if len(gcEvals) > 0 || len(gcAllocs) > 0 {
		c.logger.Debug("eval GC", "evals", len(gcEvals), "allocs", len(gcAllocs))
	}
	return c.reapEvals(gcEvals, gcAllocs)
}

// gcEval decides whether a terminal eval may go, and which of its allocs
// may. An eval goes only with all of its allocs. The evals of a batch job
// that may still run (not dead, or dead but neither stopped nor collected
// with its job) stay, or its finished work would run again; only allocs
// of its earlier versions go.
func (c *CoreScheduler) gcEval(e *structs.Evaluation, cutoff time.Time, allowBatch bool) (bool, []string, error) {
	if !e.TerminalStatus() || !before(e.ModifyTime, cutoff) {
		return false, nil, nil
	}
	job, err := c.snap.JobByID(nil, e.Namespace, e.JobID)
	if err != nil {
		return false, nil, err
	}
	allocs, err := c.snap.AllocsByEval(nil, e.ID)
	if err != nil {
		return false, nil, err
	}
	if e.Type == structs.JobTypeBatch {
		collect := job == nil || (job.Status == structs.JobStatusDead && (job.Stop || allowBatch))
		if !collect {
			var old []string
			for _, a := range allocs {
				if a.CreateIndex < job.JobModifyIndex && a.TerminalStatus() && before(allocTime(a), cutoff) {
					old = append(old, a.ID)
				}
			}
			return false, old, nil
		}
	}
	gc := true
	var ids []string
	for _, a := range allocs {
		if c.allocCollectable(a, job, cutoff) {
			ids = append(ids, a.ID)
		} else {
			gc = false
		}
	}
	return gc, ids, nil
}

// allocTime is when an alloc last changed, in Unix nanoseconds.
func allocTime(a *structs.Allocation) int64 {
	return max(a.ModifyTime, a.CreateTime)
}

// allocCollectable reports whether an alloc may be deleted: it is
// terminal, old, not running, and nothing still needs it — a failed alloc
// that may yet be rescheduled carries the reschedule history its
// replacement inherits.
func (c *CoreScheduler) allocCollectable(a *structs.Allocation, job *structs.Job, cutoff time.Time) bool {
	if !a.TerminalStatus() || !before(allocTime(a), cutoff) || a.ClientStatus == structs.AllocClientStatusRunning {
		return false
	}
	if job == nil || job.Stop || job.Status == structs.JobStatusDead ||
		a.DesiredStatus == structs.AllocDesiredStatusStop || a.ClientStatus != structs.AllocClientStatusFailed {
		return true
	}
	var policy *structs.ReschedulePolicy
	if tg := job.LookupTaskGroup(a.TaskGroup); tg != nil {
		policy = tg.ReschedulePolicy
	}
	switch {
	case policy == nil || (!policy.Unlimited && policy.Attempts == 0):
		return true
	case a.NextAllocation != "":
		return true // replaced: the history moved on
	case policy.Unlimited:
		return false
	case a.RescheduleTracker == nil || len(a.RescheduleTracker.Events) == 0:
		return false
	}
	last := a.RescheduleTracker.Events[len(a.RescheduleTracker.Events)-1]
	return c.now.UnixNano()-last.RescheduleTime > policy.Interval.Nanoseconds()
}

// jobGC purges jobs the collector may take (dead and stopped, or dead
// batch jobs, and stopped templates) whose last submission is older than
// the threshold, once every eval and alloc of theirs may go too. Evals and
// allocs are deleted first, then the jobs.
func (c *CoreScheduler) jobGC(force bool) error {
	jobs, err := c.snap.GCableJobs(nil)
	if err != nil {
		return err
	}
	cutoff := c.cutoff(c.thresholds.Job, force)
	var (
		gcJobs           []structs.NamespacedID
		gcEvals, gcAlloc []string
	)
	for _, job := range jobs {
		if !before(job.SubmitTime, cutoff) {
			continue
		}
		if summary, err := c.snap.JobSummaryByID(nil, job.Namespace, job.ID); err != nil {
			return err
		} else if summary != nil && summary.Children != nil &&
			summary.Children.Pending+summary.Children.Running > 0 {
			continue // a template whose children still run
		}
		if tagged, err := c.hasTaggedVersion(job); err != nil {
			return err
		} else if tagged {
			continue // a user named a version of it to come back to
		}
		evals, allocs, ok, err := c.jobCollectable(job, cutoff)
		if err != nil {
			return err
		}
		if ok {
			gcJobs = append(gcJobs, job.NamespacedID())
			gcEvals = append(gcEvals, evals...)
			gcAlloc = append(gcAlloc, allocs...)
		}
	}
	if len(gcJobs) == 0 {
		return nil
	}
	c.logger.Debug("job GC", "jobs", len(gcJobs), "evals", len(gcEvals), "allocs", len(gcAlloc))
	if err := c.reapEvals(gcEvals, gcAlloc); err != nil {
		return err
	}
	return c.reapJobs(gcJobs)
}

// jobCollectable returns a job's evals and allocs if all of them may go.
func (c *CoreScheduler) jobCollectable(job *structs.Job, cutoff time.Time) ([]string, []string, bool, error) {
	evals, err := c.snap.EvalsByJob(nil, job.Namespace, job.ID)
	if err != nil {
		return nil, nil, false, err
	}
	var evalIDs, allocIDs []string
	seen := make(map[string]bool)
	for _, e := range evals {
		gc, allocs, err := c.gcEval(e, cutoff, true)
		if err != nil || !gc {
			return nil, nil, false, err
		}
		evalIDs = append(evalIDs, e.ID)
		for _, id := range allocs {
			seen[id] = true
		}
		allocIDs = append(allocIDs, allocs...)
	}
	// Allocs whose eval is already gone must be finished too.
	allocs, err := c.snap.AllocsByJob(nil, job.Namespace, job.ID, false)
	if err != nil {
		return nil, nil, false, err
	}
	for _, a := range allocs {
		if seen[a.ID] {
			continue
		}
		if !c.allocCollectable(a, job, cutoff) {
			return nil, nil, false, nil
		}
		allocIDs = append(allocIDs, a.ID)
	}
	return evalIDs, allocIDs, true, nil
}

// nodeGC removes down nodes that went down longer ago than the threshold
// and hold no live allocs.
func (c *CoreScheduler) nodeGC(force bool) error {
	nodes, err := c.snap.Nodes(nil)
	if err != nil {
		return err
	}
	cutoff := c.cutoff(c.thresholds.Node, force)
	var gc []string
	for _, n := range nodes {
		if !n.TerminalStatus() || !before(time.Unix(n.StatusUpdatedAt, 0).UnixNano(), cutoff) {
			continue
		}
		live, err := c.snap.AllocsByNodeTerminal(nil, n.ID, false)
		if err != nil {
			return err
		}
		if len(live) == 0 {
			gc = append(gc, n.ID)
		}
	}
	if len(gc) == 0 {
		return nil
	}
	c.logger.Debug("node GC", "nodes", len(gc))
	for _, batch := range batches(gc, maxIDsPerReap) {
		var reply structs.NodeUpdateResponse
		if err := c.rpc("Node.Deregister", &structs.NodeDeregisterRequest{NodeIDs: batch}, &reply); err != nil {
			return fmt.Errorf("node GC: %w", err)
		}
	}
	return nil
}

// deploymentGC removes finished deployments older than the threshold that
// no live alloc belongs to.
func (c *CoreScheduler) deploymentGC(force bool) error {
	deployments, err := c.snap.Deployments(nil, structs.AllNamespaces)
	if err != nil {
		return err
	}
	cutoff := c.cutoff(c.thresholds.Deployment, force)
	var gc []string
	for _, d := range deployments {
		if d.Active() || !before(d.ModifyTime, cutoff) {
			continue
		}
		allocs, err := c.snap.AllocsByDeployment(nil, d.ID)
		if err != nil {
			return err
		}
		live := false
		for _, a := range allocs {
			if !a.TerminalStatus() {
				live = true
				break
			}
		}
		if !live {
			gc = append(gc, d.ID)
		}
	}
	if len(gc) == 0 {
		return nil
	}
	c.logger.Debug("deployment GC", "deployments", len(gc))
	for _, batch := range batches(gc, maxIDsPerReap) {
		var reply structs.GenericResponse
		if err := c.rpc("Deployment.Reap", &structs.DeploymentDeleteRequest{Deployments: batch}, &reply); err != nil {
			return fmt.Errorf("deployment GC: %w", err)
		}
	}
	return nil
}

// reapEvals deletes evals and allocs, at most maxIDsPerReap IDs per Raft
// entry; allocs go in the earlier entries, before the evals they belong to.
func (c *CoreScheduler) reapEvals(evals, allocs []string) error {
	for len(evals) > 0 || len(allocs) > 0 {
		req := &structs.EvalDeleteRequest{}
		room := maxIDsPerReap
		n := min(room, len(allocs))
		req.Allocs, allocs = allocs[:n], allocs[n:]
		room -= n
		n = min(room, len(evals))
		req.Evals, evals = evals[:n], evals[n:]
		var reply structs.GenericResponse
		if err := c.rpc("Eval.Reap", req, &reply); err != nil {
			return fmt.Errorf("eval GC: %w", err)
		}
	}
	return nil
}

// reapJobs purges jobs in batches.
func (c *CoreScheduler) reapJobs(jobs []structs.NamespacedID) error {
	for start := 0; start < len(jobs); start += maxIDsPerReap {
		end := min(start+maxIDsPerReap, len(jobs))
		req := &structs.JobBatchDeregisterRequest{Jobs: make(map[structs.NamespacedID]*structs.JobDeregisterOptions, end-start)}
		for _, id := range jobs[start:end] {
			req.Jobs[id] = &structs.JobDeregisterOptions{Purge: true}
		}
		var reply structs.GenericResponse
		if err := c.rpc("Job.BatchDeregister", req, &reply); err != nil {
			return fmt.Errorf("job GC: %w", err)
		}
	}
	return nil
}

// batches splits ids into slices of at most n.
func batches(ids []string, n int) [][]string {
	var out [][]string
	for len(ids) > n {
		out = append(out, ids[:n])
		ids = ids[n:]
	}
	if len(ids) > 0 {
		out = append(out, ids)
	}
	return out
}

// NewEval returns a core eval of the given kind. It is never written
// to Raft; ModifyIndex makes the worker wait until its state is at least
// as new as the leader's was.
func NewEval(kind string, index uint64, now time.Time) *structs.Evaluation {
	return &structs.Evaluation{
		ID:          structs.GenerateUUID(),
		Namespace:   "-",
		Priority:    structs.CoreJobPriority,
		Type:        structs.JobTypeCore,
		TriggeredBy: structs.EvalTriggerScheduled,
		JobID:       kind,
		Status:      structs.EvalStatusPending,
		ModifyIndex: index,
		CreateTime:  now.UnixNano(),
		ModifyTime:  now.UnixNano(),
	}
}

// hasTaggedVersion reports whether a stored version of the job carries a
// version tag, which keeps the job from collection as Nomad does.
func (c *CoreScheduler) hasTaggedVersion(job *structs.Job) (bool, error) {
	versions, err := c.snap.JobVersionsByID(nil, job.Namespace, job.ID)
	if err != nil {
		return false, err
	}
	for _, v := range versions {
		if v.VersionTag != nil {
			return true, nil
		}
	}
	return false, nil
}
