package nomad

import (
	"fmt"

	"github.com/hashicorp/raft"

	"github.com/opennomad/nomad/structs"
)

// transferLeadership hands this leader's leadership to the voter with
// Raft ID id, or at address (its RPC or Raft address), or, with both
// empty, to the follower Raft finds most up to date. It returns once
// Raft completed (or gave up) the transfer.
func (s *Server) transferLeadership(id, address string) error {
	if s.raft.State() != raft.Leader {
		return fmt.Errorf("leadership transfer: %w", structs.ErrNoLeader)
	}
	if id == "" && address == "" {
		if err := s.raft.LeadershipTransfer().Error(); err != nil {
			return fmt.Errorf("leadership transfer: %w", err)
		}
		s.logger.Info("leadership transferred")
		return nil
	}
	f := s.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return err
	}
	var target *raft.Server
	for _, srv := range f.Configuration().Servers {
		if (id != "" && string(srv.ID) == id) ||
			(address != "" && (string(srv.Address) == address || s.peerAddr(srv.ID, srv.Address) == address)) {
			target = &srv
			break
		}
	}
	switch {
	case target == nil && id != "":
		return structs.KindErrorf(structs.ErrInvalid, "id %q was not found in the Raft configuration", id)
	case target == nil:
		return structs.KindErrorf(structs.ErrInvalid, "address %q was not found in the Raft configuration", address)
	case string(target.ID) == s.id:
		return structs.KindErrorf(structs.ErrInvalid, "cannot transfer leadership to itself")
	case target.Suffrage != raft.Voter:
		return structs.KindErrorf(structs.ErrInvalid, "server %q is not a voter and cannot lead", target.ID)
	}
	if err := s.raft.LeadershipTransferToServer(target.ID, target.Address).Error(); err != nil {
		return fmt.Errorf("leadership transfer to %q: %w", target.ID, err)
	}
	s.logger.Info("leadership transferred", "to", target.ID)
	return nil
}
