package command

import (
	"fmt"
	"os"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/opennomad/nomad/command/nodesim"
)

// NodeSimCommand runs simulated client nodes against servers: a
// benchmarking tool, not something to run beside a production cluster.
type NodeSimCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *NodeSimCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad nodesim -servers <addr>[,<addr>...] [options]

  Simulate client nodes for benchmarks. Each simulated node registers
  with the servers with its own ID, name, attributes and resources,
  heartbeats on the TTL the servers ask for, watches its allocations with
  blocking queries as a real client does, and reports them running (batch
  allocations complete after -batch-run-time; allocations of a deployment
  healthy after their group's min_healthy_time, never with a manual health
  check) without starting anything.
  Nodes spread their reads over the servers given.

  This is a benchmarking tool: the nodes are real to the servers, so jobs
  are placed on them and never run. Point it only at a test cluster.

  The command runs until interrupted and prints the simulator's totals
  every -stats-interval, and its own CPU time and peak memory at the end.

Node Simulator Options:

  -servers=<addr,...>
    RPC addresses ("host:port") of the servers. Required.

  -nodes=<n>
    Number of nodes to simulate. Default = 1000.

  -name-prefix=<prefix>
    Node names are "<prefix>-<n>". Default = sim.

  -datacenters=<dc,...>
    Datacenters assigned round robin. Default = dc1.

  -node-pool=<pool>
    Node pool of every node. Default = default.

  -node-class=<class>
    Node class of every node. Default none.

  -racks=<n>
    Set meta.rack to r<i mod n> on node i. Default 0 (no rack).

  -cpu-cores=<n>, -cpu-mhz=<mhz>
    Cores per node and MHz per core. Default = 4 × 3500.

  -memory=<mb>, -disk=<mb>
    Memory and disk per node. Default = 32000 MB, 102400 MB.

  -drivers=<name,...>
    Drivers reported healthy. Default = mock_driver,raw_exec,exec.

  -batch-run-time=<duration>
    How long batch allocations run before they are reported complete.
    Default = 1s.

  -sync-interval=<duration>
    How often pending allocation updates are sent. Default = 200ms.

  -register-concurrency=<n>
    Registrations in flight at once. Default = 64.

  -stats-interval=<duration>
    How often to print the totals; 0 prints them only at the end.
    Default = 10s.

  -region=<region>
    Region of the requests. Default = global.

  -log-level=<level>
    Log level of the simulator's own logs (to stderr). Default = WARN.

  -cpuprofile=<file>
    Write a CPU profile of the simulator itself to the file when it
    stops, to see what holding the nodes costs.
`)
}

// Synopsis implements cli.Command.
func (c *NodeSimCommand) Synopsis() string {
	return "Simulate client nodes against servers (benchmarking tool)"
}

// Run implements cli.Command.
func (c *NodeSimCommand) Run(args []string) int {
	const name = "nodesim"
	cfg := nodesim.DefaultConfig()
	cfg.Nodes = 1000
	var servers, datacenters, drivers, logLevel string
	var statsInterval time.Duration
	var cpuProfile string
	fs := c.flagSet(name, flagsNone)
	fs.StringVar(&servers, "servers", "", "")
	fs.IntVar(&cfg.Nodes, "nodes", cfg.Nodes, "")
	fs.StringVar(&cfg.NamePrefix, "name-prefix", cfg.NamePrefix, "")
	fs.StringVar(&datacenters, "datacenters", strings.Join(cfg.Datacenters, ","), "")
	fs.StringVar(&cfg.NodePool, "node-pool", cfg.NodePool, "")
	fs.StringVar(&cfg.NodeClass, "node-class", cfg.NodeClass, "")
	fs.IntVar(&cfg.Racks, "racks", cfg.Racks, "")
	fs.IntVar(&cfg.CPUCores, "cpu-cores", cfg.CPUCores, "")
	fs.Int64Var(&cfg.CPUMHzPerCore, "cpu-mhz", cfg.CPUMHzPerCore, "")
	fs.Int64Var(&cfg.MemoryMB, "memory", cfg.MemoryMB, "")
	fs.Int64Var(&cfg.DiskMB, "disk", cfg.DiskMB, "")
	fs.StringVar(&drivers, "drivers", strings.Join(cfg.Drivers, ","), "")
	fs.DurationVar(&cfg.BatchRunTime, "batch-run-time", cfg.BatchRunTime, "")
	fs.DurationVar(&cfg.SyncInterval, "sync-interval", cfg.SyncInterval, "")
	fs.IntVar(&cfg.RegisterConcurrency, "register-concurrency", cfg.RegisterConcurrency, "")
	fs.DurationVar(&statsInterval, "stats-interval", 10*time.Second, "")
	fs.StringVar(&cfg.Region, "region", cfg.Region, "")
	fs.StringVar(&logLevel, "log-level", "WARN", "")
	fs.StringVar(&cpuProfile, "cpuprofile", "", "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() != 0 {
		return c.usageError(name, "This command takes no arguments")
	}
	addrs := splitList(servers)
	if len(addrs) == 0 {
		return c.usageError(name, "-servers is required")
	}
	cfg.Datacenters = splitList(datacenters)
	cfg.Drivers = splitList(drivers)
	cfg.Logger = hclog.New(&hclog.LoggerOptions{
		Name: "nomad", Level: hclog.LevelFromString(logLevel), Output: os.Stderr,
	})

	if cpuProfile != "" {
		f, err := os.Create(cpuProfile)
		if err != nil {
			c.Ui.Error(fmt.Sprintf("Error creating the CPU profile: %s", err))
			return 1
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			c.Ui.Error(fmt.Sprintf("Error starting the CPU profile: %s", err))
			return 1
		}
		defer pprof.StopCPUProfile()
	}

	conns, pool := dialSimServers(addrs)
	defer pool.Close()
	sim, err := nodesim.New(cfg, conns)
	if err != nil {
		c.Ui.Error(err.Error())
		return 1
	}
	start := time.Now()
	sim.Start()
	defer sim.Stop()
	ctx := c.ctx()
	if err := sim.WaitRegistered(ctx); err != nil {
		c.Ui.Error(fmt.Sprintf("Error registering the nodes: %s", err))
		return 1
	}
	c.Ui.Output(fmt.Sprintf("nodesim: %d nodes ready in %s", cfg.Nodes, time.Since(start).Round(time.Millisecond)))

	var tick <-chan time.Time
	if statsInterval > 0 {
		t := time.NewTicker(statsInterval)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-tick:
			c.Ui.Output("nodesim: " + sim.Stats().String() + " " + selfUsage())
		case <-ctx.Done():
			c.Ui.Output("nodesim: " + sim.Stats().String() + " " + selfUsage())
			return 0
		}
	}
}

// selfUsage renders this process's CPU time and peak resident memory.
func selfUsage() string {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return "usage=unknown"
	}
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	// Linux reports ru_maxrss in kilobytes.
	return fmt.Sprintf("cpu_s=%.1f peak_rss_mb=%.0f", cpu.Seconds(), float64(ru.Maxrss)/1024)
}
