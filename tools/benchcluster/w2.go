package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
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
	// RunTime is the wall time of the load run, for the simulator's CPU
	// share.
	RunTime time.Duration
}

// runW2 runs one case on a fresh cluster of three servers.
func runW2(ctx context.Context, o *options, wc w2Case) (*w2Outcome, error) {
	c, err := startCluster(o.bin, 3, false)
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
		pids = append(pids, s.proc.pid())
	}

	cfg := loadgen.DefaultConfig()
	cfg.Addresses = addrs
	cfg.ServerPIDs = pids
	cfg.Jobs = wc.Allocs / wc.PerJob
	cfg.Count = wc.PerJob
	cfg.Rate = wc.Rate
	cfg.Concurrency = 32
	cfg.Timeout = 30 * time.Minute
	cfg.Progress = os.Stderr

	simPID := c.sim.pid()
	cpuBefore, err := cpuTime(simPID)
	if err != nil {
		return nil, err
	}
	profileDone := make(chan struct{})
	profileCtx, stopProfile := context.WithCancel(ctx)
	go func() {
		defer close(profileDone)
		if o.profileDir != "" {
			o.profile(profileCtx, leader, wc.name())
		}
	}()
	start := time.Now()
	out.Result, err = loadgen.Run(ctx, cfg)
	out.RunTime = time.Since(start)
	stopProfile()
	<-profileDone
	if err != nil {
		return nil, err
	}
	cpuAfter, err := cpuTime(simPID)
	if err != nil {
		return nil, err
	}
	out.SimCPU = cpuAfter - cpuBefore
	mem, err := loadgen.ReadProcMemory(simPID)
	if err != nil {
		return nil, err
	}
	out.SimPeakRSS = mem.Peak
	return out, nil
}

// profile saves a CPU profile of the leader over the first
// profileSeconds of the load run, and a heap profile at its end.
func (o *options) profile(ctx context.Context, leader *agent, name string) {
	save := func(path, file string) {
		req, err := http.NewRequestWithContext(context.WithoutCancel(ctx), http.MethodGet, leader.httpAddr()+path, nil)
		if err != nil {
			return
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			fmt.Fprintf(os.Stderr, "profile %s: %v\n", file, err)
			return
		}
		defer resp.Body.Close()
		f, err := os.Create(filepath.Join(o.profileDir, file))
		if err != nil {
			return
		}
		defer f.Close()
		_, _ = io.Copy(f, resp.Body)
	}
	save(fmt.Sprintf("/v1/agent/pprof/profile?seconds=%d", o.profileSeconds), name+"-leader-cpu.pprof")
	<-ctx.Done()
	save("/v1/agent/pprof/heap", name+"-leader-heap.pprof")
}
