package structs

import (
	"slices"
	"time"
)

// RescheduleTracker is the history of replacements that led to an alloc.
// It travels from each failed alloc to its replacement so attempt limits
// and growing delays span the whole chain.
type RescheduleTracker struct {
	Events []*RescheduleEvent
}

// RescheduleEvent records one replacement.
type RescheduleEvent struct {
	// RescheduleTime is when the replacement was made, in Unix nanoseconds.
	RescheduleTime int64
	PrevAllocID    string
	PrevNodeID     string
	Delay          time.Duration
}

// Copy returns a deep copy.
func (r *RescheduleTracker) Copy() *RescheduleTracker {
	if r == nil {
		return nil
	}
	n := &RescheduleTracker{Events: make([]*RescheduleEvent, len(r.Events))}
	for i, e := range r.Events {
		ec := *e
		n.Events[i] = &ec
	}
	return n
}

// ReschedulePolicy returns the policy of the alloc's group, or nil.
func (a *Allocation) ReschedulePolicy() *ReschedulePolicy {
	if tg := a.Job.LookupTaskGroup(a.TaskGroup); tg != nil {
		return tg.ReschedulePolicy
	}
	return nil
}

// LastEventTime is when the alloc's last task finished; failures are timed
// from it, not from when the server heard of them. An alloc whose tasks
// never reported a finish (it failed before starting) is timed from its
// last modification; zero when neither is known.
func (a *Allocation) LastEventTime() time.Time {
	var last time.Time
	for _, s := range a.TaskStates {
		if s.FinishedAt.After(last) {
			last = s.FinishedAt
		}
	}
	if last.IsZero() && a.ModifyTime != 0 {
		return time.Unix(0, a.ModifyTime).UTC()
	}
	return last
}

// attemptsWithin counts replacements in the policy interval before t.
func (a *Allocation) attemptsWithin(p *ReschedulePolicy, t time.Time) int {
	if a.RescheduleTracker == nil {
		return 0
	}
	n := 0
	for _, e := range a.RescheduleTracker.Events {
		if t.UnixNano()-e.RescheduleTime < p.Interval.Nanoseconds() {
			n++
		}
	}
	return n
}

// RescheduleEligible reports whether the policy still allows a replacement
// for an alloc that failed at failTime.
func (a *Allocation) RescheduleEligible(p *ReschedulePolicy, failTime time.Time) bool {
	if p == nil {
		return false
	}
	if p.Unlimited {
		return true
	}
	if p.Attempts <= 0 {
		return false
	}
	return a.attemptsWithin(p, failTime) < p.Attempts
}

// NextDelay is how long after its failure the alloc may be replaced. The
// delay grows along the chain of replacements by the policy's function and
// is capped by MaxDelay; once a chain has been healthy for longer than the
// cap it starts again from the base delay.
func (a *Allocation) NextDelay() time.Duration {
	p := a.ReschedulePolicy()
	if p == nil {
		return 0
	}
	if a.RescheduleTracker == nil || len(a.RescheduleTracker.Events) == 0 {
		return p.Delay
	}
	events := a.RescheduleTracker.Events
	last := events[len(events)-1]
	var d time.Duration
	switch p.DelayFunction {
	case RescheduleDelayExponential:
		d = saturatingAdd(last.Delay, last.Delay)
	case RescheduleDelayFibonacci:
		if len(events) < 2 {
			d = p.Delay
			break
		}
		prev := events[len(events)-2]
		if prev.Delay == p.MaxDelay && last.Delay == p.Delay {
			// The previous series hit the cap and was reset: restart it.
			d = last.Delay
		} else {
			d = saturatingAdd(last.Delay, prev.Delay)
		}
	default:
		return p.Delay
	}
	if p.MaxDelay > 0 && d > p.MaxDelay {
		d = p.MaxDelay
		if a.LastEventTime().UnixNano()-last.RescheduleTime > d.Nanoseconds() {
			d = p.Delay
		}
	}
	return d
}

// NextRescheduleTime returns when a failed alloc may be replaced and
// whether it may be replaced at all.
func (a *Allocation) NextRescheduleTime() (time.Time, bool) {
	failTime := a.LastEventTime()
	p := a.ReschedulePolicy()
	if a.DesiredStatus == AllocDesiredStatusStop || a.ClientStatus != AllocClientStatusFailed ||
		failTime.IsZero() || p == nil {
		return time.Time{}, false
	}
	return a.nextRescheduleTime(failTime, p)
}

// NextRescheduleTimeByTime is NextRescheduleTime for allocs without task
// states (lost on a down node): the failure is timed at now.
func (a *Allocation) NextRescheduleTimeByTime(now time.Time) (time.Time, bool) {
	p := a.ReschedulePolicy()
	if p == nil {
		return time.Time{}, false
	}
	return a.nextRescheduleTime(now, p)
}

func (a *Allocation) nextRescheduleTime(failTime time.Time, p *ReschedulePolicy) (time.Time, bool) {
	delay := a.NextDelay()
	next := failTime.Add(delay)
	if p.Unlimited {
		return next, true
	}
	if p.Attempts <= 0 {
		return next, false
	}
	eligible := a.attemptsWithin(p, failTime) < p.Attempts && delay < p.Interval
	return next, eligible
}

// NewRescheduleTracker builds the tracker for a replacement of prev made at
// now: prev's history plus one event. The history is trimmed to what the
// policy can still look at, so a long-lived unlimited chain stays small.
func NewRescheduleTracker(prev *Allocation, now time.Time, delay time.Duration) *RescheduleTracker {
	var events []*RescheduleEvent
	if prev.RescheduleTracker != nil {
		p := prev.ReschedulePolicy()
		for _, e := range prev.RescheduleTracker.Events {
			keep := p == nil || p.Unlimited || now.UnixNano()-e.RescheduleTime < p.Interval.Nanoseconds()
			if keep {
				ec := *e
				events = append(events, &ec)
			}
		}
		const maxUnlimitedHistory = 10
		if len(events) > maxUnlimitedHistory {
			events = slices.Clone(events[len(events)-maxUnlimitedHistory:])
		}
	}
	events = append(events, &RescheduleEvent{
		RescheduleTime: now.UnixNano(),
		PrevAllocID:    prev.ID,
		PrevNodeID:     prev.NodeID,
		Delay:          delay,
	})
	return &RescheduleTracker{Events: events}
}
