package main

import (
	"context"
	"fmt"
	"io"
	"sync"
	"syscall"
	"time"
)

// probe is one write sent to an isolated server.
type probe struct {
	JobID, Server string
	// Acked: the isolated server acknowledged it (a violation at once).
	Acked bool
	// Final: the partition outlasted the server's whole hold on the
	// request (client timeout and the servers' 5 s wait for a leader),
	// so the write can never have been committed.
	Final bool
}

// rpcHold is how long a server holds a request while it has no leader,
// plus a margin for the Raft apply of a request already forwarded.
const rpcHold = 5*time.Second + 2*time.Second

// injector runs the schedule against the cluster.
type injector struct {
	c   *cluster
	vd  *verdict
	out io.Writer

	mu       sync.Mutex
	injected map[faultKind]int
	probes   []probe
}

// run injects each fault in turn, waiting for the cluster to recover
// before the next, until the schedule or the time runs out. It returns
// an error when the cluster does not recover (a violation, recorded).
func (in *injector) run(ctx context.Context, faults []fault, deadline time.Time) error {
	for i, f := range faults {
		if ctx.Err() != nil || time.Now().After(deadline) {
			fmt.Fprintf(in.out, "chaos: time is up after %d of %d faults\n", i, len(faults))
			return nil
		}
		leader, err := in.c.waitHealthy(ctx, 90*time.Second)
		in.vd.check(invRecovery, "", err == nil, "before fault %d (%s): %v", i+1, f.Kind, err)
		if err != nil {
			return err
		}
		target := in.target(f, leader)
		on := target.name
		if f.Kind == nodeFlap {
			on = "the flaky nodes"
		}
		fmt.Fprintf(in.out, "chaos: %s fault %3d %s on %s (leader %s)\n", time.Now().UTC().Format("15:04:05"), i+1, f.Kind, on, leader.name)
		if err := in.inject(ctx, f, i, target); err != nil {
			return err
		}
		if err := in.restartExited(fmt.Sprintf("during fault %d (%s)", i+1, f.Kind)); err != nil {
			return err
		}
		in.mu.Lock()
		in.injected[f.Kind]++
		in.mu.Unlock()
		sleep(ctx, f.Gap)
	}
	return nil
}

// target resolves the fault's role to a server.
func (in *injector) target(f fault, leader *server) *server {
	switch f.Kind {
	case killLeader, partitionLeader:
		return leader
	case stopServer, delayServer, fullDisk:
		return in.c.servers[f.Pick%len(in.c.servers)]
	}
	fs := in.c.followers(leader)
	return fs[f.Pick%len(fs)]
}

func (in *injector) inject(ctx context.Context, f fault, i int, s *server) error {
	switch f.Kind {
	case killLeader, killFollower:
		s.proc.signal(syscall.SIGKILL)
		<-s.proc.done
		sleep(ctx, f.Hold)
		return in.c.start(s)
	case stopServer:
		s.proc.signal(syscall.SIGSTOP)
		s.stopped = true
		sleep(ctx, f.Hold)
		s.proc.signal(syscall.SIGCONT)
		s.stopped = false
	case partitionLeader, partitionFollower:
		start := time.Now()
		in.c.net.isolate(s.name)
		done := make(chan probe, 1)
		go func() {
			sleep(ctx, 2*time.Second)
			done <- in.probe(s, i, start.Add(f.Hold))
		}()
		sleep(ctx, f.Hold)
		p := <-done
		in.c.net.heal()
		in.vd.check(invMinority, s.name, !p.Acked, "job %s written to the isolated server was acknowledged", p.JobID)
		in.mu.Lock()
		in.probes = append(in.probes, p)
		in.mu.Unlock()
	case delayServer:
		in.c.net.slow(s.name, f.Delay)
		sleep(ctx, f.Hold)
		in.c.net.heal()
	case fullDisk:
		if err := fillDisk(s); err != nil {
			return err
		}
		sleep(ctx, f.Hold)
		if err := freeDisk(s); err != nil {
			return err
		}
	case nodeFlap:
		if in.c.flaky == nil {
			return nil
		}
		in.c.flaky.signal(syscall.SIGSTOP)
		sleep(ctx, f.Hold)
		in.c.flaky.signal(syscall.SIGCONT)
	}
	return nil
}

// probe registers a job through the isolated server s. The partition
// ends at heal.
func (in *injector) probe(s *server, i int, heal time.Time) probe {
	const timeout = 3 * time.Second
	p := probe{JobID: fmt.Sprintf("minority-%d", i+1), Server: s.name}
	sent := time.Now()
	_, _, err := s.api(timeout).Jobs().Register(jobSpec(p.JobID, 1, 100, 0), nil)
	p.Acked = err == nil
	p.Final = sent.Add(max(timeout, rpcHold)).Before(heal)
	return p
}

// restartExited checks that every server still runs (a server the
// fault killed has been restarted by then) and restarts any that exited
// on its own: a violation of "servers stay up".
func (in *injector) restartExited(when string) error {
	for _, s := range in.c.servers {
		up := s.proc.running()
		in.vd.check(invServersUp, s.name, up, "exited %s; see %s", when, s.proc.logPath)
		if !up {
			if err := in.c.start(s); err != nil {
				return err
			}
		}
	}
	return nil
}

// healAll ends every fault still in force: links healed, stopped
// processes continued, dead servers restarted.
func (in *injector) healAll() error {
	in.c.net.heal()
	if in.c.flaky != nil {
		in.c.flaky.signal(syscall.SIGCONT)
	}
	for _, s := range in.c.servers {
		if s.proc.running() {
			s.proc.signal(syscall.SIGCONT)
			s.stopped = false
			continue
		}
		if err := in.c.start(s); err != nil {
			return err
		}
	}
	return nil
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
