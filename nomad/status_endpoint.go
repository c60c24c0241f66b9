package nomad

import (
	"github.com/opennomad/nomad/structs"
)

// StatusEndpoint serves the Status.* RPCs: who leads and who the servers
// are, from Raft.
type StatusEndpoint struct {
	srv *Server
}

// Ping answers, so callers can check a server is reachable.
func (s *StatusEndpoint) Ping(args struct{}, reply *struct{}) error {
	return nil
}

// Leader returns the address of the leader, "" when none is known. Any
// server answers from what its Raft knows.
func (s *StatusEndpoint) Leader(args *structs.GenericRequest, reply *string) error {
	if args.Region != "" && args.Region != s.srv.config.Region {
		_, err := s.srv.forward("Status.Leader", args, args, reply)
		return err
	}
	*reply = s.srv.Leader()
	return nil
}

// Peers returns the addresses of the Raft voters and non-voters.
func (s *StatusEndpoint) Peers(args *structs.GenericRequest, reply *[]string) error {
	if args.Region != "" && args.Region != s.srv.config.Region {
		_, err := s.srv.forward("Status.Peers", args, args, reply)
		return err
	}
	f := s.srv.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return err
	}
	peers := make([]string, 0, len(f.Configuration().Servers))
	for _, p := range f.Configuration().Servers {
		peers = append(peers, string(p.Address))
	}
	*reply = peers
	return nil
}
