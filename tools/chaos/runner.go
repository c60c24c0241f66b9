package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"time"
)

// result is a run's outcome.
type result struct {
	seed     uint64
	servers  int
	elapsed  time.Duration
	injected map[faultKind]int
	ops      map[string][2]int
	lastErr  map[string]string
	jobs     int
	verdict  *verdict
}

// runChaos runs one whole chaos run: cluster, load, faults, settle,
// invariants.
func runChaos(ctx context.Context, o *options, out io.Writer) (*result, error) {
	start := time.Now()
	faults := makeSchedule(o.seed, o.sched)
	printSchedule(out, o.seed, faults)
	fmt.Fprintf(out, "replay with: -seed %d -servers %d -kills %d -partitions %d -stops %d -delays %d -flaps %d -full-disks %d\n",
		o.seed, o.servers, o.sched.Kills, o.sched.Partitions, o.sched.Stops, o.sched.Delays, o.sched.Flaps, o.sched.FullDisks)

	c, err := startCluster(o.bin, o.servers, o.sched.FullDisks > 0)
	if err != nil {
		return nil, err
	}
	defer func() {
		c.close()
		if o.keep {
			fmt.Fprintf(out, "chaos: kept %s\n", c.dir)
		} else {
			os.RemoveAll(c.dir)
		}
	}()
	if _, err := c.waitHealthy(ctx, 2*time.Minute); err != nil {
		return nil, err
	}
	simCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	err = c.startSims(simCtx, o.nodes, o.flakyNodes)
	cancel()
	if err != nil {
		return nil, err
	}
	nodes, err := steadyNodes(ctx, c, o.nodes)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "chaos: %d servers, %d steady and %d flaky nodes ready; logs under %s\n", o.servers, o.nodes, o.flakyNodes, c.dir)

	vd := newVerdict()
	l := newLedger()
	ld := &load{c: c, l: l, nodes: nodes, workers: o.workers, maxJobs: 12, seed: o.seed, pause: 300 * time.Millisecond}
	loadCtx, stopLoad := context.WithCancel(ctx)
	loadDone := make(chan struct{})
	go func() {
		defer close(loadDone)
		ld.run(loadCtx)
	}()
	// A few seconds of load first, so that the faults hit a cluster with
	// jobs placed.
	sleep(ctx, 5*time.Second)
	in := &injector{c: c, vd: vd, out: out, injected: map[faultKind]int{}}
	injErr := in.run(ctx, faults, start.Add(o.duration))
	stopLoad()
	<-loadDone
	res := &result{seed: o.seed, servers: o.servers, injected: in.injected, ops: l.ops, lastErr: l.lastErr, jobs: len(l.jobs), verdict: vd}
	defer func() { res.elapsed = time.Since(start) }()
	if injErr != nil {
		return res, injErr
	}
	if ctx.Err() != nil {
		return res, ctx.Err()
	}

	// The faults are over: heal, end the drains, let the cluster settle.
	if err := in.healAll(); err != nil {
		return res, err
	}
	leader, err := c.waitHealthy(ctx, 2*time.Minute)
	vd.check(invRecovery, "", err == nil, "after the last fault: %v", err)
	if err != nil {
		return res, err
	}
	if err := ld.undrainAll(ctx); err != nil {
		return res, err
	}
	fmt.Fprintf(out, "chaos: faults over; settling (up to %s)\n", o.settle)
	settle(ctx, leader, o.settle)

	views, err := converge(ctx, c, 60*time.Second)
	if err != nil {
		return res, err
	}
	vd.checkConverged(views)
	jobs := l.snapshot()
	for _, v := range views {
		vd.checkAcknowledged(v, jobs)
		vd.checkAllocs(v)
		vd.checkOvercommit(v)
		vd.checkEvals(v)
		vd.checkMinority(v, in.probes)
		vd.checkNodesReady(v)
	}
	return res, nil
}

// steadyNodes returns the IDs of the steady simulator's nodes.
func steadyNodes(ctx context.Context, c *cluster, want int) ([]string, error) {
	leader, err := c.waitHealthy(ctx, time.Minute)
	if err != nil {
		return nil, err
	}
	list, _, err := leader.api(30 * time.Second).Nodes().List(nil)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range list {
		if strings.HasPrefix(n.Name, "steady-") {
			out = append(out, n.ID)
		}
	}
	if len(out) != want {
		return nil, fmt.Errorf("found %d steady nodes, want %d", len(out), want)
	}
	return out, nil
}

// settle waits until the leader has no pending evaluation and every job
// has its allocations (or a blocked evaluation), or the time is up; the
// checks that follow judge what is left.
func settle(ctx context.Context, leader *server, d time.Duration) {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		v, err := readView(leader)
		if err == nil {
			probe := newVerdict()
			probe.checkEvals(v)
			probe.checkAllocs(v)
			if len(probe.violations) == 0 {
				return
			}
		}
		sleep(ctx, time.Second)
	}
}

// converge reads every server's view until all have the same applied
// index and objects, or the time is up; it returns the last views read,
// the leader's first.
func converge(ctx context.Context, c *cluster, d time.Duration) ([]*view, error) {
	deadline := time.Now().Add(d)
	for {
		leader, err := c.waitHealthy(ctx, time.Minute)
		if err != nil {
			return nil, err
		}
		views := []*view{}
		var readErr error
		for _, s := range append([]*server{leader}, c.followers(leader)...) {
			v, err := readView(s)
			if err != nil {
				readErr = err
				break
			}
			views = append(views, v)
		}
		if readErr == nil {
			same := true
			for _, v := range views[1:] {
				same = same && v.applied == views[0].applied && v.digest() == views[0].digest()
			}
			if same || time.Now().After(deadline) {
				return views, nil
			}
		} else if time.Now().After(deadline) {
			return nil, readErr
		}
		sleep(ctx, 500*time.Millisecond)
	}
}

// print writes the summary: faults by kind, load, invariants checked
// and every violation.
func (r *result) print(w io.Writer) {
	fmt.Fprintf(w, "\n== chaos summary: seed %d, %d servers, %s\n", r.seed, r.servers, r.elapsed.Round(time.Second))
	total := 0
	fmt.Fprintln(w, "faults injected:")
	for _, k := range faultKinds {
		fmt.Fprintf(w, "  %-20s %d\n", k, r.injected[k])
		total += r.injected[k]
	}
	fmt.Fprintf(w, "  %-20s %d\n", "total", total)
	fmt.Fprintf(w, "load (%d jobs):\n", r.jobs)
	var kinds []string
	for k := range r.ops {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		fmt.Fprintf(w, "  %-20s %d acknowledged, %d failed\n", k, r.ops[k][0], r.ops[k][1])
		if e := r.lastErr[k]; e != "" {
			fmt.Fprintf(w, "  %-20s last error: %s\n", "", e)
		}
	}
	fmt.Fprintln(w, "invariants (checks made, violations):")
	bad := map[string]int{}
	for _, v := range r.verdict.violations {
		bad[v.Invariant]++
	}
	for _, inv := range invariants {
		fmt.Fprintf(w, "  %-60s %6d  %d\n", inv, r.verdict.checked[inv], bad[inv])
	}
	if len(r.verdict.short) > 0 {
		fmt.Fprintln(w, "jobs short of their count, by explanation (summed over servers):")
		for _, why := range slices.Sorted(maps.Keys(r.verdict.short)) {
			fmt.Fprintf(w, "  %-20s %d\n", why, r.verdict.short[why])
		}
	}
	fmt.Fprintf(w, "violations: %d\n", len(r.verdict.violations))
	for _, v := range r.verdict.violations {
		fmt.Fprintln(w, "  "+v.String())
	}
}
