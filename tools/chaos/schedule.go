package main

import (
	"fmt"
	"io"
	"math/rand/v2"
	"time"
)

// faultKind is one kind of fault the harness injects.
type faultKind string

const (
	killLeader        faultKind = "kill-leader"
	killFollower      faultKind = "kill-follower"
	stopServer        faultKind = "stop-server"
	partitionLeader   faultKind = "partition-leader"
	partitionFollower faultKind = "partition-follower"
	delayServer       faultKind = "delay-server"
	nodeFlap          faultKind = "node-flap"
	fullDisk          faultKind = "full-disk"
	clockJump         faultKind = "clock-jump"
)

// faultKinds lists the kinds in the order summaries print them.
var faultKinds = []faultKind{killLeader, killFollower, stopServer, partitionLeader, partitionFollower, delayServer, nodeFlap, fullDisk, clockJump}

// fault is one entry of the schedule. Targets are roles resolved when
// the fault runs (the leader, or follower number Pick modulo the
// followers), so the same seed replays the same sequence of kinds,
// roles and durations whichever server happens to lead.
type fault struct {
	Kind faultKind
	// Pick chooses among the followers (stop-server: among all servers).
	Pick int
	// Hold is how long the fault lasts (down, stopped, isolated,
	// delayed, nodes gone, or clock moved); Delay the latency of
	// delay-server; Jump how far clock-jump moves the server's clock
	// (either way).
	Hold, Delay, Jump time.Duration
	// Gap is the quiet time after recovery before the next fault.
	Gap time.Duration
}

func (f fault) String() string {
	s := fmt.Sprintf("%-18s pick=%d hold=%s", f.Kind, f.Pick, f.Hold)
	if f.Delay > 0 {
		s += fmt.Sprintf(" delay=%s", f.Delay)
	}
	if f.Jump != 0 {
		s += fmt.Sprintf(" jump=%s", f.Jump)
	}
	return s + fmt.Sprintf(" gap=%s", f.Gap)
}

// scheduleConfig is how many faults of each kind to schedule.
type scheduleConfig struct {
	Kills, Partitions, Stops, Delays, Flaps, FullDisks, ClockJumps int
	// FlapHold is the least time flaky nodes stay away: past their
	// heartbeat TTL and grace, so that the servers mark them down.
	FlapHold time.Duration
}

// between returns a duration in [lo, hi).
func between(r *rand.Rand, lo, hi time.Duration) time.Duration {
	return lo + time.Duration(r.Int64N(int64(hi-lo)))
}

// makeSchedule draws the faults from seed: kills split between the
// leader (two in three) and followers, partitions half of the leader
// and half of a follower, shuffled together. A partition lasts long
// enough (at least 10 s) for a write sent to the minority after 2 s to
// have been refused or given up for good before it heals.
func makeSchedule(seed uint64, cfg scheduleConfig) []fault {
	r := rand.New(rand.NewPCG(seed, seed^0x5eed))
	var out []fault
	add := func(n int, mk func(i int) fault) {
		for i := range n {
			f := mk(i)
			f.Pick = r.IntN(7)
			f.Gap = between(r, 500*time.Millisecond, 2*time.Second)
			out = append(out, f)
		}
	}
	add(cfg.Kills, func(i int) fault {
		k := killFollower
		if i%3 != 2 {
			k = killLeader
		}
		return fault{Kind: k, Hold: between(r, 200*time.Millisecond, 3*time.Second)}
	})
	add(cfg.Partitions, func(i int) fault {
		k := partitionLeader
		if i%2 == 1 {
			k = partitionFollower
		}
		return fault{Kind: k, Hold: between(r, 10*time.Second, 14*time.Second)}
	})
	add(cfg.Stops, func(int) fault {
		return fault{Kind: stopServer, Hold: between(r, time.Second, 6*time.Second)}
	})
	add(cfg.Delays, func(int) fault {
		return fault{Kind: delayServer, Hold: between(r, 3*time.Second, 8*time.Second), Delay: between(r, 20*time.Millisecond, 300*time.Millisecond)}
	})
	add(cfg.FullDisks, func(int) fault {
		return fault{Kind: fullDisk, Hold: between(r, 6*time.Second, 12*time.Second)}
	})
	add(cfg.Flaps, func(int) fault {
		return fault{Kind: nodeFlap, Hold: between(r, cfg.FlapHold, cfg.FlapHold+5*time.Second)}
	})
	// A clock jump moves one server's clock by a minute to two hours,
	// forward or back, for a few seconds, then puts it back: an
	// operator's date -s or a bad NTP step, and its correction.
	add(cfg.ClockJumps, func(int) fault {
		jump := between(r, time.Minute, 2*time.Hour)
		if r.IntN(2) == 0 {
			jump = -jump
		}
		return fault{Kind: clockJump, Hold: between(r, 5*time.Second, 15*time.Second), Jump: jump.Round(time.Second)}
	})
	r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// printSchedule writes the schedule, one fault a line.
func printSchedule(w io.Writer, seed uint64, faults []fault) {
	fmt.Fprintf(w, "schedule (seed %d, %d faults):\n", seed, len(faults))
	for i, f := range faults {
		fmt.Fprintf(w, "  %3d %s\n", i+1, f)
	}
}
