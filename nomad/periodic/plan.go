package periodic

import (
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/go-memdb"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// launch is one child to launch (or a launch skipped).
type launch struct {
	template *structs.Job
	at       time.Time
}

// passPlan is what one pass decided.
type passPlan struct {
	launches []launch
	// skipped are launches passed over because a child still runs.
	skipped []launch
	// firstSeen are templates with nothing to count launches from yet:
	// no launch recorded, no submission time. They count from now.
	firstSeen []structs.NamespacedID
	// templates are the templates that may launch.
	templates map[structs.NamespacedID]bool
	// wakeAt is the earliest launch still ahead; zero for none.
	wakeAt time.Time
}

func (p *passPlan) wakeBy(t time.Time) {
	if !t.IsZero() && (p.wakeAt.IsZero() || t.Before(p.wakeAt)) {
		p.wakeAt = t
	}
}

// planLaunches decides which templates launch at now (see the package
// doc), watching the set of templates in ws. after holds, per template,
// a time at or before which no launch is wanted (launches skipped for
// overlap, first sight); it is read, not changed. Templates whose config
// cannot be read are reported in the error, the others still planned.
func planLaunches(store *state.StateStore, ws memdb.WatchSet, now time.Time, after map[structs.NamespacedID]time.Time) (*passPlan, error) {
	templates, err := store.PeriodicJobs(ws)
	if err != nil {
		return nil, fmt.Errorf("periodic: listing periodic jobs: %w", err)
	}
	p := &passPlan{templates: map[structs.NamespacedID]bool{}}
	var errs []error
	for _, t := range templates {
		if t.Stop || t.IsParameterized() {
			continue
		}
		k := t.NamespacedID()
		p.templates[k] = true
		base, err := launchBase(store, t, after[k])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if base.IsZero() {
			p.firstSeen = append(p.firstSeen, k)
			base = now
		}
		due, err := t.Periodic.Next(base)
		if err != nil {
			errs = append(errs, fmt.Errorf("job %q: %w", t.ID, err))
			continue
		}
		if due.IsZero() {
			continue // its specs never fire again
		}
		if due.After(now) {
			p.wakeBy(due)
			continue
		}
		at := due
		if again, _ := t.Periodic.Next(due); !again.IsZero() && !again.After(now) {
			// Several launches passed with no leader: one, now.
			at = now.Truncate(time.Second)
		}
		next, _ := t.Periodic.Next(at)
		p.wakeBy(next)
		if t.Periodic.ProhibitOverlap {
			running, err := runningChild(store, t)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if running {
				p.skipped = append(p.skipped, launch{template: t, at: at})
				continue
			}
		}
		p.launches = append(p.launches, launch{template: t, at: at})
	}
	return p, errors.Join(errs...)
}

// launchBase is the time a template's next launch counts from: the latest
// of its last recorded launch, its current version's submission, and
// after. Zero when none is known.
func launchBase(store *state.StateStore, t *structs.Job, after time.Time) (time.Time, error) {
	base := after
	if t.SubmitTime != 0 {
		if s := time.Unix(0, t.SubmitTime); s.After(base) {
			base = s
		}
	}
	l, err := store.PeriodicLaunchByID(nil, t.Namespace, t.ID)
	if err != nil {
		return time.Time{}, fmt.Errorf("job %q: reading its last launch: %w", t.ID, err)
	}
	if l != nil && l.Launch.After(base) {
		base = l.Launch
	}
	return base, nil
}

// runningChild reports whether a child the template launched is not dead
// yet (its evals still pending, or its allocs still running).
func runningChild(store *state.StateStore, t *structs.Job) (bool, error) {
	children, err := store.JobsByIDPrefix(nil, t.Namespace, t.ID+structs.PeriodicLaunchSuffix)
	if err != nil {
		return false, fmt.Errorf("job %q: listing its children: %w", t.ID, err)
	}
	for _, c := range children {
		if c.ParentID == t.ID && c.Status != structs.JobStatusDead {
			return true, nil
		}
	}
	return false, nil
}

// child derives the job a template launches at the launch time.
func child(template *structs.Job, at, now time.Time) *structs.Job {
	c := template.Copy()
	c.ParentID = template.ID
	c.ID = structs.PeriodicChildID(template.ID, at)
	c.Name = c.ID
	c.Periodic = nil
	c.Status, c.StatusDescription = "", ""
	c.Stable = false
	c.Version = 0
	c.CreateIndex, c.ModifyIndex, c.JobModifyIndex = 0, 0, 0
	c.SubmitTime = now.UnixNano()
	return c
}

// launchEval is the eval that schedules a launched child.
func launchEval(c *structs.Job, now time.Time) *structs.Evaluation {
	return &structs.Evaluation{
		ID:          structs.GenerateUUID(),
		Namespace:   c.Namespace,
		Priority:    c.Priority,
		Type:        c.Type,
		TriggeredBy: structs.EvalTriggerPeriodicJob,
		JobID:       c.ID,
		Status:      structs.EvalStatusPending,
		CreateTime:  now.UnixNano(),
		ModifyTime:  now.UnixNano(),
	}
}
