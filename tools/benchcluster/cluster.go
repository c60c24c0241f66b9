package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/opennomad/nomad/tools/childproc"

	"github.com/opennomad/nomad/api"
)

// agentPorts are one agent's listening ports on 127.0.0.1.
type agentPorts struct {
	HTTP, RPC, Serf int
}

// agent is one agent process and how to reach it.
type agent struct {
	name  string
	dir   string
	ports agentPorts
	proc  *childproc.Proc
	// config is the agent's configuration, kept for a restart.
	config string
}

func (a *agent) httpAddr() string { return fmt.Sprintf("http://127.0.0.1:%d", a.ports.HTTP) }
func (a *agent) rpcAddr() string  { return fmt.Sprintf("127.0.0.1:%d", a.ports.RPC) }
func (a *agent) serfAddr() string { return fmt.Sprintf("127.0.0.1:%d", a.ports.Serf) }

// api returns a client of the agent's HTTP API.
func (a *agent) api() *api.Client {
	c, _ := api.NewClient(&api.Config{Address: a.httpAddr()})
	return c
}

// cluster is the servers (and, for W3, a client agent) of one benchmark
// case, under one temporary directory removed by close.
type cluster struct {
	bin     string
	dir     string
	servers []*agent
	client  *agent
	// token is the management token when ACLs are on.
	token string
	sim   *childproc.Proc
}

// freePorts reserves n distinct free ports on 127.0.0.1. They are
// released before the agents bind them; another process taking one in
// between is unlikely on a benchmark machine.
func freePorts(n int) ([]int, error) {
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	var out []int
	for len(out) < n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("reserving ports: %w", err)
		}
		lns = append(lns, ln)
		out = append(out, ln.Addr().(*net.TCPAddr).Port)
	}
	return out, nil
}

// serverConfig is the agent configuration of server i of n: its own data
// dir (the Raft log in raft-wal, fsync'd on every append), joined to the
// others through retry_join, with in-memory metrics collected every
// second (the load generator reads the plan rejection counter there),
// pprof endpoints, and an event buffer large enough that the load
// generator's stream does not lag out. Prometheus metrics stay off: the
// sink's per-job series would dominate the leader's memory.
func serverConfig(name, dataDir string, p agentPorts, n int, serfAddrs []string, opts serverOpts) string {
	extra := ""
	if opts.acl {
		extra = "\nacl {\n  enabled = true\n}\n"
	}
	return fmt.Sprintf(`name         = %q
data_dir     = %q
bind_addr    = "127.0.0.1"
log_level    = "INFO"
enable_debug = true

ports {
  http = %d
  rpc  = %d
  serf = %d
}

server {
  enabled           = true
  bootstrap_expect  = %d
  event_buffer_size = 2000
%s
  server_join {
    retry_join     = [%s]
    retry_interval = "200ms"
  }
}

telemetry {
  in_memory_collection_interval = "1s"
}
%s`, name, dataDir, p.HTTP, p.RPC, p.Serf, n, opts.server, hclStrings(serfAddrs), extra)
}

// serverOpts are what a case changes in the servers' configuration:
// ACLs on, and lines added to the server block (-server-config).
type serverOpts struct {
	acl    bool
	server string
}

// hclStrings renders the elements of an HCL list of strings.
func hclStrings(values []string) string {
	quoted := make([]string, len(values))
	for i, v := range values {
		quoted[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(quoted, ", ")
}

// clientConfig is a client agent that runs tasks with mock_driver, for W3.
func clientConfig(name, dataDir string, p agentPorts, rpcAddrs []string) string {
	return fmt.Sprintf(`name      = %q
data_dir  = %q
bind_addr = "127.0.0.1"
log_level = "INFO"

ports {
  http = %d
  rpc  = %d
  serf = %d
}

client {
  enabled = true
  servers = [%s]
  options = {
    "driver.mock_driver.enable" = "1"
  }
}
`, name, dataDir, p.HTTP, p.RPC, p.Serf, hclStrings(rpcAddrs))
}

// startCluster starts n servers (and a client agent when withClient)
// under a new temporary directory.
func startCluster(bin string, n int, withClient bool, opts serverOpts) (*cluster, error) {
	dir, err := os.MkdirTemp("", "benchcluster-")
	if err != nil {
		return nil, err
	}
	c := &cluster{bin: bin, dir: dir}
	ok := false
	defer func() {
		if !ok {
			c.close()
		}
	}()
	agents := n
	if withClient {
		agents++
	}
	ports, err := freePorts(3 * agents)
	if err != nil {
		return nil, err
	}
	for i := range agents {
		a := &agent{dir: filepath.Join(dir, fmt.Sprintf("agent-%d", i+1)),
			ports: agentPorts{HTTP: ports[3*i], RPC: ports[3*i+1], Serf: ports[3*i+2]}}
		if i < n {
			a.name = fmt.Sprintf("server-%d", i+1)
			c.servers = append(c.servers, a)
		} else {
			a.name = "client-1"
			c.client = a
		}
	}
	var serfAddrs, rpcAddrs []string
	for _, s := range c.servers {
		serfAddrs = append(serfAddrs, s.serfAddr())
		rpcAddrs = append(rpcAddrs, s.rpcAddr())
	}
	for _, s := range c.servers {
		if err := c.start(s, serverConfig(s.name, filepath.Join(s.dir, "data"), s.ports, n, serfAddrs, opts)); err != nil {
			return nil, err
		}
	}
	if c.client != nil {
		if err := c.start(c.client, clientConfig(c.client.name, filepath.Join(c.client.dir, "data"), c.client.ports, rpcAddrs)); err != nil {
			return nil, err
		}
	}
	ok = true
	return c, nil
}

// start writes the agent's configuration and runs it.
func (c *cluster) start(a *agent, config string) error {
	if err := os.MkdirAll(filepath.Join(a.dir, "data"), 0o700); err != nil {
		return err
	}
	cfgPath := filepath.Join(a.dir, "agent.hcl")
	if err := os.WriteFile(cfgPath, []byte(config), 0o600); err != nil {
		return err
	}
	p, err := childproc.Start(a.name, filepath.Join(a.dir, "agent.log"), c.bin, "agent", "-config="+cfgPath)
	if err != nil {
		return err
	}
	a.proc, a.config = p, config
	return nil
}

// startSim runs the node simulator with nodes nodes against every server
// and waits until they are all ready.
func (c *cluster) startSim(ctx context.Context, nodes int) (time.Duration, error) {
	var addrs []string
	for _, s := range c.servers {
		addrs = append(addrs, s.rpcAddr())
	}
	start := time.Now()
	p, err := childproc.Start("nodesim", filepath.Join(c.dir, "nodesim.log"), c.bin, "nodesim",
		"-servers="+strings.Join(addrs, ","), fmt.Sprintf("-nodes=%d", nodes), "-stats-interval=10s")
	if err != nil {
		return 0, err
	}
	c.sim = p
	if _, err := p.WaitLog(ctx, "nodes ready in"); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

// index returns the position of a among the servers.
func (c *cluster) index(a *agent) int {
	for i, s := range c.servers {
		if s == a {
			return i
		}
	}
	return -1
}

// running returns the servers still running.
func (c *cluster) running() []*agent {
	var out []*agent
	for _, s := range c.servers {
		if s.proc != nil && s.proc.Running() {
			out = append(out, s)
		}
	}
	return out
}

// agreedLeader returns the server every running server names as leader,
// nil while they disagree or know none.
func (c *cluster) agreedLeader() *agent {
	leader := ""
	for _, s := range c.running() {
		l, err := s.api().Status().Leader()
		if err != nil || l == "" || (leader != "" && l != leader) {
			return nil
		}
		leader = l
	}
	for _, s := range c.servers {
		if s.rpcAddr() == leader {
			return s
		}
	}
	return nil
}

// waitLeader waits until the running servers agree on a leader that has
// every server as a Raft peer.
func (c *cluster) waitLeader(ctx context.Context) (*agent, error) {
	for {
		if l := c.agreedLeader(); l != nil {
			if peers, err := l.api().Status().Peers(); err == nil && len(peers) == len(c.servers) {
				return l, nil
			}
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for the servers to elect a leader: %w (logs in %s)", ctx.Err(), c.dir)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// bootstrapACLs makes the management token through a, retrying until
// the leader has established itself.
func (c *cluster) bootstrapACLs(ctx context.Context, a *agent) error {
	for {
		tok, _, err := a.api().ACLTokens().Bootstrap(nil)
		if err == nil {
			c.token = tok.SecretID
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("bootstrapping ACLs: %w (last error: %v)", ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// close stops every process (SIGINT, then SIGKILL after a grace period)
// and removes the directory unless keep.
func (c *cluster) close() {
	if c.sim != nil {
		c.sim.Stop(syscall.SIGINT, 5*time.Second)
	}
	if c.client != nil && c.client.proc != nil {
		c.client.proc.Stop(syscall.SIGINT, 5*time.Second)
	}
	for _, s := range c.servers {
		if s.proc != nil {
			s.proc.Stop(syscall.SIGINT, 5*time.Second)
		}
	}
}

// remove deletes the cluster's directory.
func (c *cluster) remove() error { return os.RemoveAll(c.dir) }
