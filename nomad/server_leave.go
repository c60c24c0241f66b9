package nomad

import (
	"fmt"

	"github.com/hashicorp/raft"
)

// Leave announces that this server leaves the region for good, before a
// graceful shutdown (the agent's leave_on_interrupt / leave_on_terminate).
// A leader first hands leadership to another voter, so the others do not
// wait out an election timeout; then gossip tells the region, whose leader
// removes this server from the Raft configuration (serf's Leave returns
// once the announcement has had time to spread).
func (s *Server) Leave() error {
	if s.net.membership == nil {
		return nil
	}
	peers := s.raftVoters()
	if s.IsLeader() && peers > 1 {
		if err := s.raft.LeadershipTransfer().Error(); err != nil {
			s.logger.Warn("leaving: could not hand over leadership; the others will elect a new leader", "error", err)
		}
	}
	if err := s.net.membership.Leave(); err != nil {
		return fmt.Errorf("server %s: %w", s.id, err)
	}
	return nil
}

// raftVoters counts the voters of the latest Raft configuration (0 when it
// cannot be read).
func (s *Server) raftVoters() int {
	f := s.raft.GetConfiguration()
	if f.Error() != nil {
		return 0
	}
	n := 0
	for _, srv := range f.Configuration().Servers {
		if srv.Suffrage == raft.Voter {
			n++
		}
	}
	return n
}
