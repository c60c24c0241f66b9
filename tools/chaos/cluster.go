package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/opennomad/nomad/tools/childproc"

	"github.com/opennomad/nomad/api"
)

// server is one server process, its ports and the proxy in front of its
// RPC port.
type server struct {
	name            string
	dir             string
	http, rpc, serf int
	proxy           *proxy
	proc            *childproc.Proc
	stopped         bool // SIGSTOPped
}

func (s *server) httpAddr() string { return fmt.Sprintf("http://127.0.0.1:%d", s.http) }

// api is a client of the server's HTTP API whose requests give up after
// timeout, so that a stopped or partitioned server cannot hang the
// harness.
func (s *server) api(timeout time.Duration) *api.Client {
	c, _ := api.NewClient(&api.Config{Address: s.httpAddr(), HTTPClient: &http.Client{Timeout: timeout}})
	return c
}

// up reports whether the process runs and is not stopped.
func (s *server) up() bool { return s.proc != nil && s.proc.Running() && !s.stopped }

// cluster is the servers, their proxies and the node simulators of one
// run, under one temporary directory.
type cluster struct {
	bin string
	dir string
	// raftDisks: each server's Raft directory is a tmpfs of its own
	// (for full-disk faults).
	raftDisks bool
	net       *network
	servers   []*server
	// sim holds the steady nodes; flaky the nodes that disappear and
	// come back (a second simulator, stopped and continued).
	sim, flaky *childproc.Proc
}

// freePorts reserves n distinct free loopback ports; they are released
// before the servers bind them.
func freePorts(n int) ([]int, error) {
	var out []int
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		lns = append(lns, ln)
		out = append(out, ln.Addr().(*net.TCPAddr).Port)
	}
	return out, nil
}

// serverConfig is a server with durable Raft (raft-wal, fsync'd on every
// append) in its data dir, advertising its proxy as its RPC address, with
// short heartbeat TTLs so that a vanished node is noticed within seconds,
// and frequent Raft snapshots so that restarts replay snapshot and log.
func serverConfig(s *server, n int, serfAddrs []string) string {
	quoted := make([]string, len(serfAddrs))
	for i, a := range serfAddrs {
		quoted[i] = strconv.Quote(a)
	}
	return fmt.Sprintf(`name         = %q
data_dir     = %q
bind_addr    = "127.0.0.1"
log_level    = "INFO"
# Serves /v1/agent/debug/clock, which the clock-jump fault uses.
enable_debug = true

ports {
  http = %d
  rpc  = %d
  serf = %d
}

advertise {
  rpc = %q
}

server {
  enabled                 = true
  bootstrap_expect        = %d
  min_heartbeat_ttl       = "2s"
  heartbeat_grace         = "3s"
  failover_heartbeat_ttl  = "5s"
  raft_snapshot_threshold = 200
  raft_snapshot_interval  = "3s"
  raft_trailing_logs      = 1000
  server_join {
    retry_join     = [%s]
    retry_interval = "500ms"
  }
}
`, s.name, filepath.Join(s.dir, "data"), s.http, s.rpc, s.serf, s.proxy.addr(), n, strings.Join(quoted, ", "))
}

// startCluster starts n servers behind their proxies.
func startCluster(bin string, n int, raftDisks bool) (*cluster, error) {
	dir, err := os.MkdirTemp("", "chaos-")
	if err != nil {
		return nil, err
	}
	c := &cluster{bin: bin, dir: dir, net: newNetwork(), raftDisks: raftDisks}
	ports, err := freePorts(3 * n)
	if err != nil {
		return nil, err
	}
	var serfAddrs []string
	for i := range n {
		s := &server{name: fmt.Sprintf("server-%d", i+1), dir: filepath.Join(dir, fmt.Sprintf("server-%d", i+1)),
			http: ports[3*i], rpc: ports[3*i+1], serf: ports[3*i+2]}
		if s.proxy, err = listenProxy(c.net, s.name, fmt.Sprintf("127.0.0.1:%d", s.rpc)); err != nil {
			c.close()
			return nil, err
		}
		serfAddrs = append(serfAddrs, fmt.Sprintf("127.0.0.1:%d", s.serf))
		c.servers = append(c.servers, s)
	}
	for _, s := range c.servers {
		if err := os.MkdirAll(filepath.Join(s.dir, "data"), 0o700); err != nil {
			c.close()
			return nil, err
		}
		if raftDisks {
			if err := mountRaftDisk(s); err != nil {
				c.close()
				return nil, err
			}
		}
		if err := os.WriteFile(filepath.Join(s.dir, "agent.hcl"), []byte(serverConfig(s, n, serfAddrs)), 0o600); err != nil {
			c.close()
			return nil, err
		}
		if err := c.start(s); err != nil {
			c.close()
			return nil, err
		}
	}
	return c, nil
}

// start runs (or reruns, with the same data dir) server s.
func (c *cluster) start(s *server) error {
	p, err := childproc.Start(s.name, filepath.Join(s.dir, "agent.log"), c.bin, "agent", "-config="+filepath.Join(s.dir, "agent.hcl"))
	if err != nil {
		return err
	}
	s.proc, s.stopped = p, false
	c.net.setPID(s.name, p.Pid())
	return nil
}

// startSims runs the steady and the flaky node simulators against the
// servers' own RPC ports (clients are not partitioned) and waits for
// their nodes. Nodes are small so that jobs fill them and overcommitment
// would show: less the simulator's reservation (100 MHz, 256 MB, 4 GiB of
// disk), each offers 900 MHz, 768 MB and 3 GiB of disk, so CPU binds
// first (3 to 9 of the load's allocations). The disk must exceed the
// reservation: at 4 GiB nothing at all could be placed.
func (c *cluster) startSims(ctx context.Context, nodes, flaky int) error {
	var addrs []string
	for _, s := range c.servers {
		addrs = append(addrs, fmt.Sprintf("127.0.0.1:%d", s.rpc))
	}
	run := func(name string, n int) (*childproc.Proc, error) {
		p, err := childproc.Start(name, filepath.Join(c.dir, name+".log"), c.bin, "nodesim",
			"-servers="+strings.Join(addrs, ","), fmt.Sprintf("-nodes=%d", n), "-name-prefix="+name,
			"-cpu-cores=1", "-cpu-mhz=1000", "-memory=1024", "-disk=7168", "-stats-interval=0",
			"-register-concurrency=4")
		if err != nil {
			return nil, err
		}
		_, err = p.WaitLog(ctx, "nodes ready in")
		return p, err
	}
	var err error
	if c.sim, err = run("steady", nodes); err != nil {
		return err
	}
	if flaky > 0 {
		if c.flaky, err = run("flaky", flaky); err != nil {
			return err
		}
	}
	return nil
}

// leaderOf returns the server whose proxy address is addr.
func (c *cluster) leaderOf(addr string) *server {
	for _, s := range c.servers {
		if s.proxy.addr() == addr {
			return s
		}
	}
	return nil
}

// agreedLeader returns the server every running server names as leader,
// nil while they disagree or know none.
func (c *cluster) agreedLeader() *server {
	leader := ""
	for _, s := range c.servers {
		if !s.up() {
			continue
		}
		l, err := s.api(2 * time.Second).Status().Leader()
		if err != nil || l == "" || (leader != "" && l != leader) {
			return nil
		}
		leader = l
	}
	return c.leaderOf(leader)
}

// waitHealthy waits until every server runs, all agree on a leader, and
// the leader lists every server as a Raft peer.
func (c *cluster) waitHealthy(ctx context.Context, timeout time.Duration) (*server, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		if l := c.agreedLeader(); l != nil {
			all := true
			for _, s := range c.servers {
				all = all && s.up()
			}
			if peers, err := l.api(2 * time.Second).Status().Peers(); all && err == nil && len(peers) == len(c.servers) {
				return l, nil
			}
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("the cluster did not recover within %s (logs in %s)", timeout, c.dir)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// followers returns the servers other than leader.
func (c *cluster) followers(leader *server) []*server {
	var out []*server
	for _, s := range c.servers {
		if s != leader {
			out = append(out, s)
		}
	}
	return out
}

// close stops every process and proxy.
func (c *cluster) close() {
	for _, p := range []*childproc.Proc{c.sim, c.flaky} {
		if p != nil {
			p.Stop(syscall.SIGINT, 5*time.Second)
		}
	}
	for _, s := range c.servers {
		if s.proc != nil {
			s.proc.Stop(syscall.SIGINT, 5*time.Second)
		}
		if s.proxy != nil {
			s.proxy.close()
		}
		if c.raftDisks {
			unmountRaftDisk(s)
		}
	}
}
