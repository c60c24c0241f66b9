package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/opennomad/nomad/command/loadgen"
)

// w2Case is one W2 measurement: allocs allocations in jobs of perJob on
// nodes simulated nodes, registered as fast as accepted (rate 0) or at
// rate jobs per second.
type w2Case struct {
	Nodes, Allocs, PerJob int
	Rate                  float64
}

// name identifies the case in file names and logs.
func (c w2Case) name() string {
	s := fmt.Sprintf("nodes%d-allocs%d-perjob%d", c.Nodes, c.Allocs, c.PerJob)
	if c.Rate > 0 {
		s += fmt.Sprintf("-rate%.0f", c.Rate)
	}
	return s
}

// w2Outcome is what one case measured.
type w2Outcome struct {
	Case   w2Case
	Result *loadgen.Result
	// SimCPU is the CPU time the node simulator used during the load run,
	// SimPeakRSS its peak resident memory; SimReady the time its nodes
	// took to register and turn ready.
	SimCPU     time.Duration
	SimPeakRSS int64
	SimReady   time.Duration
	// RunTime is the wall time of the load run, for the CPU shares.
	RunTime time.Duration
	// LeaderCPU and FollowerCPU are the CPU time the servers used during
	// the load run, LoadGenCPU this process's (the load generator and its
	// event stream).
	LeaderCPU   time.Duration
	FollowerCPU []time.Duration
	LoadGenCPU  time.Duration
	// PendingAtEnd is the evaluations pending when the load ended and
	// DrainTime how long they took to run (-drain).
	PendingAtEnd int
	DrainTime    time.Duration
	// Restart is what -restart measured after the run.
	Restart *restartOutcome
}

// runW2 runs one case on a fresh cluster of three servers.
func runW2(ctx context.Context, o *options, wc w2Case) (*w2Outcome, error) {
	c, err := startCluster(o.bin, 3, false, serverOpts{acl: o.acl, server: o.serverConfig})
	if err != nil {
		return nil, err
	}
	defer o.cleanup(c)
	setupCtx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	if _, err := c.waitLeader(setupCtx); err != nil {
		return nil, err
	}
	out := &w2Outcome{Case: wc}
	if o.acl {
		leader, err := c.waitLeader(setupCtx)
		if err != nil {
			return nil, err
		}
		if err := c.bootstrapACLs(setupCtx, leader); err != nil {
			return nil, err
		}
	}
	if out.SimReady, err = c.startSim(setupCtx, wc.Nodes); err != nil {
		return nil, err
	}
	leader, err := c.waitLeader(setupCtx)
	if err != nil {
		return nil, err
	}
	addrs := []string{leader.httpAddr()}
	var pids []int
	for _, s := range c.servers {
		if s != leader {
			addrs = append(addrs, s.httpAddr())
		}
		pids = append(pids, s.proc.Pid())
	}

	cfg := loadgen.DefaultConfig()
	cfg.Addresses = addrs
	cfg.Token = c.token
	cfg.ServerPIDs = pids
	cfg.Jobs = wc.Allocs / wc.PerJob
	cfg.Count = wc.PerJob
	cfg.Rate = wc.Rate
	if o.jobType != "" {
		cfg.Type = o.jobType
	}
	cfg.Concurrency = 32
	cfg.Timeout = 30 * time.Minute
	cfg.Progress = os.Stderr

	simPID := c.sim.Pid()
	watched := append([]int{simPID, os.Getpid()}, pids...)
	cpuBefore, err := cpuTimes(watched)
	if err != nil {
		return nil, err
	}
	profileDone := make(chan struct{})
	profileCtx, stopProfile := context.WithCancel(ctx)
	go func() {
		defer close(profileDone)
		if o.profileDir != "" {
			o.profile(profileCtx, c, leader, wc.name())
		}
	}()
	sampleCtx, stopSampling := context.WithCancel(ctx)
	sampleDone := make(chan struct{})
	go func() {
		defer close(sampleDone)
		if o.sample > 0 {
			c.sampleEvery(sampleCtx, o.sample, leader, c.servers[(c.index(leader)+1)%len(c.servers)])
		}
	}()
	start := time.Now()
	out.Result, err = loadgen.Run(ctx, cfg)
	out.RunTime = time.Since(start)
	stopProfile()
	<-profileDone
	if err == nil && o.drain {
		drainCtx, cancel := context.WithTimeout(ctx, 30*time.Minute)
		out.PendingAtEnd, out.DrainTime, err = c.waitDrained(drainCtx, leader)
		cancel()
		fmt.Fprintf(os.Stderr, "drain:           %d evaluations pending when the load ended, none after %s\n",
			out.PendingAtEnd, out.DrainTime.Round(time.Second))
		if byTrigger, dup, terr := c.evalTriggers(ctx, leader); terr == nil {
			fmt.Fprintf(os.Stderr, "evaluations:     by trigger %v; %d jobs with more than one deployment-watcher evaluation\n", byTrigger, dup)
		}
	}
	stopSampling()
	<-sampleDone
	if err != nil {
		return nil, err
	}
	cpuAfter, err := cpuTimes(watched)
	if err != nil {
		return nil, err
	}
	out.SimCPU = cpuAfter[0] - cpuBefore[0]
	out.LoadGenCPU = cpuAfter[1] - cpuBefore[1]
	for i, s := range c.servers {
		used := cpuAfter[2+i] - cpuBefore[2+i]
		if s == leader {
			out.LeaderCPU = used
		} else {
			out.FollowerCPU = append(out.FollowerCPU, used)
		}
	}
	mem, err := loadgen.ReadProcMemory(simPID)
	if err != nil {
		return nil, err
	}
	out.SimPeakRSS = mem.Peak
	if o.restart {
		// Last: the restart replaces a follower's process.
		restartCtx, cancel := context.WithTimeout(ctx, 30*time.Minute)
		defer cancel()
		if out.Restart, err = c.measureRestart(restartCtx, leader); err != nil {
			return nil, fmt.Errorf("restart: %w", err)
		}
	}
	return out, nil
}

// profile saves, for the leader and one follower, a CPU profile over the
// first profileSeconds of the load run with the server's metrics at that
// moment (the in-memory sink's last interval, as JSON: the FSM's batch
// sizes, worker, plan and Raft timings under load), and at the run's end
// a heap profile and the metrics again.
func (o *options) profile(ctx context.Context, c *cluster, leader *agent, name string) {
	targets := map[string]*agent{"leader": leader}
	for _, s := range c.servers {
		if s != leader {
			targets["follower"] = s
			break
		}
	}
	save := func(a *agent, path, file string) {
		req, err := http.NewRequestWithContext(context.WithoutCancel(ctx), http.MethodGet, a.httpAddr()+path, nil)
		if err != nil {
			return
		}
		if c.token != "" {
			req.Header.Set("X-Nomad-Token", c.token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			fmt.Fprintf(os.Stderr, "benchcluster: saving %s: %v\n", file, err)
			return
		}
		defer resp.Body.Close()
		f, err := os.Create(filepath.Join(o.profileDir, file))
		if err != nil {
			fmt.Fprintf(os.Stderr, "benchcluster: saving %s: %v\n", file, err)
			return
		}
		defer f.Close()
		_, _ = io.Copy(f, resp.Body)
	}
	var wg sync.WaitGroup
	for role, a := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			save(a, fmt.Sprintf("/v1/agent/pprof/profile?seconds=%d", o.profileSeconds), name+"-"+role+"-cpu.pprof")
			save(a, "/v1/metrics", name+"-"+role+"-metrics-load.json")
			<-ctx.Done()
			save(a, "/v1/agent/pprof/heap", name+"-"+role+"-heap.pprof")
			save(a, "/v1/metrics", name+"-"+role+"-metrics-end.json")
		}()
	}
	wg.Wait()
}

// cpuLine renders the CPU each process used during the run, in seconds
// and as a share of one core.
func (w *w2Outcome) cpuLine() string {
	share := func(d time.Duration) string {
		return fmt.Sprintf("%.1f s (%.0f%%)", d.Seconds(), 100*d.Seconds()/max(w.RunTime.Seconds(), 1e-9))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "leader %s", share(w.LeaderCPU))
	for _, f := range w.FollowerCPU {
		fmt.Fprintf(&b, ", follower %s", share(f))
	}
	fmt.Fprintf(&b, ", simulator %s, load generator %s", share(w.SimCPU), share(w.LoadGenCPU))
	return b.String()
}

// line is the load generator's one-line result with the CPU of all
// processes per job appended (cpu_ms_per_job), as benchmark tooling
// greps it.
func (w *w2Outcome) line() string {
	l := w.Result.Line("W2")
	if cost, ok := w.cpuCost(); ok {
		l += fmt.Sprintf(" cpu_ms_per_job=%.2f", cost.All)
	}
	return l
}

// cpuCost is the CPU of each process, and of all of them, divided by the
// jobs the run committed: the cost figure the throughput work is judged
// by, since it does not depend on how busy the machine was. Nothing
// committed, nothing to divide: every figure is 0 and ok is false.
func (w *w2Outcome) cpuCost() (cost cpuCost, ok bool) {
	perJob := max(w.Case.PerJob, 1)
	jobs := float64(w.Result.Committed) / float64(perJob)
	if jobs == 0 {
		return cpuCost{Followers: make([]float64, len(w.FollowerCPU)), PerJob: perJob}, false
	}
	msPerJob := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / jobs }
	cost.Leader = msPerJob(w.LeaderCPU)
	all := w.LeaderCPU + w.SimCPU + w.LoadGenCPU
	for _, f := range w.FollowerCPU {
		cost.Followers = append(cost.Followers, msPerJob(f))
		all += f
	}
	cost.Simulator = msPerJob(w.SimCPU)
	cost.LoadGen = msPerJob(w.LoadGenCPU)
	cost.All = msPerJob(all)
	cost.PerJob = perJob
	return cost, true
}

// cpuCost is CPU milliseconds per committed job; divide by PerJob for an
// allocation's.
type cpuCost struct {
	Leader, Simulator, LoadGen, All float64
	Followers                       []float64
	PerJob                          int
}

// line renders the cost per job, and per allocation when a job has more
// than one.
func (c cpuCost) line() string {
	each := func(v float64) string {
		if c.PerJob == 1 {
			return fmt.Sprintf("%.2f", v)
		}
		return fmt.Sprintf("%.2f (%.3f per alloc)", v, v/float64(c.PerJob))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "leader %s", each(c.Leader))
	for _, f := range c.Followers {
		fmt.Fprintf(&b, ", follower %s", each(f))
	}
	fmt.Fprintf(&b, ", simulator %s, load generator %s; all processes %s",
		each(c.Simulator), each(c.LoadGen), each(c.All))
	return b.String()
}
