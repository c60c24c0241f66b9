package nomad

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/raft"

	"github.com/opennomad/nomad/nomad/membership"
	"github.com/opennomad/nomad/nomad/rpcnet"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/version"
)

// raftNetworkTimeout bounds each Raft RPC's I/O on the network transport
// (snapshot transfers get proportionally longer).
const raftNetworkTimeout = 10 * time.Second

// ErrNoGossip answers membership operations on a server that runs no
// gossip (Config.Cluster.SerfAddr is empty).
var ErrNoGossip = errors.New("this server runs no gossip: no serf address is configured")

// clusterNet is the server's network side: the listener on the RPC port
// (RPC, streaming calls and Raft), the pool of connections to other
// servers and the gossip membership. Every field may be nil: a server
// alone in its process has none of them.
type clusterNet struct {
	listener   *rpcnet.Listener
	pool       *rpcnet.Pool
	membership *membership.Membership
	serving    sync.WaitGroup

	// regionPools are the pools to other regions' servers, by region,
	// made as needed when their connections check another name
	// (ClusterConfig.RegionTLSWrap).
	regionMu    sync.Mutex
	regionPools map[string]*rpcnet.Pool
	closed      bool
}

// setupListener opens the RPC port when one is configured and settles
// the advertised RPC address: the configured one, with the listener's
// port when it was 0, or the listener's own address.
func (s *Server) setupListener() error {
	c := &s.config.Cluster
	if c.RPCAddr == "" {
		return nil
	}
	ln, err := net.Listen("tcp", c.RPCAddr)
	if err != nil {
		return fmt.Errorf("listening for RPC on %s: %w", c.RPCAddr, err)
	}
	advertise, err := resolveAdvertise(s.config.RPCAdvertise, ln.Addr().(*net.TCPAddr))
	if err != nil {
		ln.Close()
		return fmt.Errorf("rpc advertise address: %w", err)
	}
	raftAddr, err := net.ResolveTCPAddr("tcp", advertise)
	if err != nil {
		ln.Close()
		return fmt.Errorf("rpc advertise address %q: %w", advertise, err)
	}
	s.config.RPCAdvertise = advertise
	l, err := rpcnet.NewListener(ln, rpcnet.ListenerConfig{
		ServeRPC:      s.ServeRPCConn,
		ServeStream:   s.serveStream,
		RaftAdvertise: raftAddr,
		TLS:           c.TLS,
		Logger:        s.logger,

		FirstByteTimeout:  c.RPCHandshakeTimeout,
		MaxConnsPerClient: c.RPCMaxConnsPerClient,
	})
	if err != nil {
		ln.Close()
		return err
	}
	pc := c.Pool
	pc.Logger = s.logger
	s.net.listener = l
	s.net.pool = rpcnet.NewPool(pc)
	return nil
}

// resolveAdvertise completes an advertised address: empty means the
// listener's address (refused when it is a wildcard), and port 0 the
// listener's port.
func resolveAdvertise(advertise string, bound *net.TCPAddr) (string, error) {
	if advertise == "" {
		if bound.IP.IsUnspecified() {
			return "", fmt.Errorf("listening on %s: an address other servers can dial must be advertised", bound)
		}
		return bound.String(), nil
	}
	host, port, err := net.SplitHostPort(advertise)
	if err != nil {
		return "", fmt.Errorf("%q: %w", advertise, err)
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		return "", fmt.Errorf("%q: other servers cannot dial a wildcard address; advertise a reachable one", advertise)
	}
	if port == "0" {
		port = strconv.Itoa(bound.Port)
	}
	return net.JoinHostPort(host, port), nil
}

// networkTransport is the Raft transport over the listener's port, or nil
// without a listener.
func (s *Server) networkTransport() raft.Transport {
	if s.net.listener == nil {
		return nil
	}
	return rpcnet.NewRaftTransport(s.net.listener.RaftLayer(), raftNetworkTimeout, s.logger)
}

// startServing accepts connections; Raft must be running.
func (s *Server) startServing() {
	if s.net.listener == nil {
		return
	}
	s.net.serving.Add(1)
	go func() {
		defer s.net.serving.Done()
		if err := s.net.listener.Serve(); err != nil {
			s.logger.Error("RPC listener stopped", "error", err)
		}
	}()
	s.logger.Info("RPC listening", "address", s.net.listener.Addr(), "advertise", s.config.RPCAdvertise)
}

// setupGossip starts the gossip membership when a serf address is
// configured. A server whose Raft already has state never bootstraps
// again; one that bootstrapped itself alone (bootstrap_expect 1) has
// nothing left to wait for.
func (s *Server) setupGossip(hadRaftState bool) error {
	c := &s.config.Cluster
	if c.SerfAddr == "" {
		return nil
	}
	host, portStr, err := net.SplitHostPort(c.SerfAddr)
	if err != nil {
		return fmt.Errorf("serf address %q: %w", c.SerfAddr, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return fmt.Errorf("serf address %q: bad port", c.SerfAddr)
	}
	expect := s.config.BootstrapExpect
	if hadRaftState || expect == 1 {
		expect = 0
	}
	mc := membership.DefaultConfig()
	mc.NodeName = s.config.NodeName
	mc.Region = s.config.Region
	mc.Datacenter = s.config.Datacenter
	mc.BindAddr = host
	mc.BindPort = port
	if adv := s.config.SerfAdvertise; adv != "" {
		ahost, aport, err := net.SplitHostPort(adv)
		if err != nil {
			return fmt.Errorf("serf advertise address %q: %w", adv, err)
		}
		mc.AdvertiseAddr = ahost
		if p, err := strconv.Atoi(aport); err == nil && p != 0 {
			mc.AdvertisePort = p
		}
	}
	mc.ServerID = s.id
	mc.RPCAddr = s.config.RPCAdvertise
	mc.Build = version.String()
	mc.BootstrapExpect = expect
	mc.PeerCount = s.peerCount
	mc.OnServer = func(info membership.ServerInfo) { s.SetPeer(info.ID, info.RPCAddr, info.Name) }
	if !s.config.DevMode && s.config.DataDir != "" {
		dir := filepath.Join(s.config.DataDir, "serf")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("creating gossip directory: %w", err)
		}
		mc.SnapshotPath = filepath.Join(dir, "local.snapshot")
	}
	if err := s.gossipKeyring(&mc); err != nil {
		return err
	}
	if c.ReconcileInterval > 0 {
		mc.ReconcileInterval = c.ReconcileInterval
	}
	if c.DeadServerGrace > 0 {
		mc.DeadServerGrace = c.DeadServerGrace
	}
	mc.MinQuorum = c.MinQuorum
	mc.CleanupPolicy = s.deadServerCleanup
	mc.Profile = c.GossipProfile
	mc.Tune = c.GossipTune
	mc.Logger = s.logger
	m, err := membership.New(mc, s.raft)
	if err != nil {
		return err
	}
	s.net.membership = m
	s.AddLeadershipObserver(m)
	return nil
}

// peerCount asks the server at addr how many Raft peers it has; gossip
// asks every server before bootstrapping a new cluster.
func (s *Server) peerCount(_ context.Context, addr string) (int, error) {
	var peers []string
	if err := s.net.pool.RPC(addr, "Status.Peers", &structs.GenericRequest{}, &peers); err != nil {
		return 0, err
	}
	return len(peers), nil
}

// shutdownGossip stops gossip; the caller then stops Raft and calls
// closeNetwork.
func (s *Server) shutdownGossip() error {
	if s.net.membership == nil {
		return nil
	}
	if err := s.net.membership.Shutdown(); err != nil {
		return fmt.Errorf("stopping gossip: %w", err)
	}
	return nil
}

// closeNetwork ends calls to other servers, then stops accepting and
// waits for the connections being served. Raft is stopped by then.
func (s *Server) closeNetwork() error {
	if s.net.pool != nil {
		s.net.pool.Close()
	}
	s.closeRegionPools()
	if s.net.listener == nil {
		return nil
	}
	err := s.net.listener.Close()
	s.net.serving.Wait()
	if err != nil && !errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("closing the RPC listener: %w", err)
	}
	return nil
}

// Join contacts the gossip members at addrs ("host:port" of serf ports)
// and returns how many answered.
func (s *Server) Join(addrs []string) (int, error) {
	if s.net.membership == nil {
		return 0, ErrNoGossip
	}
	return s.net.membership.Join(addrs)
}

// RetryJoin joins addrs in the background, every interval until one
// answers or max attempts failed (0: no limit); see
// membership.RetryJoin for what the channel reports.
func (s *Server) RetryJoin(addrs []string, interval time.Duration, max int) (<-chan error, error) {
	if s.net.membership == nil {
		return nil, ErrNoGossip
	}
	return s.net.membership.RetryJoin(addrs, interval, max), nil
}

// ForceLeave marks a failed server as left so the leader removes it from
// Raft at once; with prune it is also dropped from the member list.
func (s *Server) ForceLeave(node string, prune bool) error {
	if s.net.membership == nil {
		return ErrNoGossip
	}
	return s.net.membership.ForceLeave(node, prune)
}

// RPCAdvertise is the address others reach this server's RPC at, once
// settled ("" without a listener and no advertised address).
func (s *Server) RPCAdvertise() string { return s.config.RPCAdvertise }

// clientServers returns the alive servers of the region as clients should
// see them: from gossip when it runs, else from the Raft configuration.
func (s *Server) clientServers() []*structs.NodeServerInfo {
	var out []*structs.NodeServerInfo
	if m := s.net.membership; m != nil {
		for _, info := range m.Servers() {
			out = append(out, &structs.NodeServerInfo{RPCAdvertiseAddr: info.RPCAddr, Datacenter: info.Datacenter})
		}
		return out
	}
	if f := s.raft.GetConfiguration(); f.Error() == nil {
		for _, srv := range f.Configuration().Servers {
			out = append(out, &structs.NodeServerInfo{
				RPCAdvertiseAddr: s.peerAddr(srv.ID, srv.Address), Datacenter: s.config.Datacenter,
			})
		}
	}
	return out
}
