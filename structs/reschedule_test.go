package structs_test

import (
	"slices"
	"testing"
	"time"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

const s = time.Second

func timeAt(sec int64) time.Time { return time.Unix(sec, 0).UTC() }

func TestReschedulePolicyDelays(t *testing.T) {
	cases := []struct {
		name string
		p    structs.ReschedulePolicy
		n    int
		want []time.Duration
	}{
		{"constant", structs.ReschedulePolicy{Delay: 5 * s, DelayFunction: "constant"}, 4,
			[]time.Duration{5 * s, 5 * s, 5 * s, 5 * s}},
		// each the previous doubled: 5, 10, 20, 40, then 80 capped to 60
		{"exponential capped", structs.ReschedulePolicy{Delay: 5 * s, DelayFunction: "exponential", MaxDelay: 60 * s}, 6,
			[]time.Duration{5 * s, 10 * s, 20 * s, 40 * s, 60 * s, 60 * s}},
		// each the sum of the previous two: 5, 5, 10, 15, 25, 40, then 65 capped to 60
		{"fibonacci capped", structs.ReschedulePolicy{Delay: 5 * s, DelayFunction: "fibonacci", MaxDelay: 60 * s}, 8,
			[]time.Duration{5 * s, 5 * s, 10 * s, 15 * s, 25 * s, 40 * s, 60 * s, 60 * s}},
		{"no cap saturates instead of wrapping", structs.ReschedulePolicy{Delay: time.Hour, DelayFunction: "exponential"}, 80, nil},
		{"none asked", structs.ReschedulePolicy{Delay: 5 * s}, 0, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := c.p.Delays(c.n)
			if c.want != nil && !slices.Equal(got, c.want) {
				t.Fatalf("Delays(%d) = %v, want %v", c.n, got, c.want)
			}
			for i := 1; i < len(got); i++ {
				if got[i] < got[i-1] {
					t.Fatalf("delay %d (%s) shrank after %s", i, got[i], got[i-1])
				}
			}
		})
	}
}

func TestReschedulePolicyEnabled(t *testing.T) {
	for _, c := range []struct {
		p    *structs.ReschedulePolicy
		want bool
	}{
		{nil, false},
		{&structs.ReschedulePolicy{}, false},
		{&structs.ReschedulePolicy{Attempts: 1}, true},
		{&structs.ReschedulePolicy{Unlimited: true}, true},
	} {
		if got := c.p.Enabled(); got != c.want {
			t.Errorf("%+v: Enabled = %v", c.p, got)
		}
	}
}

// rescheduleAlloc is a failed alloc of a job whose group has policy p,
// whose task finished at failedAt (seconds), and whose chain so far was
// replaced at the given times (seconds) with the given delays.
func rescheduleAlloc(p *structs.ReschedulePolicy, failedAt int64, history ...structs.RescheduleEvent) *structs.Allocation {
	job := mock.BatchJob()
	job.TaskGroups[0].ReschedulePolicy = p
	a := mock.Alloc(mock.ForJob(job, 0), mock.ClientStatus(structs.AllocClientStatusFailed))
	a.TaskStates = map[string]*structs.TaskState{"worker": {State: "dead", Failed: true, FinishedAt: timeAt(failedAt)}}
	if len(history) > 0 {
		a.RescheduleTracker = &structs.RescheduleTracker{}
		for i := range history {
			a.RescheduleTracker.Events = append(a.RescheduleTracker.Events, &history[i])
		}
	}
	return a
}

func ev(atSec int64, delay time.Duration) structs.RescheduleEvent {
	return structs.RescheduleEvent{RescheduleTime: timeAt(atSec).UnixNano(), Delay: delay}
}

func TestNextDelay(t *testing.T) {
	exp := &structs.ReschedulePolicy{Delay: 5 * s, DelayFunction: "exponential", MaxDelay: 60 * s, Unlimited: true}
	fib := &structs.ReschedulePolicy{Delay: 5 * s, DelayFunction: "fibonacci", MaxDelay: 60 * s, Unlimited: true}
	con := &structs.ReschedulePolicy{Delay: 5 * s, DelayFunction: "constant", Unlimited: true}
	cases := []struct {
		name string
		a    *structs.Allocation
		want time.Duration
	}{
		{"first failure takes the base delay", rescheduleAlloc(exp, 100), 5 * s},
		{"constant stays", rescheduleAlloc(con, 100, ev(10, 5*s), ev(20, 5*s)), 5 * s},
		// last delay 10s doubled
		{"exponential doubles", rescheduleAlloc(exp, 100, ev(10, 5*s), ev(20, 10*s)), 20 * s},
		// 40s doubled is 80s, capped to 60s; the alloc failed 5s after its
		// replacement (95 -> 100), well within the cap, so no reset
		{"exponential capped", rescheduleAlloc(exp, 100, ev(90, 20*s), ev(95, 40*s)), 60 * s},
		// capped at 60s, but the alloc ran 100s (> 60s) since it was placed:
		// the chain was healthy long enough, start again from 5s
		{"exponential reset after a healthy run", rescheduleAlloc(exp, 200, ev(50, 40*s), ev(100, 60*s)), 5 * s},
		{"fibonacci second step repeats the base", rescheduleAlloc(fib, 100, ev(10, 5*s)), 5 * s},
		// 10s + 15s
		{"fibonacci sums the last two", rescheduleAlloc(fib, 100, ev(10, 10*s), ev(20, 15*s)), 25 * s},
		// 40s + 60s = 100s, capped to 60s
		{"fibonacci capped", rescheduleAlloc(fib, 100, ev(80, 40*s), ev(90, 60*s)), 60 * s},
		// the series hit the cap and was reset to 5s: it starts over at 5s
		{"fibonacci restarts after a reset", rescheduleAlloc(fib, 100, ev(80, 60*s), ev(90, 5*s)), 5 * s},
		{"no policy", rescheduleAlloc(nil, 100), 0},
	}
	for _, c := range cases {
		if got := c.a.NextDelay(); got != c.want {
			t.Errorf("%s: NextDelay = %s, want %s", c.name, got, c.want)
		}
	}
}

func TestRescheduleEligible(t *testing.T) {
	limited := &structs.ReschedulePolicy{Attempts: 2, Interval: 100 * s, Delay: 5 * s, DelayFunction: "constant"}
	cases := []struct {
		name string
		p    *structs.ReschedulePolicy
		a    *structs.Allocation
		want bool
	}{
		{"no policy", nil, rescheduleAlloc(nil, 500), false},
		{"disabled", &structs.ReschedulePolicy{}, rescheduleAlloc(nil, 500), false},
		{"unlimited", &structs.ReschedulePolicy{Unlimited: true}, rescheduleAlloc(nil, 500, ev(1, 0), ev(2, 0), ev(3, 0)), true},
		{"first failure", limited, rescheduleAlloc(nil, 500), true},
		// one attempt at 450, within [400, 500]: 1 < 2
		{"one attempt in the interval", limited, rescheduleAlloc(nil, 500, ev(450, 5*s)), true},
		// attempts at 420 and 450 are both within the last 100s: 2 == 2
		{"attempts used up", limited, rescheduleAlloc(nil, 500, ev(420, 5*s), ev(450, 5*s)), false},
		// 300 is 200s before the failure, outside the interval: only 450 counts
		{"old attempts expire", limited, rescheduleAlloc(nil, 500, ev(300, 5*s), ev(450, 5*s)), true},
	}
	for _, c := range cases {
		if got := c.a.RescheduleEligible(c.p, timeAt(500)); got != c.want {
			t.Errorf("%s: RescheduleEligible = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestNextRescheduleTime(t *testing.T) {
	limited := &structs.ReschedulePolicy{Attempts: 1, Interval: time.Hour, Delay: 30 * s, DelayFunction: "constant"}
	unlimited := &structs.ReschedulePolicy{Delay: 30 * s, DelayFunction: "exponential", MaxDelay: time.Hour, Unlimited: true}
	tooSlow := &structs.ReschedulePolicy{Attempts: 3, Interval: 60 * s, Delay: 40 * s, DelayFunction: "exponential", MaxDelay: time.Hour}
	cases := []struct {
		name     string
		a        *structs.Allocation
		at       int64
		eligible bool
	}{
		// failed at 1000, delay 30s
		{"first failure", rescheduleAlloc(limited, 1000), 1030, true},
		{"attempt used", rescheduleAlloc(limited, 1000, ev(900, 30*s)), 1030, false},
		// last delay 60s doubled: 1000 + 120
		{"unlimited grows", rescheduleAlloc(unlimited, 1000, ev(800, 30*s), ev(900, 60*s)), 1120, true},
		// next delay 40s doubled = 80s, not less than the 60s interval
		{"delay beyond the interval", rescheduleAlloc(tooSlow, 1000, ev(990, 40*s)), 1080, false},
		{"stopped by the server", func() *structs.Allocation {
			a := rescheduleAlloc(limited, 1000)
			a.DesiredStatus = structs.AllocDesiredStatusStop
			return a
		}(), 0, false},
		{"completed", func() *structs.Allocation {
			a := rescheduleAlloc(limited, 1000)
			a.ClientStatus = structs.AllocClientStatusComplete
			return a
		}(), 0, false},
		// no task finished: the failure is timed by the last modification
		{"no task states", func() *structs.Allocation {
			a := rescheduleAlloc(limited, 0)
			a.TaskStates = nil
			a.ModifyTime = timeAt(2000).UnixNano()
			return a
		}(), 2030, true},
		{"nothing known about the failure time", func() *structs.Allocation {
			a := rescheduleAlloc(limited, 0)
			a.TaskStates, a.ModifyTime = nil, 0
			return a
		}(), 0, false},
	}
	for _, c := range cases {
		at, ok := c.a.NextRescheduleTime()
		if ok != c.eligible || (c.at != 0 && !at.Equal(timeAt(c.at))) {
			t.Errorf("%s: NextRescheduleTime = %v %v, want %v %v", c.name, at, ok, timeAt(c.at), c.eligible)
		}
	}
	// A lost alloc has no failure time of its own: it is timed at now.
	lost := rescheduleAlloc(limited, 0)
	lost.TaskStates, lost.ClientStatus = nil, structs.AllocClientStatusLost
	if at, ok := lost.NextRescheduleTimeByTime(timeAt(5000)); !ok || !at.Equal(timeAt(5030)) {
		t.Errorf("lost: %v %v", at, ok)
	}
}

func TestNewRescheduleTracker(t *testing.T) {
	limited := &structs.ReschedulePolicy{Attempts: 3, Interval: 100 * s, Delay: 5 * s, DelayFunction: "constant"}
	prev := rescheduleAlloc(limited, 1000, ev(850, 5*s), ev(950, 5*s))
	tr := structs.NewRescheduleTracker(prev, timeAt(1000), 5*s)
	// 850 is 150s old: outside the 100s interval, dropped; 950 kept; 1000 added
	if len(tr.Events) != 2 || tr.Events[0].RescheduleTime != timeAt(950).UnixNano() ||
		tr.Events[1].PrevAllocID != prev.ID || tr.Events[1].PrevNodeID != prev.NodeID || tr.Events[1].Delay != 5*s {
		t.Fatalf("events %+v %+v", tr.Events[0], tr.Events[len(tr.Events)-1])
	}
	tr.Events[0].Delay = time.Hour
	if prev.RescheduleTracker.Events[1].Delay != 5*s {
		t.Fatal("tracker shares events with the previous alloc")
	}

	unlimited := &structs.ReschedulePolicy{Delay: 5 * s, DelayFunction: "constant", Unlimited: true}
	var history []structs.RescheduleEvent
	for i := range 15 {
		history = append(history, ev(int64(i), 5*s))
	}
	long := structs.NewRescheduleTracker(rescheduleAlloc(unlimited, 1000, history...), timeAt(1000), 5*s)
	// the 10 most recent (5..14) plus the new one
	if len(long.Events) != 11 || long.Events[0].RescheduleTime != timeAt(5).UnixNano() {
		t.Fatalf("kept %d events", len(long.Events))
	}
}
