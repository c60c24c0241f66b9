// Command benchcluster runs the cluster-scale benchmarks W2 (placement
// throughput through Raft) and W3 (failover) with real processes on
// loopback: three servers of the given nomad binary, the node simulator
// and the load generator. It prints one line per result and writes a
// table into the performance page. `make bench-cluster` runs it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// options are the command line.
type options struct {
	bin            string
	quick          bool
	nodes          []int
	allocs         []int
	perJob         []int
	latencyRate    float64
	latencyJobs    int
	latencyPerJob  int
	maxJobs        int
	w3             bool
	page           string
	command        string
	profileDir     string
	profileSeconds int
	keep           bool
	// acl runs the servers with ACLs on; the load generator then sends a
	// management token with every request.
	acl bool
	// serverConfig is added to every server's server block.
	serverConfig string
	// jobType is the load's job type; rate its registrations per second
	// in the W2 cases (0: as fast as accepted).
	jobType string
	rate    float64
	// drain waits after each W2 case until the leader has no pending
	// evaluation, and says how long that took.
	drain bool
	// sample, when positive, prints the servers' state (jobs,
	// evaluations, allocations, live heaps, RSS) at this interval during
	// each W2 case.
	sample time.Duration
	// restart, after each W2 case, times a snapshot saved from the
	// leader and a follower's restart (see restart.go).
	restart bool
}

// cleanup stops a case's processes and removes its directory unless
// -keep.
func (o *options) cleanup(c *cluster) {
	c.close()
	if o.keep {
		fmt.Fprintf(os.Stderr, "benchcluster: kept %s\n", c.dir)
		return
	}
	if err := c.remove(); err != nil {
		fmt.Fprintf(os.Stderr, "benchcluster: removing %s: %v\n", c.dir, err)
	}
}

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	o, err := parseOptions(args)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchcluster:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	cases, skipped := o.cases()
	rep := &report{Command: o.command, Commit: gitCommit(), Machine: machine(), Date: time.Now(), Quick: o.quick, Skipped: skipped, MaxJobs: o.maxJobs}
	for _, c := range skipped {
		fmt.Fprintf(os.Stderr, "==> W2 %s skipped: %s jobs is more than -max-jobs %s\n", c.name(), thousands(c.Allocs/c.PerJob), thousands(o.maxJobs))
	}
	failed := false
	for _, c := range cases {
		fmt.Fprintf(os.Stderr, "==> W2 %s\n", c.name())
		out, err := runW2(ctx, o, c)
		if err != nil {
			fmt.Fprintf(os.Stderr, "benchcluster: W2 %s: %v\n", c.name(), err)
			failed = true
			if ctx.Err() != nil {
				return 1
			}
			continue
		}
		var b strings.Builder
		out.Result.Report(&b)
		fmt.Fprint(os.Stderr, b.String())
		fmt.Fprintf(os.Stderr, "simulator:       %.1f s CPU over %.1f s (%.0f%% of a core), peak RSS %.0f MB; %s nodes ready in %s\n",
			out.SimCPU.Seconds(), out.RunTime.Seconds(), 100*out.SimCPU.Seconds()/max(out.RunTime.Seconds(), 1e-9),
			float64(out.SimPeakRSS)/(1<<20), thousands(c.Nodes), out.SimReady.Round(time.Millisecond))
		fmt.Fprintf(os.Stderr, "CPU during the run: %s\n", out.cpuLine())
		if cost, ok := out.cpuCost(); ok {
			fmt.Fprintf(os.Stderr, "CPU ms per job:  %s\n", cost.line())
		}
		if out.Restart != nil {
			fmt.Fprint(os.Stderr, out.Restart.lines())
		}
		fmt.Println(out.line())
		rep.W2 = append(rep.W2, out)
	}
	if o.w3 {
		fmt.Fprintln(os.Stderr, "==> W3 failover")
		out, err := runW3(ctx, o)
		if err != nil {
			fmt.Fprintf(os.Stderr, "benchcluster: W3: %v\n", err)
			if out != nil {
				for _, m := range out.Missing {
					fmt.Fprintln(os.Stderr, "  missing:", m)
				}
			}
			failed = true
		} else {
			fmt.Println(out.Line())
			rep.W3 = out
		}
	}
	if o.page != "" && (len(rep.W2) > 0 || rep.W3 != nil) {
		if err := updatePage(o.page, rep.markdown()); err != nil {
			fmt.Fprintln(os.Stderr, "benchcluster:", err)
			return 1
		}
		fmt.Fprintf(os.Stderr, "benchcluster: wrote the results into %s\n", o.page)
	}
	if failed {
		return 1
	}
	return 0
}

// cases lists the W2 cases to run: every nodes × allocs × per-job
// combination of at most maxJobs jobs, then the latency case
// (latencyJobs jobs of latencyPerJob at the fixed rate, on the smallest
// node count). It also returns the combinations left out for their
// number of jobs.
func (o *options) cases() (run, skipped []w2Case) {
	for _, n := range o.nodes {
		for _, a := range o.allocs {
			for _, k := range o.perJob {
				c := w2Case{Nodes: n, Allocs: a, PerJob: k, Rate: o.rate}
				if o.maxJobs > 0 && a/k > o.maxJobs {
					skipped = append(skipped, c)
					continue
				}
				run = append(run, c)
			}
		}
	}
	if o.latencyRate > 0 && o.latencyJobs > 0 && len(o.nodes) > 0 {
		run = append(run, w2Case{Nodes: o.nodes[0], Allocs: o.latencyPerJob * o.latencyJobs, PerJob: o.latencyPerJob, Rate: o.latencyRate})
	}
	return run, skipped
}

// parseOptions reads the flags; -quick replaces the case lists with the
// 10,000-allocation, 1,000-node cases.
func parseOptions(args []string) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("benchcluster", flag.ContinueOnError)
	nodes := fs.String("nodes", "1000,5000", "simulated node counts")
	allocs := fs.String("allocs", "10000,100000", "allocations per case")
	perJob := fs.String("per-job", "1,10,100", "allocations per job")
	fs.StringVar(&o.bin, "nomad", "bin/nomad", "the nomad binary to benchmark")
	fs.BoolVar(&o.quick, "quick", false, "only the 10,000-allocation, 1,000-node cases and W3")
	fs.Float64Var(&o.latencyRate, "latency-rate", 100, "jobs per second of the latency case (0 skips it)")
	fs.IntVar(&o.latencyJobs, "latency-jobs", 3000, "jobs in the latency case")
	fs.IntVar(&o.latencyPerJob, "latency-per-job", 1, "allocations per job in the latency case")
	fs.IntVar(&o.maxJobs, "max-jobs", 20000, "skip the cases registering more jobs than this (0: none skipped); 100,000 single-allocation jobs need more memory and time than a 2-core, 24 GiB machine gives three servers")
	fs.BoolVar(&o.w3, "w3", true, "run W3 (failover)")
	fs.StringVar(&o.page, "page", "", "performance page to write the results into (none when empty)")
	fs.StringVar(&o.command, "command", "make bench-cluster", "the command shown on the page")
	fs.StringVar(&o.profileDir, "profile-dir", "", "save CPU and heap profiles and metrics of the leader and a follower for each W2 case here")
	fs.IntVar(&o.profileSeconds, "profile-seconds", 10, "length of each CPU profile")
	fs.BoolVar(&o.keep, "keep", false, "keep each case's directory (configurations, logs, data)")
	fs.BoolVar(&o.acl, "acl", false, "run the servers with ACLs on (the load generator sends a management token); compare with a run without")
	fs.StringVar(&o.serverConfig, "server-config", "", `lines added to every server's server block, e.g. 'memory_limit = "2GB"'`)
	fs.StringVar(&o.jobType, "type", "service", "job type of the W2 cases: service or batch (the simulator completes a batch allocation after 1 s)")
	fs.Float64Var(&o.rate, "rate", 0, "registrations per second in the W2 cases (0: as fast as accepted)")
	fs.BoolVar(&o.drain, "drain", false, "after each W2 case, wait until the leader has no pending evaluation and report how long that took")
	fs.BoolVar(&o.restart, "restart", false, "after each W2 case, time a snapshot saved from the leader through the API, then kill a follower (SIGKILL), restart it on its data dir and time until it has applied what the leader had")
	fs.DurationVar(&o.sample, "sample", 0, "print the servers' state (jobs, evaluations, allocations, live heaps, RSS) at this interval during each W2 case")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() != 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	var err error
	if o.nodes, err = intList("nodes", *nodes); err != nil {
		return nil, err
	}
	if o.allocs, err = intList("allocs", *allocs); err != nil {
		return nil, err
	}
	if o.perJob, err = intList("per-job", *perJob); err != nil {
		return nil, err
	}
	if o.quick {
		o.nodes, o.allocs, o.latencyRate = []int{1000}, []int{10000}, 0
	}
	for _, a := range o.allocs {
		for _, k := range o.perJob {
			if a%k != 0 {
				return nil, fmt.Errorf("allocs %d is not a multiple of per-job %d", a, k)
			}
		}
	}
	if o.jobType != "service" && o.jobType != "batch" {
		return nil, fmt.Errorf("-type: %q is neither service nor batch", o.jobType)
	}
	if o.latencyPerJob <= 0 {
		return nil, errors.New("-latency-per-job must be > 0")
	}
	if o.profileSeconds <= 0 {
		return nil, errors.New("-profile-seconds must be > 0")
	}
	if o.profileDir != "" {
		if err := os.MkdirAll(o.profileDir, 0o755); err != nil {
			return nil, fmt.Errorf("-profile-dir: %w", err)
		}
	}
	if _, err := os.Stat(o.bin); err != nil {
		return nil, fmt.Errorf("nomad binary: %w (build it with make dev)", err)
	}
	return o, nil
}

// intList parses "1,10,100".
func intList(name, s string) ([]int, error) {
	var out []int
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		n, err := strconv.Atoi(p)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("-%s: %q is not a positive number", name, p)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("-%s: no values", name)
	}
	return out, nil
}
