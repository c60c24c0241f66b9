package nomad

import (
	"fmt"
	"strconv"

	"github.com/hashicorp/raft"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/version"
)

// What the Status and Operator endpoints report about the servers: this
// server as a gossip member and the Raft configuration.

// raftProtocol is the only Raft protocol version spoken.
const raftProtocol = 3

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

// raftPeers are the RPC addresses of the servers of the Raft
// configuration, voters and non-voters.
func (s *Server) raftPeers() ([]string, error) {
	f := s.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return nil, err
	}
	peers := make([]string, 0, len(f.Configuration().Servers))
	for _, p := range f.Configuration().Servers {
		peers = append(peers, s.peerAddr(p.ID, p.Address))
	}
	return peers, nil
}

// leaderRPCAddr is the RPC address of the leader, "" when none is known.
func (s *Server) leaderRPCAddr() string {
	addr, id := s.raft.LeaderWithID()
	if id == "" {
		return ""
	}
	return s.peerAddr(id, addr)
}

// removeRaftPeer removes the server with Raft ID id from the Raft
// configuration and returns the index of the change.
func (s *Server) removeRaftPeer(id string) (uint64, error) {
	f := s.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return 0, err
	}
	found := false
	for _, srv := range f.Configuration().Servers {
		found = found || string(srv.ID) == id
	}
	if !found {
		return 0, structs.KindErrorf(structs.ErrInvalid, "id %q was not found in the Raft configuration", id)
	}
	future := s.raft.RemoveServer(raft.ServerID(id), 0, 0)
	if err := future.Error(); err != nil {
		return 0, fmt.Errorf("removing raft peer %q: %w", id, err)
	}
	s.logger.Warn("removed raft peer", "id", id)
	return future.Index(), nil
}

// members are the servers this server knows as gossip members; only
// itself when it runs no gossip.
func (s *Server) members() []*structs.ServerMember {
	if m := s.net.membership; m != nil {
		return m.Members()
	}
	return []*structs.ServerMember{s.localMember()}
}
