package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
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

// flapGrace is how much longer than its hold a node flap may last while
// waiting for the leader to mark the nodes down.
const flapGrace = 30 * time.Second

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
		in.checkPlacements(i, f)
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
	case stopServer, delayServer, fullDisk, clockJump:
		return in.c.servers[f.Pick%len(in.c.servers)]
	}
	fs := in.c.followers(leader)
	return fs[f.Pick%len(fs)]
}

func (in *injector) inject(ctx context.Context, f fault, i int, s *server) error {
	switch f.Kind {
	case killLeader, killFollower:
		s.proc.Signal(syscall.SIGKILL)
		<-s.proc.Done()
		sleep(ctx, f.Hold)
		return in.c.start(s)
	case stopServer:
		s.proc.Signal(syscall.SIGSTOP)
		s.stopped = true
		sleep(ctx, f.Hold)
		s.proc.Signal(syscall.SIGCONT)
		s.stopped = false
	case partitionLeader, partitionFollower:
		start := time.Now()
		in.c.net.isolate(s.name)
		done := make(chan probe, 1)
		go func() {
			sleep(ctx, 2*time.Second)
			done <- in.probe(s, i, start.Add(f.Hold))
		}()
		// Whatever the isolated server can still apply was committed
		// before the cut; half a second later every server has applied
		// at least that much, and the highest of their indexes bounds
		// what the isolated server may ever reach while cut off.
		sleep(ctx, 500*time.Millisecond)
		bound, boundOK := in.highestApplied()
		if f.Kind == partitionLeader {
			// The partition must be real: the others elect a leader
			// among themselves while it lasts.
			elected := in.majorityLeader(ctx, s, start.Add(f.Hold))
			in.vd.check(invMajority, s.name, elected != nil, "isolated for %s, and the other servers elected no leader", f.Hold)
			if elected != nil {
				fmt.Fprintf(in.out, "chaos:          the others elected %s in %s\n", elected.name, time.Since(start).Round(10*time.Millisecond))
			}
		}
		sleep(ctx, time.Until(start.Add(f.Hold)))
		p := <-done
		if last, err := appliedIndex(s); err == nil && boundOK {
			in.vd.check(invMinority, s.name, last <= bound, "applied index %d while cut off, past %d, the highest any server had applied when the cut began", last, bound)
		}
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
	case clockJump:
		if err := setClockOffset(s, f.Jump); err != nil {
			return err
		}
		sleep(ctx, f.Hold)
		// The server may have been restarted meanwhile (a clock is
		// not kept across restarts); putting it back is then a no-op.
		if err := setClockOffset(s, 0); err != nil {
			return err
		}
	case nodeFlap:
		if in.c.flaky == nil {
			return nil
		}
		// The hold is the least time the nodes stay away; they stay
		// until the leader marks them down, up to flapGrace more: an
		// election during the flap (a late effect of an earlier fault)
		// restarts every node's heartbeat timer at the failover TTL.
		start := time.Now()
		in.c.flaky.Signal(syscall.SIGSTOP)
		down := in.flakyDown(ctx, start.Add(f.Hold+flapGrace))
		in.vd.check(invNodes, "", down, "the flaky nodes were gone for %s and not marked down", time.Since(start).Round(time.Millisecond))
		if down {
			fmt.Fprintf(in.out, "chaos:          the flaky nodes were marked down %s after they vanished\n", time.Since(start).Round(10*time.Millisecond))
		}
		sleep(ctx, time.Until(start.Add(f.Hold)))
		in.c.flaky.Signal(syscall.SIGCONT)
	}
	return nil
}

// highestApplied is the highest applied index of the servers that
// answer; false when none does.
func (in *injector) highestApplied() (uint64, bool) {
	var hi uint64
	ok := false
	for _, s := range in.c.servers {
		if idx, err := appliedIndex(s); err == nil {
			hi, ok = max(hi, idx), true
		}
	}
	return hi, ok
}

// majorityLeader waits until every server but isolated names one leader
// other than isolated, and returns it; nil if that did not happen by
// until.
func (in *injector) majorityLeader(ctx context.Context, isolated *server, until time.Time) *server {
	for time.Now().Before(until) && ctx.Err() == nil {
		var leader string
		agreed := true
		for _, s := range in.c.servers {
			if s == isolated {
				continue
			}
			l, err := s.api(time.Second).Status().Leader()
			if err != nil || l == "" || l == isolated.proxy.addr() || (leader != "" && l != leader) {
				agreed = false
				break
			}
			leader = l
		}
		if agreed {
			return in.c.leaderOf(leader)
		}
		sleep(ctx, 100*time.Millisecond)
	}
	return nil
}

// flakyDown waits until the leader lists every flaky node as down;
// false if that did not happen by until.
func (in *injector) flakyDown(ctx context.Context, until time.Time) bool {
	for time.Now().Before(until) && ctx.Err() == nil {
		if l := in.c.agreedLeader(); l != nil {
			nodes, _, err := l.api(2 * time.Second).Nodes().List(nil)
			flaky, down := 0, 0
			for _, n := range nodes {
				if strings.HasPrefix(n.Name, "flaky-") {
					flaky++
					if n.Status == "down" {
						down++
					}
				}
			}
			if err == nil && flaky > 0 && down == flaky {
				return true
			}
		}
		sleep(ctx, 250*time.Millisecond)
	}
	return false
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

// checkPlacements checks, on every server that answers, what must hold
// at every moment of committed state and not only at the end: no node
// overcommitted, no two live allocations of one name.
func (in *injector) checkPlacements(i int, f fault) {
	for _, s := range in.c.servers {
		v, err := readPlacements(s)
		if err != nil {
			continue // down or stalled: judged at the end
		}
		before := len(in.vd.violations)
		in.vd.checkOvercommit(v)
		in.vd.checkDuplicates(v)
		for j := before; j < len(in.vd.violations); j++ {
			in.vd.violations[j].Detail += fmt.Sprintf(" (after fault %d, %s)", i+1, f.Kind)
		}
	}
}

// restartExited checks that every server still runs (a server the
// fault killed has been restarted by then) and restarts any that exited
// on its own: a violation of "servers stay up".
func (in *injector) restartExited(when string) error {
	for _, s := range in.c.servers {
		up := s.proc.Running()
		in.vd.check(invServersUp, s.name, up, "exited %s; see %s", when, s.proc.LogPath)
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
		in.c.flaky.Signal(syscall.SIGCONT)
	}
	for _, s := range in.c.servers {
		if s.proc.Running() {
			s.proc.Signal(syscall.SIGCONT)
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

// setClockOffset moves the server's clock by d from the host's (0 puts
// it back) through the agent's debug clock endpoint.
func setClockOffset(s *server, d time.Duration) error {
	body := strings.NewReader(fmt.Sprintf(`{"Offset":%q}`, d.String()))
	req, err := http.NewRequest(http.MethodPut, s.httpAddr()+"/v1/agent/debug/clock", body)
	if err != nil {
		return err
	}
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		if d == 0 {
			// Down or stopped by now: a restarted server starts with
			// its clock back anyway.
			return nil
		}
		return fmt.Errorf("moving %s's clock by %s: %w", s.name, d, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("moving %s's clock by %s: %s: %s", s.name, d, resp.Status, msg)
	}
	return nil
}
