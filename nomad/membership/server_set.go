package membership

import (
	"sort"
	"sync"
	"time"

	"github.com/hashicorp/serf/serf"
)

// serverSet is the servers of this region as gossip last described them,
// by member name. The event loop writes it; readers take copies. Failed
// servers remember since when, for the dead-server cleanup; servers that
// gossip forgot (reaped) are dropped.
type serverSet struct {
	region string

	mu      sync.Mutex
	servers map[string]*trackedServer
	// reaped are servers gossip forgot (reaped, or pruned by a
	// force-leave) whose Raft peer the leader has yet to remove.
	reaped map[string]ServerInfo
}

type trackedServer struct {
	info ServerInfo
	// failedSince is when the server was first seen failed; zero unless
	// failed.
	failedSince time.Time
}

func newServerSet(region string) *serverSet {
	return &serverSet{region: region, servers: make(map[string]*trackedServer), reaped: make(map[string]ServerInfo)}
}

// update applies one gossip event to a member; ok is false for members
// that are not servers of this region.
func (s *serverSet) update(m serf.Member, event serf.EventType, now time.Time) (ServerInfo, bool) {
	info, ok := parseServer(m)
	if !ok || info.Region != s.region {
		return ServerInfo{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if event == serf.EventMemberReap {
		delete(s.servers, m.Name)
		// A reaped member counts as gone for reconciliation.
		info.Status = serf.StatusLeft
		s.reaped[m.Name] = info
		return info, true
	}
	delete(s.reaped, m.Name)
	t := s.servers[m.Name]
	if t == nil {
		t = &trackedServer{}
		s.servers[m.Name] = t
	}
	switch {
	case info.Status != serf.StatusFailed:
		t.failedSince = time.Time{}
	case t.failedSince.IsZero():
		t.failedSince = now
	}
	t.info = info
	return info, true
}

// all returns every tracked server, sorted by name.
func (s *serverSet) all() []ServerInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]ServerInfo, 0, len(s.servers))
	for _, t := range s.servers {
		out = append(out, t.info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// alive returns the alive servers, sorted by name.
func (s *serverSet) alive() []ServerInfo {
	var out []ServerInfo
	for _, info := range s.all() {
		if info.Status == serf.StatusAlive {
			out = append(out, info)
		}
	}
	return out
}

// byID returns the tracked server with Raft ID id and since when it has
// been failed (zero unless failed). A server renamed over the same data
// dir leaves two members with one ID: the alive one wins.
func (s *serverSet) byID(id string) (ServerInfo, time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var found *trackedServer
	for _, t := range s.servers {
		if t.info.ID != id {
			continue
		}
		if found == nil || t.info.Status == serf.StatusAlive {
			found = t
		}
	}
	if found == nil {
		return ServerInfo{}, time.Time{}, false
	}
	return found.info, found.failedSince, true
}

// pendingReaped returns the reaped servers whose Raft peer is still to
// be removed.
func (s *serverSet) pendingReaped() []ServerInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]ServerInfo, 0, len(s.reaped))
	for _, info := range s.reaped {
		out = append(out, info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// forgetReaped drops a reaped server once its peer is gone, unless it
// came back meanwhile (then it is tracked again and not pending).
func (s *serverSet) forgetReaped(info ServerInfo) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if cur, ok := s.reaped[info.Name]; ok && cur.ID == info.ID {
		delete(s.reaped, info.Name)
	}
}
