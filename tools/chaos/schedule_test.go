package main

import (
	"strings"
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

func TestMakeSchedule(t *testing.T) {
	cfg := scheduleConfig{Kills: 30, Partitions: 6, Stops: 3, Delays: 2, Flaps: 2, ClockJumps: 2, FlapHold: 10 * time.Second}
	a, b := makeSchedule(42, cfg), makeSchedule(42, cfg)
	must.Eq(t, a, b) // the same seed replays the same schedule
	must.NotEq(t, a, makeSchedule(43, cfg))

	count := map[faultKind]int{}
	for _, f := range a {
		count[f.Kind]++
		switch f.Kind {
		case partitionLeader, partitionFollower:
			// Long enough for the minority probe to be final.
			must.GreaterEq(t, 2*time.Second+rpcHold+time.Second, f.Hold)
		case nodeFlap:
			must.GreaterEq(t, cfg.FlapHold, f.Hold)
		case delayServer:
			must.Positive(t, f.Delay)
		case clockJump:
			must.Between(t, time.Minute, f.Jump.Abs(), 2*time.Hour)
		}
	}
	must.Eq(t, map[faultKind]int{killLeader: 20, killFollower: 10, partitionLeader: 3, partitionFollower: 3,
		stopServer: 3, delayServer: 2, nodeFlap: 2, clockJump: 2}, count)

	var b2 strings.Builder
	printSchedule(&b2, 42, a)
	must.StrContains(t, b2.String(), "schedule (seed 42, 45 faults):")
}

func TestParseOptions(t *testing.T) {
	bin := t.TempDir() + "/nomad"
	must.NoError(t, writeFile(bin))
	o, err := parseOptions([]string{"-nomad", bin, "-kills", "100", "-partitions", "20", "-seed", "9"})
	must.NoError(t, err)
	must.Eq(t, scheduleConfig{Kills: 100, Partitions: 20, Stops: 10, Delays: 5, Flaps: 10, ClockJumps: 10, FlapHold: 12 * time.Second}, o.sched)
	must.Eq(t, uint64(9), o.seed)

	o, err = parseOptions([]string{"-nomad", bin, "-kills", "0", "-partitions", "0", "-stops", "0"})
	must.NoError(t, err)
	must.Eq(t, 0, o.sched.Stops)
	must.Eq(t, 1, o.sched.Flaps)

	_, err = parseOptions([]string{"-nomad", bin, "-servers", "4"})
	must.ErrorContains(t, err, "-servers must be 3 or 5")
	_, err = parseOptions([]string{"-nomad", t.TempDir() + "/missing"})
	must.ErrorContains(t, err, "nomad binary")
}
