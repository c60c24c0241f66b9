package deploymentwatcher

import (
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/scheduler"
	"github.com/opennomad/nomad/structs"
)

// settle turns the follow-up eval of a roll-out that may be over into
// the deployment's success, when the scheduler agrees nothing else is
// left to do. Such an eval would cost a Raft entry, a trip through the
// broker and a scheduler pass on some server, only for the scheduler to
// mark the deployment successful; for jobs of a few allocs that was a
// third of each job's Raft entries.
//
// The verdicts that complete the roll-out are written first, without an
// eval: the scheduler must see them in state to agree. The next pass
// (the write wakes it) finds them newer than the job's last eval, and
// runs the job's scheduler on its snapshot as a dry run (scheduler.DryRun):
// if the one plan it would submit holds nothing but this deployment's
// success, the watcher writes the success itself; otherwise the eval.
func (w *Watcher) settle(snap *state.StateSnapshot, v *view, dec *decision, now time.Time) {
	if !dec.maybeDone || w.cfg.Schedulers == nil {
		return
	}
	if dec.verdicts() {
		dec.eval = false
		return
	}
	if !dec.eval || !onlySucceeds(w.cfg.Schedulers, &w.dryScratch, snap, v, now) {
		return
	}
	dec.eval = false
	dec.succeed = statusUpdate(v.d, structs.DeploymentStatusSuccessful, structs.DeploymentStatusDescriptionSuccessful)
}

// onlySucceeds reports whether the scheduler, processing the follow-up
// eval of v's deployment against snap now, would submit one plan that
// only marks the deployment successful, and create no eval. Any error of
// the dry run means no: the real eval will meet it. scratch is the
// scheduler's working memory, reused from one dry run to the next as a
// worker reuses its own.
func onlySucceeds(schedulers scheduler.Factories, scratch *scheduler.Scratch, snap *state.StateSnapshot, v *view, now time.Time) bool {
	eval := newEval(v.d, v.job, now)
	planner := &scheduler.DryRun{}
	cfg := &scheduler.Config{Logger: hclog.NewNullLogger(), Now: func() time.Time { return now }, Scratch: scratch}
	sched, err := schedulers.New(eval.Type, cfg, snap.SchedulerView(), planner)
	if err != nil {
		return false
	}
	if err := sched.Process(eval); err != nil {
		return false
	}
	out := planner.Outcome()
	if out.Plans != 1 || len(out.Created) > 0 || out.Reblocked {
		return false
	}
	p := out.Plan
	if len(p.NodeAllocation)+len(p.NodeUpdate)+len(p.NodePreemptions) > 0 || p.Deployment != nil ||
		len(p.DeploymentUpdates) != 1 {
		return false
	}
	u := p.DeploymentUpdates[0]
	return u.DeploymentID == v.d.ID && u.Status == structs.DeploymentStatusSuccessful
}
