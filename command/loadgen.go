package command

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/opennomad/nomad/command/loadgen"
)

// LoadGenCommand submits jobs and measures how fast they are placed: the
// load side of the cluster benchmark.
type LoadGenCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *LoadGenCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad loadgen [options]

  Register jobs through the HTTP API and measure how fast their
  allocations are committed and reported running (workload W2 of the
  benchmarks). Each job has one group of -count allocations of one task.
  The run ends when every allocation runs (or -timeout passes) and prints:
  allocations committed per second from the first registration to the
  last commit, the p50/p99 of each job's latency from registration to its
  last allocation committed (and running), evaluations by status, the
  nodes the plan applier rejected (from the servers' Prometheus metrics,
  when telemetry.prometheus_metrics is on), the servers' peak memory and
  memory per allocation (with -server-pids), and one summary line:

    W2 servers=3 nodes=1000 allocs=10000 per_job=10 allocs_per_sec=… p50_ms=… p99_ms=… peak_rss_mb=…

  This is a benchmarking tool: it fills the cluster with jobs and leaves
  them there. Point it only at a test cluster.

` + generalOptionsUsage() + `

Load Generator Options:

  -addresses=<url,...>
    HTTP addresses of the servers. Registrations rotate over them; the
    event stream is read from the first, best the leader. Defaults to
    -address (or NOMAD_ADDR).

  -jobs=<n>
    Number of jobs. Default = 100.

  -count=<n>
    Allocations per job. Default = 1.

  -rate=<jobs/s>
    Registrations per second; 0 sends them as fast as they are accepted.
    Default = 0.

  -concurrency=<n>
    Registrations in flight at once. Default = 16.

  -type=<service|batch>
    Job type. Default = service.

  -driver=<mock_driver|raw_exec>
    Task driver; raw_exec runs sleep. Default = mock_driver.

  -cpu=<mhz>, -memory=<mb>, -disk=<mb>
    The task's CPU and memory, the group's ephemeral disk. Default =
    100 MHz, 128 MB, 150 MB.

  -datacenters=<dc,...>
    Datacenters of the jobs. Default = * (any).

  -id-prefix=<prefix>
    Job IDs are "<prefix>-<n>". Default = a random one.

  -wait-running=<bool>
    Also wait until every allocation is reported running. Default = true.

  -timeout=<duration>
    Bound on the whole run. Default = 30m.

  -server-pids=<pid,...>
    Process IDs of the servers (on this machine), for their memory.

  -workload=<name>
    Name at the start of the summary line. Default = W2.

  -quiet
    No progress bar.
`)
}

// Synopsis implements cli.Command.
func (c *LoadGenCommand) Synopsis() string {
	return "Submit jobs and measure placement throughput (benchmarking tool)"
}

// Run implements cli.Command.
func (c *LoadGenCommand) Run(args []string) int {
	const name = "loadgen"
	cfg := loadgen.DefaultConfig()
	var addresses, datacenters, pids, workload string
	var quiet bool
	fs := c.flagSet(name, flagsClient)
	fs.StringVar(&addresses, "addresses", "", "")
	fs.IntVar(&cfg.Jobs, "jobs", cfg.Jobs, "")
	fs.IntVar(&cfg.Count, "count", cfg.Count, "")
	fs.Float64Var(&cfg.Rate, "rate", cfg.Rate, "")
	fs.IntVar(&cfg.Concurrency, "concurrency", cfg.Concurrency, "")
	fs.StringVar(&cfg.Type, "type", cfg.Type, "")
	fs.StringVar(&cfg.Driver, "driver", cfg.Driver, "")
	fs.IntVar(&cfg.CPU, "cpu", cfg.CPU, "")
	fs.IntVar(&cfg.MemoryMB, "memory", cfg.MemoryMB, "")
	fs.IntVar(&cfg.DiskMB, "disk", cfg.DiskMB, "")
	fs.StringVar(&datacenters, "datacenters", strings.Join(cfg.Datacenters, ","), "")
	fs.StringVar(&cfg.IDPrefix, "id-prefix", "", "")
	fs.BoolVar(&cfg.WaitRunning, "wait-running", cfg.WaitRunning, "")
	fs.DurationVar(&cfg.Timeout, "timeout", cfg.Timeout, "")
	fs.StringVar(&pids, "server-pids", "", "")
	fs.StringVar(&workload, "workload", "W2", "")
	fs.BoolVar(&quiet, "quiet", false, "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() != 0 {
		return c.usageError(name, "This command takes no arguments")
	}
	cfg.Addresses = splitList(addresses)
	if len(cfg.Addresses) == 0 {
		cfg.Addresses = []string{c.clientConfig().Address}
	}
	// The general -token flag or NOMAD_TOKEN, for clusters with ACLs on.
	cfg.Token = c.clientConfig().SecretID
	cfg.Datacenters = splitList(datacenters)
	for _, p := range splitList(pids) {
		pid, err := strconv.Atoi(p)
		if err != nil {
			return c.usageError(name, fmt.Sprintf("-server-pids: %q is not a process ID", p))
		}
		cfg.ServerPIDs = append(cfg.ServerPIDs, pid)
	}
	if !quiet {
		cfg.Progress = os.Stderr
	}
	res, err := loadgen.Run(c.ctx(), cfg)
	if err != nil {
		c.Ui.Error(err.Error())
		return 1
	}
	var b strings.Builder
	res.Report(&b)
	c.Ui.Output(strings.TrimRight(b.String(), "\n"))
	c.Ui.Output(res.Line(workload))
	if res.Incomplete {
		return 2
	}
	return 0
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
