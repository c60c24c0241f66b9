package agent

import (
	"errors"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/opennomad/nomad/acl"
	"github.com/opennomad/nomad/api"
	"github.com/opennomad/nomad/nomad"
	"github.com/opennomad/nomad/nomad/clock"
	"github.com/opennomad/nomad/nomad/stream"
	"github.com/opennomad/nomad/nomad/worker"
	"github.com/opennomad/nomad/structs"
)

// startServer builds the in-process server from the agent configuration.
func (a *Agent) startServer() (serverBackend, error) {
	cfg := serverConfig(a.config)
	cfg.Logger = a.logger
	cfg.Cluster.TLS = a.rpcListenerTLS()
	cfg.Cluster.Pool.TLSWrap = a.rpcDialer()
	cfg.Cluster.RegionTLSWrap = a.regionDialer()
	if a.broker != nil {
		// Only a non-nil broker: a typed nil would be called.
		cfg.EventPublisher = a.broker
	}
	var skew *clock.Skewed
	if a.config.EnableDebug {
		// Fault injection: /v1/agent/debug/clock moves this server's
		// clock (agent_debug_clock.go).
		skew = clock.NewSkewed(clock.Real{})
		cfg.Clock = skew
	}
	if cfg.MemoryLimit > 0 {
		// The collector works harder as the process nears the figure,
		// rather than letting the heap double past it. The runtime's
		// limit counts only the memory it manages; the rest of the
		// figure is left for what it does not (the binary's code,
		// memory outside Go), so that the resident size stays under it.
		debug.SetMemoryLimit(int64(cfg.MemoryLimit / 10 * 9))
	}
	srv, err := nomad.NewServer(cfg)
	if err != nil {
		return nil, err
	}
	if err := a.joinServers(srv); err != nil {
		srv.Shutdown()
		return nil, err
	}
	return &localServer{srv: srv, broker: a.broker, agent: a.config, skew: skew}, nil
}

// serverConfig maps the agent's configuration onto the server's; what the
// agent configuration does not set keeps the server's defaults.
func serverConfig(c *Config) *nomad.Config {
	sc := nomad.DefaultConfig()
	sc.Region = c.Region
	sc.Datacenter = c.Datacenter
	sc.NodeName = c.Name
	sc.RPCAdvertise = advertiseAddr(c, c.Advertise.RPC, c.Addresses.RPC, c.Ports.RPC)
	sc.SerfAdvertise = advertiseAddr(c, c.Advertise.Serf, c.Addresses.Serf, c.Ports.Serf)
	sc.DevMode = c.DevMode
	if !c.DevMode {
		sc.DataDir = filepath.Join(c.DataDir, "server")
		// A dev agent is self-contained; any other server listens for
		// servers and clients on its RPC port and gossips on its serf
		// port.
		sc.Cluster.RPCAddr = listenAddr(c, c.Addresses.RPC, c.Ports.RPC)
		sc.Cluster.SerfAddr = listenAddr(c, c.Addresses.Serf, c.Ports.Serf)
		sc.Cluster.RPCHandshakeTimeout = c.Limits.RPCHandshakeTimeout
		sc.Cluster.RPCMaxConnsPerClient = c.Limits.RPCMaxConnsPerClient
	}
	sc.Cluster.GossipKey = c.Server.EncryptKey
	sc.ACLEnabled = c.ACL.Enabled
	sc.AuthoritativeRegion = c.Server.AuthoritativeRegion
	sc.ReplicationToken = c.ACL.ReplicationToken
	if c.ACL.TokenMinExpirationTTL > 0 {
		sc.ACLTokenMinExpirationTTL = c.ACL.TokenMinExpirationTTL
	}
	if c.ACL.TokenMaxExpirationTTL > 0 {
		sc.ACLTokenMaxExpirationTTL = c.ACL.TokenMaxExpirationTTL
	}
	s := &c.Server
	sc.BootstrapExpect = s.BootstrapExpect
	sc.NumSchedulers = s.NumSchedulers
	sc.EnabledSchedulers = append([]string(nil), s.EnabledSchedulers...)
	sc.MinHeartbeatTTL = s.MinHeartbeatTTL
	sc.MaxHeartbeatsPerSecond = s.MaxHeartbeatsPerSecond
	sc.JobMaxCount = s.JobMaxCount
	// Validated with the configuration.
	if size, err := humanize.ParseBytes(s.JobMaxSourceSize); err == nil {
		sc.JobMaxSourceSize = int(size)
	}
	if s.MemoryLimit != "" {
		if size, err := humanize.ParseBytes(s.MemoryLimit); err == nil {
			sc.MemoryLimit = size
		}
	}
	sc.HeapLive = s.heapLive
	sc.HeartbeatGrace = s.HeartbeatGrace
	sc.FailoverHeartbeatTTL = s.FailoverHeartbeatTTL
	sc.EvalGCThreshold = s.EvalGCThreshold
	sc.BatchEvalGCThreshold = s.BatchEvalGCThreshold
	sc.JobGCInterval = s.JobGCInterval
	sc.JobGCThreshold = s.JobGCThreshold
	sc.NodeGCThreshold = s.NodeGCThreshold
	sc.DeploymentGCThreshold = s.DeploymentGCThreshold
	sc.RootKeyRotationThreshold = s.RootKeyRotationThreshold
	sc.DefaultSchedulerConfig = *s.DefaultSchedulerConfig.SchedulerConfiguration()
	sc.PlanApplyPipeline = s.PlanApplyPipeline
	sc.RaftSnapshotThreshold = uint64(s.RaftSnapshotThreshold)
	sc.RaftSnapshotInterval = s.RaftSnapshotInterval
	sc.RaftTrailingLogs = uint64(s.RaftTrailingLogs)
	if s.RaftMultiplier > 0 {
		sc.RaftConfig = nomad.ScaledRaftConfig(s.RaftMultiplier)
	}
	return sc
}

// localServer adapts the in-process server to what the HTTP API needs.
type localServer struct {
	srv    *nomad.Server
	broker *stream.EventBroker
	agent  *Config
	// skew is the server's clock when enable_debug lets it be moved.
	skew *clock.Skewed
}

// ClockSkew is the server's movable clock, nil when it cannot be moved.
func (l *localServer) ClockSkew() *clock.Skewed { return l.skew }

// RPC calls the server.
func (l *localServer) RPC(method string, args, reply interface{}) error {
	return l.srv.RPC(method, args, reply)
}

// advertiseAddr is the "host:port" others reach a listener at: the
// advertise setting (its port, or the listener's when it names none),
// else the listener's address (or bind_addr) and port.
func advertiseAddr(c *Config, advertise, address string, port int) string {
	if advertise != "" {
		if host, p, err := splitHostPortDefault(advertise, port); err == nil {
			return net.JoinHostPort(host, strconv.Itoa(p))
		}
	}
	return net.JoinHostPort(advertiseHost(c, "", address), strconv.Itoa(port))
}

// advertiseHost is the host others use to reach a listener: its
// advertise setting, else its address, else bind_addr; a wildcard bind
// is replaced by the first private address of the machine.
func advertiseHost(c *Config, advertise, address string) string {
	if advertise != "" {
		host, _, err := splitHostPortDefault(advertise, 1)
		if err == nil {
			return host
		}
	}
	host := address
	if host == "" {
		host = c.BindAddr
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		if private := privateIP(); private != "" {
			return private
		}
	}
	return host
}

func privateIP() string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return ""
	}
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && ipn.IP.IsPrivate() {
			return ipn.IP.String()
		}
	}
	return ""
}

// SchedulerWorkers describes each scheduling worker of this server.
func (l *localServer) SchedulerWorkers() ([]api.AgentSchedulerWorkerInfo, error) {
	pool := l.srv.Workers()
	workers := pool.Workers()
	out := make([]api.AgentSchedulerWorkerInfo, 0, len(workers))
	for _, w := range workers {
		out = append(out, api.AgentSchedulerWorkerInfo{
			ID:                w.ID,
			EnabledSchedulers: w.EnabledSchedulers,
			Started:           w.Started.UTC().Format(time.RFC3339Nano),
			Status:            w.Status,
			WorkloadStatus:    w.WorkloadStatus,
			OperatorPaused:    pool.WorkerPaused(w.ID),
		})
	}
	return out, nil
}

// SchedulerWorkerConfig is the worker pool's configuration in effect and
// whether an operator paused it.
func (l *localServer) SchedulerWorkerConfig() (api.AgentSchedulerWorkerConfigRequest, error) {
	pool := l.srv.Workers()
	num, enabled := pool.SchedulerConfig()
	paused := pool.Paused()
	return api.AgentSchedulerWorkerConfigRequest{NumSchedulers: num, EnabledSchedulers: enabled, Paused: &paused}, nil
}

// SetSchedulerWorkerConfig resizes the worker pool and, when asked,
// pauses or resumes every worker; until the agent restarts.
func (l *localServer) SetSchedulerWorkerConfig(req api.AgentSchedulerWorkerConfigRequest) (api.AgentSchedulerWorkerConfigRequest, error) {
	pool := l.srv.Workers()
	if err := pool.SetSchedulerConfig(req.NumSchedulers, req.EnabledSchedulers); err != nil {
		if errors.Is(err, worker.ErrInvalidSchedulerConfig) {
			return api.AgentSchedulerWorkerConfigRequest{}, codedError(http.StatusBadRequest, "Invalid request: "+err.Error())
		}
		return api.AgentSchedulerWorkerConfigRequest{}, err
	}
	if req.Paused != nil {
		if *req.Paused {
			pool.Pause()
		} else {
			pool.Resume()
		}
	}
	return l.SchedulerWorkerConfig()
}

// Stats reports who leads and Raft's own counters.
func (l *localServer) Stats() map[string]map[string]string {
	return map[string]map[string]string{
		"nomad": {
			"server":        "true",
			"leader":        strconv.FormatBool(l.srv.IsLeader()),
			"leader_addr":   l.leaderAddr(),
			"bootstrap":     strconv.FormatBool(l.agent.Server.BootstrapExpect == 1),
			"known_regions": strconv.Itoa(len(l.srv.Regions())),
			"server_id":     l.srv.ID(),
		},
		"raft": l.srv.Raft().Stats(),
	}
}

// leaderAddr is the leader's RPC address, as Status.Leader reports it;
// "" when none is known.
func (l *localServer) leaderAddr() string {
	var addr string
	if err := l.srv.RPC("Status.Leader", &structs.GenericRequest{}, &addr); err != nil {
		return ""
	}
	return addr
}

// Subscribe opens an event stream on the agent's broker.
func (l *localServer) Subscribe(req *stream.SubscribeRequest) (*stream.Subscription, error) {
	if l.broker == nil {
		return nil, codedError(http.StatusNotImplemented, "the event broker is disabled (server.enable_event_broker = false)")
	}
	return l.broker.Subscribe(req)
}

// ResolveACL resolves a token on the server (cached there).
func (l *localServer) ResolveACL(secret string) (*acl.ACL, error) { return l.srv.ResolveACL(secret) }

// Shutdown stops the server.
func (l *localServer) Shutdown() error { return l.srv.Shutdown() }

// AllocNode is the node the allocation runs on, nil when either is
// unknown (client requests forwarded from this agent).
func (l *localServer) AllocNode(allocID string) (*structs.Node, error) {
	alloc, err := l.srv.State().AllocByID(nil, allocID)
	if err != nil || alloc == nil {
		return nil, err
	}
	return l.srv.State().NodeByID(nil, alloc.NodeID)
}

// NodeByID is the node, nil when it is unknown.
func (l *localServer) NodeByID(nodeID string) (*structs.Node, error) {
	return l.srv.State().NodeByID(nil, nodeID)
}

// Leave leaves the region for good (a graceful leave before Shutdown).
func (l *localServer) Leave() error { return l.srv.Leave() }

// Join joins the server's gossip to the members at addrs.
func (l *localServer) Join(addrs []string) (int, error) { return l.srv.Join(addrs) }

// ForceLeave marks a failed server as left.
func (l *localServer) ForceLeave(node string, prune bool) error {
	return l.srv.ForceLeave(node, prune)
}

// SnapshotSave streams a snapshot archive of the cluster state.
func (l *localServer) SnapshotSave(w io.Writer, token string, stale bool, onIndex func(uint64)) error {
	return l.srv.SnapshotSave(w, token, stale, onIndex)
}

// SnapshotRestore restores the cluster state from an archive.
func (l *localServer) SnapshotRestore(r io.Reader, token string) error {
	return l.srv.SnapshotRestore(r, token)
}
