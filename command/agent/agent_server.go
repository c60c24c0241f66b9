package agent

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strconv"

	"github.com/hashicorp/raft"

	"github.com/opennomad/nomad/api"
	"github.com/opennomad/nomad/nomad"
	"github.com/opennomad/nomad/nomad/stream"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/version"
)

// startServer builds the in-process server from the agent configuration.
func (a *Agent) startServer() (serverBackend, error) {
	cfg := serverConfig(a.config)
	cfg.Logger = a.logger
	if a.broker != nil {
		// Only a non-nil broker: a typed nil would be called.
		cfg.EventPublisher = a.broker
	}
	srv, err := nomad.NewServer(cfg)
	if err != nil {
		return nil, err
	}
	return &localServer{srv: srv, broker: a.broker, agent: a.config}, nil
}

// serverConfig maps the agent's configuration onto the server's; what the
// agent configuration does not set keeps the server's defaults.
func serverConfig(c *Config) *nomad.Config {
	sc := nomad.DefaultConfig()
	sc.Region = c.Region
	sc.Datacenter = c.Datacenter
	sc.NodeName = c.Name
	sc.DevMode = c.DevMode
	if !c.DevMode {
		sc.DataDir = filepath.Join(c.DataDir, "server")
	}
	s := &c.Server
	sc.BootstrapExpect = s.BootstrapExpect
	sc.NumSchedulers = s.NumSchedulers
	sc.EnabledSchedulers = append([]string(nil), s.EnabledSchedulers...)
	sc.MinHeartbeatTTL = s.MinHeartbeatTTL
	sc.MaxHeartbeatsPerSecond = s.MaxHeartbeatsPerSecond
	sc.HeartbeatGrace = s.HeartbeatGrace
	sc.FailoverHeartbeatTTL = s.FailoverHeartbeatTTL
	sc.EvalGCThreshold = s.EvalGCThreshold
	sc.BatchEvalGCThreshold = s.BatchEvalGCThreshold
	sc.JobGCInterval = s.JobGCInterval
	sc.JobGCThreshold = s.JobGCThreshold
	sc.NodeGCThreshold = s.NodeGCThreshold
	sc.DeploymentGCThreshold = s.DeploymentGCThreshold
	sc.DefaultSchedulerConfig = *s.DefaultSchedulerConfig.SchedulerConfiguration()
	return sc
}

// localServer adapts the in-process server to what the HTTP API needs.
type localServer struct {
	srv    *nomad.Server
	broker *stream.EventBroker
	agent  *Config
}

// RPC calls the server. Three reads the server does not register yet are
// answered here from the local server: Region.List (its one region),
// Status.Members (this server, the only member until servers gossip) and
// Operator.RaftGetConfiguration (read from its Raft).
func (l *localServer) RPC(method string, args, reply interface{}) error {
	err := l.srv.RPC(method, args, reply)
	if err == nil || !errors.Is(err, structs.ErrUnknownMethod) {
		return err
	}
	switch method {
	case "Region.List":
		if out, ok := reply.(*[]string); ok {
			*out = []string{l.agent.Region}
			return nil
		}
	case "Status.Members":
		if out, ok := reply.(*structs.ServerMembersResponse); ok {
			*out = l.members()
			return nil
		}
	case "Operator.RaftGetConfiguration":
		if out, ok := reply.(*structs.RaftConfigurationResponse); ok {
			return l.raftConfiguration(out)
		}
	}
	return err
}

func (l *localServer) members() structs.ServerMembersResponse {
	c := l.agent
	bootstrap := "0"
	if c.Server.BootstrapExpect == 1 {
		bootstrap = "1"
	}
	rpcHost := advertiseHost(c, c.Advertise.RPC, c.Addresses.RPC)
	return structs.ServerMembersResponse{
		ServerName:   c.Name,
		ServerRegion: c.Region,
		ServerDC:     c.Datacenter,
		Members: []*structs.ServerMember{{
			Name:   c.Name + "." + c.Region,
			Addr:   advertiseHost(c, c.Advertise.Serf, c.Addresses.Serf),
			Port:   uint16(c.Ports.Serf),
			Status: "alive",
			Tags: map[string]string{
				"role":      "nomad",
				"region":    c.Region,
				"dc":        c.Datacenter,
				"build":     version.String(),
				"port":      strconv.Itoa(c.Ports.RPC),
				"rpc_addr":  rpcHost,
				"id":        l.srv.ID(),
				"raft_vsn":  strconv.Itoa(c.Server.RaftProtocol),
				"expect":    strconv.Itoa(c.Server.BootstrapExpect),
				"bootstrap": bootstrap,
			},
		}},
	}
}

func (l *localServer) raftConfiguration(out *structs.RaftConfigurationResponse) error {
	f := l.srv.Raft().GetConfiguration()
	if err := f.Error(); err != nil {
		return fmt.Errorf("reading the Raft configuration: %w", err)
	}
	_, leaderID := l.srv.Raft().LeaderWithID()
	out.Servers = nil
	for _, s := range f.Configuration().Servers {
		node := ""
		if string(s.ID) == l.srv.ID() {
			node = l.agent.Name + "." + l.agent.Region
		}
		out.Servers = append(out.Servers, &structs.RaftServer{
			ID:           string(s.ID),
			Node:         node,
			Address:      string(s.Address),
			Leader:       s.ID == leaderID,
			Voter:        s.Suffrage == raft.Voter,
			RaftProtocol: strconv.Itoa(l.agent.Server.RaftProtocol),
		})
	}
	out.Index = f.Index()
	return nil
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

// errNoWorkerPool answers the worker endpoints: the server schedules
// through the eval broker, but runs no worker pool of its own yet.
var errNoWorkerPool = codedError(http.StatusNotImplemented, "this server does not run scheduler workers yet")

func (l *localServer) SchedulerWorkers() ([]api.AgentSchedulerWorkerInfo, error) {
	return nil, errNoWorkerPool
}

func (l *localServer) SchedulerWorkerConfig() (api.AgentSchedulerWorkerConfigRequest, error) {
	return api.AgentSchedulerWorkerConfigRequest{}, errNoWorkerPool
}

func (l *localServer) SetSchedulerWorkerConfig(api.AgentSchedulerWorkerConfigRequest) (api.AgentSchedulerWorkerConfigRequest, error) {
	return api.AgentSchedulerWorkerConfigRequest{}, errNoWorkerPool
}

// Stats reports who leads and Raft's own counters.
func (l *localServer) Stats() map[string]map[string]string {
	return map[string]map[string]string{
		"nomad": {
			"server":        "true",
			"leader":        strconv.FormatBool(l.srv.IsLeader()),
			"leader_addr":   l.srv.Leader(),
			"bootstrap":     strconv.FormatBool(l.agent.Server.BootstrapExpect == 1),
			"known_regions": "1",
			"server_id":     l.srv.ID(),
		},
		"raft": l.srv.Raft().Stats(),
	}
}

// Subscribe opens an event stream on the agent's broker.
func (l *localServer) Subscribe(req *stream.SubscribeRequest) (*stream.Subscription, error) {
	if l.broker == nil {
		return nil, codedError(http.StatusNotImplemented, "the event broker is disabled (server.enable_event_broker = false)")
	}
	return l.broker.Subscribe(req)
}

// Shutdown stops the server.
func (l *localServer) Shutdown() error { return l.srv.Shutdown() }
