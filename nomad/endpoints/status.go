package endpoints

import (
	"github.com/opennomad/nomad/structs"
)

// Status serves the Status.* RPCs: who leads, who the servers
// are and which of them this server knows as members. Any server answers
// from what its Raft knows.
type Status struct {
	srv Server
}

// statusRules: the cluster's status is public, as in Nomad, except its
// members, which need node read.
var statusRules = Rules{
	"Leader":  Public(),
	"Peers":   Public(),
	"Ping":    Public(),
	"Members": NodeRead(),
	// RaftStats is the leader asking the other servers for its health
	// report.
	"RaftStats": Internal(),
	// MemoryStats is the leader gathering the servers' live heaps for
	// its memory backpressure.
	"MemoryStats": Internal(),
}

// RaftStats returns this server's view of its own Raft log.
func (s *Status) RaftStats(args *structs.GenericRequest, reply *structs.RaftStats) error {
	*reply = s.srv.LocalRaftStats()
	return nil
}

// MemoryStats returns this server's live heap and memory figure.
func (s *Status) MemoryStats(args *structs.GenericRequest, reply *structs.ServerMemory) error {
	*reply = s.srv.LocalMemory()
	return nil
}

// Ping answers, so callers can check a server is reachable.
func (s *Status) Ping(args struct{}, reply *struct{}) error {
	return nil
}

// otherRegion sends a request for a region other than this server's to
// a server of that region.
func (s *Status) otherRegion(method string, args *structs.GenericRequest, reply interface{}) (bool, error) {
	if args.Region == "" || args.Region == s.srv.Settings().Region {
		return false, nil
	}
	return s.srv.Forward(method, args, args, reply)
}

// Leader returns the RPC address ("host:port") of the leader, "" when no
// leader is known.
func (s *Status) Leader(args *structs.GenericRequest, reply *string) error {
	if done, err := s.otherRegion("Status.Leader", args, reply); done {
		return err
	}
	*reply = s.srv.LeaderRPCAddr()
	return nil
}

// Peers returns the RPC addresses of the Raft voters and non-voters.
func (s *Status) Peers(args *structs.GenericRequest, reply *[]string) error {
	if done, err := s.otherRegion("Status.Peers", args, reply); done {
		return err
	}
	peers, err := s.srv.RaftPeers()
	if err != nil {
		return err
	}
	*reply = peers
	return nil
}

// Members returns the servers this server knows as gossip members, with
// their status; a server that runs no gossip knows only itself.
func (s *Status) Members(args *structs.GenericRequest, reply *structs.ServerMembersResponse) error {
	if done, err := s.otherRegion("Status.Members", args, reply); done {
		return err
	}
	c := s.srv.Settings()
	*reply = structs.ServerMembersResponse{
		ServerName:   c.NodeName,
		ServerRegion: c.Region,
		ServerDC:     c.Datacenter,
		Members:      s.srv.Members(),
	}
	return nil
}

// Region serves Region.List.
type Region struct {
	srv Server
}

// regionRules: the regions are public.
var regionRules = Rules{
	"List": Public(),
}

// List returns the regions this server knows from gossip, sorted: its own
// and every region with an alive server in the pool.
func (r *Region) List(args *structs.GenericRequest, reply *[]string) error {
	*reply = r.srv.Regions()
	return nil
}
