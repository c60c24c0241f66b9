package nomad

import (
	"context"

	"github.com/opennomad/nomad/nomad/aclreplication"
	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// authoritativeRegion is where shared ACL objects are written: the
// configured authoritative region, else this server's own.
func (s *Server) authoritativeRegion() string {
	if r := s.config.AuthoritativeRegion; r != "" {
		return r
	}
	return s.config.Region
}

// replicatesACLs reports whether this server's region copies its ACL
// objects from another region when it leads.
func (s *Server) replicatesACLs() bool {
	return s.config.ACLEnabled && s.authoritativeRegion() != s.config.Region
}

// replicateACLs copies the authoritative region's shared ACL objects into
// this region while this server leads (ctx is its leadership).
func (s *Server) replicateACLs(ctx context.Context) {
	if s.config.ReplicationToken == "" {
		s.logger.Warn("ACL replication has no replication_token; the authoritative region will refuse it",
			"authoritative_region", s.authoritativeRegion())
	}
	aclreplication.Run(ctx, aclreplication.Config{
		Region: s.authoritativeRegion(),
		Token:  s.config.ReplicationToken,
		RPC:    s.RPC,
		State:  func() *state.StateStore { return s.State() },
		Apply: func(t structs.MessageType, msg interface{}) (uint64, error) {
			_, index, err := s.raftApply(t, msg)
			return index, err
		},
		Logger: s.logger,
	})
}
