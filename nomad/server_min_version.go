package nomad

import (
	"sync"
	"time"

	"github.com/hashicorp/raft"

	"github.com/opennomad/nomad/nomad/clock"
	"github.com/opennomad/nomad/nomad/membership"
	"github.com/opennomad/nomad/version"
)

// serversMeetMinimumVersion reports whether every server of the cluster
// runs a build of version min or later: every server gossip knows
// (membership.MeetMinimumVersion), and every member of the Raft
// configuration known to gossip, so a peer whose gossip has not arrived
// yet counts as old. A server without gossip is alone in its Raft
// configuration or is taken to be among unknown servers.
func (s *Server) serversMeetMinimumVersion(min string) bool {
	f := s.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return false
	}
	var servers []membership.ServerInfo
	if m := s.net.membership; m != nil {
		servers = m.KnownServers()
	} else {
		servers = []membership.ServerInfo{{ID: s.id, Build: version.String()}}
	}
	known := make(map[raft.ServerID]bool, len(servers))
	for _, srv := range servers {
		known[raft.ServerID(srv.ID)] = true
	}
	for _, p := range f.Configuration().Servers {
		if !known[p.ID] {
			return false
		}
	}
	return membership.MeetMinimumVersion(servers, min)
}

// versionGateTTL is how long a versionGate trusts its last answer.
const versionGateTTL = time.Second

// versionGate caches the answer of a minimum-version check for
// versionGateTTL: the plan applier asks before every result, and each
// check reads the Raft configuration and the gossip members. Safe for
// concurrent use.
type versionGate struct {
	check func() bool
	clock clock.Clock

	mu sync.Mutex
	at time.Time
	ok bool
}

func newVersionGate(c clock.Clock, check func() bool) *versionGate {
	return &versionGate{check: check, clock: c}
}

// Open reports the last answer, checking again when it is older than
// versionGateTTL.
func (g *versionGate) Open() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.clock.Now()
	if g.at.IsZero() || now.Sub(g.at) >= versionGateTTL {
		g.ok, g.at = g.check(), now
	}
	return g.ok
}
