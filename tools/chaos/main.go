// Command chaos is a fault-injection harness: it runs real server
// processes (durable Raft, fsync) behind TCP proxies, simulated client
// nodes and a load of job registrations, updates, stops and node drains,
// injects faults from a seeded schedule (SIGKILL of the leader and of
// followers, SIGSTOP, partitions, delays, client nodes that vanish and
// return), then checks the cluster's invariants through the HTTP API and
// each server's own state. `make chaos` runs it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// options are the command line.
type options struct {
	bin        string
	servers    int
	sched      scheduleConfig
	duration   time.Duration
	seed       uint64
	nodes      int
	flakyNodes int
	workers    int
	settle     time.Duration
	keep       bool
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout))
}

func run(args []string, out io.Writer) int {
	o, err := parseOptions(args)
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := runChaos(ctx, o, out)
	if res != nil {
		res.print(out)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		return 1
	}
	if len(res.verdict.violations) > 0 {
		return 1
	}
	return 0
}

func parseOptions(args []string) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("chaos", flag.ContinueOnError)
	fs.StringVar(&o.bin, "nomad", "bin/nomad", "the nomad binary")
	fs.IntVar(&o.servers, "servers", 3, "servers: 3 or 5")
	fs.IntVar(&o.sched.Kills, "kills", 100, "SIGKILLs of a server (two in three of the leader)")
	fs.IntVar(&o.sched.Partitions, "partitions", 20, "partitions of one server (half of them the leader)")
	stops := fs.Int("stops", -1, "SIGSTOP/SIGCONT of a server (default: a tenth of -kills, at least 1)")
	delays := fs.Int("delays", -1, "delays of a server's traffic (default: a quarter of -partitions, at least 1)")
	flaps := fs.Int("flaps", -1, "disappearances of the flaky client nodes (default: a tenth of -kills, at least 1)")
	fs.IntVar(&o.sched.FullDisks, "full-disks", 0, "fills of one server's Raft disk (a tmpfs per server: needs root)")
	jumps := fs.Int("clock-jumps", -1, "jumps of one server's clock, a minute to two hours either way (default: a tenth of -kills, at least 1)")
	fs.DurationVar(&o.duration, "duration", 30*time.Minute, "stop injecting faults after this long")
	seed := fs.Int64("seed", 0, "schedule seed (default: from the clock; printed)")
	fs.IntVar(&o.nodes, "nodes", 20, "steady simulated client nodes")
	fs.IntVar(&o.flakyNodes, "flaky-nodes", 4, "simulated client nodes that disappear and come back")
	fs.IntVar(&o.workers, "workers", 3, "load workers")
	fs.DurationVar(&o.settle, "settle", 90*time.Second, "time the cluster gets after the faults to place and settle")
	fs.BoolVar(&o.keep, "keep", false, "keep the run's directory (configurations, logs, data)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() != 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if o.servers != 3 && o.servers != 5 {
		return nil, fmt.Errorf("-servers must be 3 or 5, got %d", o.servers)
	}
	if o.sched.Kills < 0 || o.sched.Partitions < 0 || o.sched.FullDisks < 0 || o.nodes <= 0 || o.flakyNodes < 0 || o.workers <= 0 {
		return nil, errors.New("-kills, -partitions and -flaky-nodes must be >= 0, -nodes and -workers > 0")
	}
	orDefault := func(v, d int) int {
		if v >= 0 {
			return v
		}
		return max(1, d)
	}
	o.sched.Stops = orDefault(*stops, o.sched.Kills/10)
	o.sched.Delays = orDefault(*delays, o.sched.Partitions/4)
	o.sched.Flaps = orDefault(*flaps, o.sched.Kills/10)
	o.sched.ClockJumps = orDefault(*jumps, o.sched.Kills/10)
	if o.flakyNodes == 0 {
		o.sched.Flaps = 0
	}
	// Past the heartbeat TTL (2 s, or 5 s right after an election), the
	// 3 s grace and jitter: the nodes are marked down before they return.
	o.sched.FlapHold = 12 * time.Second
	o.seed = uint64(*seed)
	if *seed == 0 {
		o.seed = uint64(time.Now().UnixNano() % 1_000_000_000)
	}
	if _, err := os.Stat(o.bin); err != nil {
		return nil, fmt.Errorf("nomad binary: %w (build it with make dev)", err)
	}
	return o, nil
}
