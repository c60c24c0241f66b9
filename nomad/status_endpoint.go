package nomad

import (
	"strconv"

	"github.com/hashicorp/raft"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/version"
)

// StatusEndpoint serves the Status.* RPCs: who leads, who the servers
// are and which of them this server knows as members. Any server answers
// from what its Raft knows.
type StatusEndpoint struct {
	srv *Server
}

// raftProtocol is the only Raft protocol version spoken.
const raftProtocol = 3

// Ping answers, so callers can check a server is reachable.
func (s *StatusEndpoint) Ping(args struct{}, reply *struct{}) error {
	return nil
}

// otherRegion answers requests for a region other than this server's,
// which have nowhere to go until federation exists.
func (s *StatusEndpoint) otherRegion(method string, args *structs.GenericRequest, reply interface{}) (bool, error) {
	if args.Region == "" || args.Region == s.srv.config.Region {
		return false, nil
	}
	return s.srv.forward(method, args, args, reply)
}

// Leader returns the RPC address ("host:port") of the leader, "" when no
// leader is known.
func (s *StatusEndpoint) Leader(args *structs.GenericRequest, reply *string) error {
	if done, err := s.otherRegion("Status.Leader", args, reply); done {
		return err
	}
	addr, id := s.srv.raft.LeaderWithID()
	if id == "" {
		*reply = ""
		return nil
	}
	*reply = s.srv.peerAddr(id, addr)
	return nil
}

// Peers returns the RPC addresses of the Raft voters and non-voters.
func (s *StatusEndpoint) Peers(args *structs.GenericRequest, reply *[]string) error {
	if done, err := s.otherRegion("Status.Peers", args, reply); done {
		return err
	}
	f := s.srv.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return err
	}
	peers := make([]string, 0, len(f.Configuration().Servers))
	for _, p := range f.Configuration().Servers {
		peers = append(peers, s.srv.peerAddr(p.ID, p.Address))
	}
	*reply = peers
	return nil
}

// Members returns the servers this server knows as gossip members, with
// their status; a server that runs no gossip knows only itself.
func (s *StatusEndpoint) Members(args *structs.GenericRequest, reply *structs.ServerMembersResponse) error {
	if done, err := s.otherRegion("Status.Members", args, reply); done {
		return err
	}
	c := s.srv.config
	members := []*structs.ServerMember{s.srv.localMember()}
	if m := s.srv.net.membership; m != nil {
		members = m.Members()
	}
	*reply = structs.ServerMembersResponse{
		ServerName:   c.NodeName,
		ServerRegion: c.Region,
		ServerDC:     c.Datacenter,
		Members:      members,
	}
	return nil
}

// localMember describes this server as a gossip member, with Nomad's tags.
func (s *Server) localMember() *structs.ServerMember {
	c := s.config
	rpcHost, rpcPort := splitAddr(s.rpcAddr())
	serfHost, serfPort := splitAddr(c.SerfAdvertise)
	if c.SerfAdvertise == "" {
		serfHost = rpcHost
	}
	bootstrap := "0"
	if c.BootstrapExpect == 1 {
		bootstrap = "1"
	}
	return &structs.ServerMember{
		Name:   s.memberName(),
		Addr:   serfHost,
		Port:   serfPort,
		Status: "alive",
		Tags: map[string]string{
			"role":      "nomad",
			"region":    c.Region,
			"dc":        c.Datacenter,
			"build":     version.String(),
			"port":      strconv.Itoa(int(rpcPort)),
			"rpc_addr":  rpcHost,
			"id":        s.id,
			"raft_vsn":  strconv.Itoa(raftProtocol),
			"expect":    strconv.Itoa(c.BootstrapExpect),
			"bootstrap": bootstrap,
		},
	}
}

// RegionEndpoint serves Region.List.
type RegionEndpoint struct {
	srv *Server
}

// List returns the regions this server knows: its own, until federation
// exists.
func (r *RegionEndpoint) List(args *structs.GenericRequest, reply *[]string) error {
	*reply = []string{r.srv.config.Region}
	return nil
}

// raftConfiguration describes the Raft configuration for operators: every
// server with its node name and RPC address, and which one leads.
func (s *Server) raftConfiguration(reply *structs.RaftConfigurationResponse) error {
	f := s.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return err
	}
	_, leaderID := s.raft.LeaderWithID()
	reply.Servers = nil
	for _, srv := range f.Configuration().Servers {
		p, _ := s.peers.get(srv.ID)
		reply.Servers = append(reply.Servers, &structs.RaftServer{
			ID:           string(srv.ID),
			Node:         p.name,
			Address:      s.peerAddr(srv.ID, srv.Address),
			Leader:       srv.ID == leaderID,
			Voter:        srv.Suffrage == raft.Voter,
			RaftProtocol: strconv.Itoa(raftProtocol),
		})
	}
	reply.Index = f.Index()
	return nil
}
