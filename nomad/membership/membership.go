package membership

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"github.com/hashicorp/serf/serf"

	"github.com/opennomad/nomad/structs"
)

// Raft is the part of *raft.Raft membership uses. Calls come from the
// bootstrap goroutine and the leader's reconcile goroutine.
type Raft interface {
	State() raft.RaftState
	GetConfiguration() raft.ConfigurationFuture
	BootstrapCluster(configuration raft.Configuration) raft.Future
	AddVoter(id raft.ServerID, address raft.ServerAddress, prevIndex uint64, timeout time.Duration) raft.IndexFuture
	RemoveServer(id raft.ServerID, prevIndex uint64, timeout time.Duration) raft.IndexFuture
}

// Membership is one server's view of its region's servers. Create it with
// New and stop it with Shutdown (after Leave, for a graceful exit). Its
// methods are safe for concurrent use.
//
// It is also a leadership observer: the server calls LeadershipGained
// when it becomes leader (with a context that ends when leadership does)
// and LeadershipLost after; meanwhile it reconciles Raft's voters.
type Membership struct {
	cfg    Config
	raft   Raft
	serf   *serf.Serf
	logger hclog.Logger
	// pruneWait bounds how long ForceLeave waits for serf to prune.
	pruneWait time.Duration

	events  chan serf.Event
	servers *serverSet
	// reconcileKick wakes the leader's reconciler after an event;
	// bootstrapKick the bootstrapper.
	reconcileKick chan struct{}
	bootstrapKick chan struct{}

	leaderMu   sync.Mutex
	leaderStop context.CancelFunc
	leaderDone chan struct{}
	// missingSince is when the leader first saw a Raft voter that gossip
	// does not know; owned by the reconcile goroutine.
	missingSince map[string]time.Time

	bootstrapped chan struct{}

	shutdownCtx    context.Context
	shutdownCancel context.CancelFunc
	shutdownOnce   sync.Once
	wg             sync.WaitGroup
}

// New starts gossip on the configured port and the goroutines that
// follow it. With BootstrapExpect > 0 it bootstraps Raft once enough
// servers joined (see Config).
func New(cfg Config, r Raft) (*Membership, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if r == nil {
		return nil, errors.New("membership: raft is required")
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &Membership{
		cfg:            cfg,
		raft:           r,
		logger:         cfg.Logger.Named("membership"),
		events:         make(chan serf.Event, 256),
		servers:        newServerSet(cfg.Region),
		reconcileKick:  make(chan struct{}, 1),
		bootstrapKick:  make(chan struct{}, 1),
		missingSince:   make(map[string]time.Time),
		bootstrapped:   make(chan struct{}),
		shutdownCtx:    ctx,
		shutdownCancel: cancel,
	}
	sc, err := cfg.serfConfig(m.events)
	if err != nil {
		cancel()
		return nil, err
	}
	s, err := serf.Create(sc)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("starting gossip on %s:%d: %w", cfg.BindAddr, cfg.BindPort, err)
	}
	m.serf = s
	m.pruneWait = sc.BroadcastTimeout + sc.LeavePropagateDelay + time.Second
	// The local member joins before any event arrives.
	if info, ok := m.servers.update(s.LocalMember(), serf.EventMemberJoin, time.Now()); ok && cfg.OnServer != nil {
		cfg.OnServer(info)
	}

	m.wg.Add(1)
	go m.eventLoop()
	if cfg.BootstrapExpect > 0 {
		m.wg.Add(1)
		go m.bootstrapLoop()
	} else {
		close(m.bootstrapped)
	}
	m.logger.Info("gossip started", "member", cfg.memberName(), "bind", fmt.Sprintf("%s:%d", cfg.BindAddr, cfg.BindPort),
		"bootstrap_expect", cfg.BootstrapExpect, "encrypted", s.EncryptionEnabled())
	return m, nil
}

// eventLoop applies gossip events to the server set and wakes the
// bootstrapper and reconciler.
func (m *Membership) eventLoop() {
	defer m.wg.Done()
	for {
		select {
		case <-m.shutdownCtx.Done():
			return
		case e := <-m.events:
			me, ok := e.(serf.MemberEvent)
			if !ok {
				continue
			}
			changed := false
			for _, member := range me.Members {
				info, ok := m.servers.update(member, me.Type, time.Now())
				if !ok {
					continue
				}
				changed = true
				m.logger.Info("server "+eventVerb(me.Type), "member", info.Name, "rpc_addr", info.RPCAddr, "id", info.ID)
				if m.cfg.OnServer != nil {
					m.cfg.OnServer(info)
				}
			}
			if changed {
				kick(m.bootstrapKick)
				kick(m.reconcileKick)
			}
		}
	}
}

func eventVerb(t serf.EventType) string {
	switch t {
	case serf.EventMemberJoin:
		return "joined"
	case serf.EventMemberLeave:
		return "left"
	case serf.EventMemberFailed:
		return "failed"
	case serf.EventMemberReap:
		return "reaped"
	}
	return "updated"
}

// kick wakes a goroutine waiting on ch without blocking.
func kick(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// Join contacts gossip members at addrs ("host:port" of serf ports) and
// returns how many answered. One answer is enough to learn the rest.
func (m *Membership) Join(addrs []string) (int, error) {
	n, err := m.serf.Join(addrs, true)
	if n > 0 {
		m.logger.Info("joined", "contacted", n, "addresses", addrs)
	}
	if err != nil {
		return n, fmt.Errorf("joining %v: %w", addrs, err)
	}
	return n, nil
}

// ForceLeave marks a failed member as left, so it is dropped from Raft
// at the leader's next reconcile instead of after the grace period. name
// is the member name ("<node>.<region>"); the region may be omitted.
// With prune the member is also forgotten at once, instead of being
// listed as left until serf reaps it.
func (m *Membership) ForceLeave(name string, prune bool) error {
	remove := m.serf.RemoveFailedNode
	if prune {
		remove = m.serf.RemoveFailedNodePrune
	}
	member := m.qualify(name)
	if err := remove(member); err != nil {
		return fmt.Errorf("force-leave %q: %w", name, err)
	}
	if prune {
		m.awaitPruned(member)
	}
	return nil
}

// awaitPruned returns once member is gone from the member list, or after
// the longest time serf takes to prune one. Serf prunes in the
// background, after a broadcast and propagation delay when the member
// was still alive; Nomad's force-leave answered only once the member was
// gone, and callers list the members right after it (Nomad's own api
// tests do), so this waits the same way.
func (m *Membership) awaitPruned(member string) {
	deadline := time.NewTimer(m.pruneWait)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if !m.isMember(member) {
			return
		}
		select {
		case <-tick.C:
		case <-deadline.C:
			return
		case <-m.shutdownCtx.Done():
			return
		}
	}
}

// isMember reports whether name is in the gossip member list, in any status.
func (m *Membership) isMember(name string) bool {
	for _, member := range m.serf.Members() {
		if member.Name == name {
			return true
		}
	}
	return false
}

// qualify adds this region to a bare node name that is not a member.
func (m *Membership) qualify(name string) string {
	if m.isMember(name) {
		return name
	}
	return name + "." + m.cfg.Region
}

// Members returns every gossip member, for Status.Members: this server
// first, then the others by name, so that the order does not change from
// one call to the next (gossip keeps them in no order).
func (m *Membership) Members() []*structs.ServerMember {
	members := m.serf.Members()
	self := m.serf.LocalMember().Name
	slices.SortFunc(members, func(a, b serf.Member) int {
		switch {
		case a.Name == b.Name:
			return 0
		case a.Name == self:
			return -1
		case b.Name == self:
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	out := make([]*structs.ServerMember, 0, len(members))
	for _, member := range members {
		out = append(out, memberStruct(member))
	}
	return out
}

// LocalMember returns this server's own member.
func (m *Membership) LocalMember() *structs.ServerMember {
	return memberStruct(m.serf.LocalMember())
}

// Servers returns the alive servers of this region, sorted by name: the
// list clients fail over between.
func (m *Membership) Servers() []ServerInfo { return m.servers.alive() }

// KnownServers returns every server of this region gossip knows,
// whatever its status.
func (m *Membership) KnownServers() []ServerInfo { return m.servers.all() }

// Bootstrapped is closed once this server has bootstrapped Raft or found
// it needs not (Raft state exists, or another server already did); it is
// closed from the start when BootstrapExpect is 0.
func (m *Membership) Bootstrapped() <-chan struct{} { return m.bootstrapped }

// Leave announces that this server leaves the region for good: the
// leader removes it from Raft. Call it before Shutdown for a graceful
// exit; a server that only shuts down is seen as failed.
func (m *Membership) Leave() error {
	if err := m.serf.Leave(); err != nil {
		return fmt.Errorf("leaving gossip: %w", err)
	}
	return nil
}

// Shutdown stops gossip and every goroutine of the membership. It is
// safe to call more than once.
func (m *Membership) Shutdown() error {
	var err error
	m.shutdownOnce.Do(func() {
		m.shutdownCancel()
		m.LeadershipLost()
		err = m.serf.Shutdown()
		m.wg.Wait()
	})
	return err
}
