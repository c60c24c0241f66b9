package agent

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"

	"github.com/hashicorp/cli"

	"github.com/opennomad/nomad/version"
)

// Command is `nomad agent`: it loads the configuration, runs an Agent
// until SIGINT or SIGTERM, and reloads on SIGHUP.
type Command struct {
	Ui cli.Ui
	// LogOutput receives the agent's logs; os.Stdout when nil.
	LogOutput io.Writer

	// signals replaces the process's signals in tests.
	signals chan os.Signal
	// started is called once the agent runs (tests wait on it).
	started func(*Agent)
	// startServer replaces the in-process server in tests.
	startServer func(*Agent) (serverBackend, error)
	// reloaded is called after each SIGHUP with its outcome (tests).
	reloaded func(error)
}

// NewCommand returns the `nomad agent` command.
func NewCommand(ui cli.Ui) cli.Command {
	return &Command{Ui: ui}
}

// Synopsis is the one-line description in `nomad` help.
func (c *Command) Synopsis() string {
	return "Runs a Nomad agent"
}

// Help describes the flags.
func (c *Command) Help() string {
	return strings.TrimSpace(`
Usage: nomad agent [options]

  Starts the Nomad agent and runs until an interrupt is received. The
  agent may be a client and/or server. SIGHUP reloads the configuration;
  log_level and the tls block's certificates take effect without a
  restart.

  The Nomad agent's configuration comes from configuration files, given
  with -config, and from the flags below, which override the files.

Agent Options:

  -config=<path>
    A configuration file or a directory of *.hcl and *.json files.
    Repeatable; later files override earlier ones.

  -data-dir=<path>
    The data directory. Required unless -dev.

  -bind=<addr>
    The address the agent's listeners bind to (default 0.0.0.0).

  -dc=<datacenter>
    The datacenter of the agent (default dc1).

  -region=<region>
    The region of the agent (default global).

  -node=<name>
    The agent's name (default: the host name).

  -log-level=<level>
    TRACE, DEBUG, INFO, WARN or ERROR (default INFO).

  -log-json
    Write logs as JSON.

  -dev
    Development mode: a server and a client in one process on 127.0.0.1,
    with in-memory state, the raw_exec driver enabled and DEBUG logs.
    Combines with -config and the other flags.

Server Options:

  -server
    Run a server.

  -bootstrap-expect=<n>
    Number of servers to wait for before electing a leader.

  -retry-join=<address>
    Address of a server to join, retried until it answers. Repeatable.

  -num-schedulers=<n>
    Number of scheduler workers (default: the number of CPU cores).

Client Options:

  -client
    Run a client.

  -servers=<host:port,...>
    RPC addresses of the servers to register with.

  -node-class=<class>, -node-pool=<pool>, -network-interface=<name>
    The node's class, node pool and network interface.

  -meta=<key=value>
    Node metadata. Repeatable.
`)
}

// Run starts the agent and blocks until it stops; the exit code is 0
// after a graceful shutdown and 1 on any error.
func (c *Command) Run(args []string) int {
	var usage bytes.Buffer
	cfg, err := LoadConfig(args, &usage)
	if err != nil {
		if usage.Len() > 0 {
			c.Ui.Error(strings.TrimSpace(usage.String()))
			c.Ui.Error(c.Help())
			return 1
		}
		c.Ui.Error(fmt.Sprintf("==> Error loading configuration: %v", err))
		return 1
	}

	c.Ui.Output("==> Starting Nomad agent...")
	startServer := c.startServer
	if startServer == nil {
		startServer = (*Agent).startServer
	}
	logOut := c.LogOutput
	if logOut == nil {
		logOut = os.Stdout
	}
	gate := newGatedWriter(logOut)
	// Startup logs are shown after the summary, or with the error.
	defer gate.Flush()
	a, err := newAgent(cfg, gate, startServer)
	if err != nil {
		gate.Flush()
		c.Ui.Error(fmt.Sprintf("==> Error starting agent: %v", err))
		return 1
	}
	c.Ui.Output("==> Nomad agent configuration:\n")
	c.Ui.Info(agentSummary(cfg, a))
	if cfg.DevMode {
		c.Ui.Warn("==> Dev mode: state is kept in memory and lost when the agent stops.")
	}
	if cfg.Consul.set() {
		c.Ui.Warn("==> The consul block is ignored: this agent has no Consul integration; services use the built-in provider.")
	}
	c.Ui.Output("==> Nomad agent started! Log data will stream in below:\n")
	gate.Flush()
	if c.started != nil {
		c.started(a)
	}
	return c.wait(a, args)
}

// wait handles signals until the agent stops.
func (c *Command) wait(a *Agent, args []string) int {
	sigs := c.signals
	if sigs == nil {
		sigs = make(chan os.Signal, 4)
		signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
		defer signal.Stop(sigs)
	}
	for {
		var sig os.Signal
		select {
		case err := <-a.Fatal():
			c.Ui.Error(fmt.Sprintf("==> %v; shutting down", err))
			a.Shutdown()
			return 1
		case sig = <-sigs:
		}
		if sig == syscall.SIGHUP {
			c.reload(a, args)
			continue
		}
		c.Ui.Output(fmt.Sprintf("==> Caught signal: %v", sig))
		if leaveOn(a.config, sig) {
			c.Ui.Output("==> Gracefully leaving the region")
			if err := a.Leave(); err != nil {
				c.Ui.Error(fmt.Sprintf("==> Error leaving: %v", err))
			}
		}
		done := make(chan error, 1)
		go func() { done <- a.Shutdown() }()
		select {
		case err := <-done:
			if err != nil {
				c.Ui.Error(fmt.Sprintf("==> Error during shutdown: %v", err))
				return 1
			}
			c.Ui.Output("==> Gracefully shut down agent")
			return 0
		case sig := <-sigs:
			// A second interrupt does not wait for the drain.
			c.Ui.Error(fmt.Sprintf("==> Caught second signal %v, exiting without waiting", sig))
			return 1
		}
	}
}

// leaveOn reports whether sig asks for a graceful leave before the
// shutdown, by the agent's leave_on_interrupt and leave_on_terminate.
func leaveOn(cfg *Config, sig os.Signal) bool {
	switch sig {
	case os.Interrupt:
		return cfg.LeaveOnInt
	case syscall.SIGTERM:
		return cfg.LeaveOnTerm
	}
	return false
}

// reload re-reads the same arguments and applies what can change live.
func (c *Command) reload(a *Agent, args []string) {
	c.Ui.Output("==> Caught signal: hangup, reloading configuration")
	cfg, err := LoadConfig(args, io.Discard)
	if err == nil {
		err = a.Reload(cfg)
	}
	if err != nil {
		c.Ui.Error(fmt.Sprintf("==> Error reloading configuration, keeping the current one: %v", err))
	}
	if c.reloaded != nil {
		c.reloaded(err)
	}
}

// agentSummary is the key facts of the running agent, aligned as Nomad
// prints them.
func agentSummary(cfg *Config, a *Agent) string {
	rows := map[string]string{
		"Bind Addrs": "HTTP: " + a.HTTPAddr(),
		"Client":     fmt.Sprint(cfg.Client.Enabled),
		"Log Level":  cfg.LogLevel,
		"Region":     fmt.Sprintf("%s (DC: %s)", cfg.Region, cfg.Datacenter),
		"Server":     fmt.Sprint(cfg.Server.Enabled),
		"Version":    version.String(),
		"Node Name":  cfg.Name,
	}
	keys := make([]string, 0, len(rows))
	width := 0
	for k := range rows {
		keys = append(keys, k)
		width = max(width, len(k))
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%*s: %s\n", width+7, k, rows[k])
	}
	return b.String()
}
