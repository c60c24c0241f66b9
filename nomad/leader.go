package nomad

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/go-metrics"

	"github.com/opennomad/nomad/nomad/clock"
	"github.com/opennomad/nomad/structs"
)

// barrierTimeout bounds the wait for the FSM to catch up with the log
// before a new leader reads state to rebuild its components.
const barrierTimeout = 2 * time.Minute

// establishRetryInterval is how long a server that won an election but
// failed to set itself up as leader waits before trying again.
const establishRetryInterval = time.Second

// leadership is the state of this server's leader duties.
type leadership struct {
	mu sync.Mutex
	// established is set while the duties run: the components are enabled
	// and the leader's loops started. ready is closed while it is set, and
	// replaced by an open channel when it is cleared.
	established bool
	ready       chan struct{}
	// ctx ends when leadership is lost; the leader's loops watch it.
	ctx    context.Context
	cancel context.CancelFunc
	// loops tracks the leader's goroutines so revoke can wait for them.
	loops     sync.WaitGroup
	observers []LeadershipObserver
	// brokerMu serialises enabling and disabling the broker between
	// leadership changes and scheduler configuration writes.
	brokerMu sync.Mutex
}

// AddLeadershipObserver registers a component to be told when this server
// gains and loses leadership. One registered while the server already
// leads is told at once.
func (s *Server) AddLeadershipObserver(o LeadershipObserver) {
	s.leader.mu.Lock()
	defer s.leader.mu.Unlock()
	s.leader.observers = append(s.leader.observers, o)
	if s.leader.established {
		o.LeadershipGained(s.leader.ctx)
	}
}

// monitorLeadership follows Raft's leadership notifications: it runs the
// leader loop while Raft says this server leads, and stops it when Raft
// says otherwise or the server shuts down.
//
// While the leader loop winds down it keeps reading the notifications:
// Raft blocks on sending one, and a duty of the old term may be waiting
// on a Raft apply that Raft can only answer once that send went through.
// The last notification read meanwhile is acted upon after.
func (s *Server) monitorLeadership() {
	defer s.wg.Done()
	var (
		stop context.CancelFunc
		done chan struct{}
	)
	// stopLeading stops the leader loop and returns the last
	// notification that came meanwhile, if any.
	stopLeading := func() (latest *bool) {
		if stop == nil {
			return nil
		}
		stop()
		for waiting := true; waiting; {
			select {
			case <-done:
				waiting = false
			case v := <-s.raftNotifyCh:
				latest = &v
			}
		}
		stop = nil
		return latest
	}
	for {
		var isLeader bool
		select {
		case isLeader = <-s.raftNotifyCh:
		case <-s.shutdownCtx.Done():
			stopLeading()
			return
		}
		for {
			switch {
			case isLeader && stop == nil:
				stop, done = s.startLeaderLoop()
				s.logger.Info("cluster leadership acquired")
			case !isLeader && stop != nil:
				latest := stopLeading()
				s.logger.Info("cluster leadership lost")
				if latest != nil && *latest && s.shutdownCtx.Err() == nil {
					isLeader = true
					continue
				}
			}
			break
		}
	}
}

// startLeaderLoop runs leaderLoop on its own goroutine; cancelling stops
// it and done closes when it returned.
func (s *Server) startLeaderLoop() (cancel context.CancelFunc, done chan struct{}) {
	ctx, cancel := context.WithCancel(s.shutdownCtx)
	done = make(chan struct{})
	go func() {
		defer close(done)
		s.leaderLoop(ctx)
	}()
	return cancel, done
}

// leaderLoop sets up the leader's duties and keeps them until ctx ends,
// then tears them down. Setup waits for the FSM to apply everything
// committed before this term (a barrier), so the components are rebuilt
// from complete state; a failed setup is undone and retried.
func (s *Server) leaderLoop(ctx context.Context) {
	for {
		err := s.raft.Barrier(barrierTimeout).Error()
		if err == nil {
			if err = s.establishLeadership(ctx); err == nil {
				<-ctx.Done()
				s.revokeLeadership()
				return
			}
			s.revokeLeadership()
		}
		s.logger.Error("failed to establish leadership; will retry", "error", err)
		retry := make(chan struct{})
		t := s.clock.AfterFunc(establishRetryInterval, func() { close(retry) })
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-retry:
		}
	}
}

// establishLeadership turns this server into a working leader: it enables
// the plan queue, writes the cluster's identity and default scheduler
// configuration if this is a new cluster, enables the broker and blocked
// evals (unless the configuration pauses the broker) and refills them from
// state, arms a heartbeat timer for every live node, starts the reapers
// and periodic garbage collection, enables the duties (drainer,
// deployment watcher, periodic dispatcher; after the broker, so the evals
// they write are enqueued), and finally tells the observers (the plan
// applier starts; workers pause).
func (s *Server) establishLeadership(ctx context.Context) error {
	defer metrics.MeasureSince([]string{"nomad", "leader", "establish_leadership"}, time.Now())
	s.leader.mu.Lock()
	s.leader.ctx, s.leader.cancel = context.WithCancel(ctx)
	leaderCtx := s.leader.ctx
	s.leader.mu.Unlock()

	if s.planQueue != nil {
		s.planQueue.SetEnabled(true)
	}
	if err := s.ensureClusterMetadata(); err != nil {
		return err
	}
	if err := s.ensureDefaultNamespace(); err != nil {
		return err
	}
	if err := s.ensureBuiltInNodePools(); err != nil {
		return err
	}
	if err := s.ensureAutopilotConfig(); err != nil {
		return err
	}
	schedConfig, err := s.ensureSchedulerConfig()
	if err != nil {
		return err
	}
	if err := s.setBrokerEnabled(schedConfig); err != nil {
		return err
	}
	if err := s.heartbeats.initialize(); err != nil {
		return err
	}
	if err := s.startVarLocks(); err != nil {
		return err
	}
	s.startLeaderLoops(leaderCtx)
	s.duties.setEnabled(true)

	s.leader.mu.Lock()
	defer s.leader.mu.Unlock()
	s.leader.established = true
	close(s.leader.ready)
	for _, o := range s.leader.observers {
		o.LeadershipGained(leaderCtx)
	}
	return nil
}

// revokeLeadership undoes establishLeadership, whatever part of it ran:
// the leader's loops and duties stop, observers are told, and the broker,
// blocked evals and plan queue are disabled and flushed. Their contents live on
// in the state store, from which the next leader rebuilds them.
func (s *Server) revokeLeadership() {
	defer metrics.MeasureSince([]string{"nomad", "leader", "revoke_leadership"}, time.Now())
	s.leader.mu.Lock()
	wasEstablished := s.leader.established
	s.leader.established = false
	if wasEstablished {
		s.leader.ready = make(chan struct{})
	}
	if s.leader.cancel != nil {
		s.leader.cancel()
	}
	observers := s.leader.observers
	s.leader.mu.Unlock()

	s.leader.loops.Wait()
	// Before the broker goes: a duty's last pass may still write evals.
	s.duties.setEnabled(false)
	if wasEstablished {
		for _, o := range observers {
			o.LeadershipLost()
		}
	}
	s.leader.brokerMu.Lock()
	if s.evalBroker != nil {
		s.evalBroker.SetEnabled(false)
	}
	if s.blockedEvals != nil {
		s.blockedEvals.SetEnabled(false)
	}
	s.leader.brokerMu.Unlock()
	if s.planQueue != nil {
		s.planQueue.SetEnabled(false)
	}
	s.heartbeats.clearAll()
	s.stopVarLocks()
}

// isEstablishedLeader reports whether the leader's duties are running.
func (s *Server) isEstablishedLeader() bool {
	s.leader.mu.Lock()
	defer s.leader.mu.Unlock()
	return s.leader.established
}

// leaderReadyWait bounds how long a request that reached the Raft leader
// waits for its duties to be established.
const leaderReadyWait = 10 * time.Second

// waitLeaderReady waits until this server, which Raft elected, has
// established its leadership: until then its state store may lack entries
// committed in earlier terms (the barrier of establishLeadership waits
// for them), and its broker and plan queue are off. It returns false when
// that did not happen within leaderReadyWait or the server stops.
func (s *Server) waitLeaderReady() bool {
	s.leader.mu.Lock()
	ready := s.leader.ready
	s.leader.mu.Unlock()
	select {
	case <-ready:
		return true
	default:
	}
	ctx, cancel := clock.WithTimeout(s.shutdownCtx, s.clock, leaderReadyWait)
	defer cancel()
	select {
	case <-ready:
		return true
	case <-ctx.Done():
		return false
	}
}

// goLeaderLoop runs fn on its own goroutine until the leader context ends;
// revokeLeadership waits for it.
func (s *Server) goLeaderLoop(ctx context.Context, fn func(ctx context.Context)) {
	s.leader.loops.Add(1)
	go func() {
		defer s.leader.loops.Done()
		fn(ctx)
	}()
}

// ensureSchedulerConfig returns the stored scheduler configuration,
// writing the configured default first on a cluster that has none. The
// write is a check-and-set on "none written yet", so two leaders racing
// (or a restart) cannot overwrite an operator's configuration.
func (s *Server) ensureSchedulerConfig() (*structs.SchedulerConfiguration, error) {
	_, cfg, err := s.State().SchedulerConfig(nil)
	if err != nil {
		return nil, err
	}
	if cfg != nil {
		return cfg, nil
	}
	def := s.config.DefaultSchedulerConfig
	def.CreateIndex, def.ModifyIndex = 0, 0
	req := &structs.SchedulerSetConfigRequest{Config: def, CAS: true}
	if _, _, err := s.raftApply(structs.SchedulerConfigRequestType, req); err != nil {
		return nil, fmt.Errorf("writing default scheduler configuration: %w", err)
	}
	_, cfg, err = s.State().SchedulerConfig(nil)
	if err != nil {
		return nil, err
	}
	if cfg == nil {
		return nil, fmt.Errorf("scheduler configuration missing after writing the default")
	}
	return cfg, nil
}

// ensureClusterMetadata gives a new cluster its identity, once.
func (s *Server) ensureClusterMetadata() error {
	meta, err := s.State().ClusterMetadata(nil)
	if err != nil || meta != nil {
		return err
	}
	req := &structs.ClusterMetadataRequest{Metadata: structs.ClusterMetadata{
		ClusterID: structs.GenerateUUID(), CreateTime: s.now().UnixNano(),
	}}
	if _, _, err := s.raftApply(structs.ClusterMetadataRequestType, req); err != nil {
		return fmt.Errorf("writing cluster metadata: %w", err)
	}
	return nil
}

// ensureDefaultNamespace writes the default namespace, once: a new
// cluster's leader writes it before it serves anything, and it can never
// be deleted.
func (s *Server) ensureDefaultNamespace() error {
	ns, err := s.State().NamespaceByName(nil, structs.DefaultNamespace)
	if err != nil || ns != nil {
		return err
	}
	req := &structs.NamespaceUpsertRequest{Namespaces: []*structs.Namespace{structs.NewDefaultNamespace()}}
	if _, _, err := s.raftApply(structs.NamespaceUpsertRequestType, req); err != nil {
		return fmt.Errorf("writing the default namespace: %w", err)
	}
	return nil
}

// ensureBuiltInNodePools writes the built-in node pools ("all" and
// "default") that are missing: a new cluster's leader writes them before
// it serves anything, and nobody can change or delete them.
func (s *Server) ensureBuiltInNodePools() error {
	var missing []*structs.NodePool
	for _, p := range structs.BuiltInNodePools() {
		existing, err := s.State().NodePoolByName(nil, p.Name)
		if err != nil {
			return err
		}
		if existing == nil {
			missing = append(missing, p)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	req := &structs.NodePoolUpsertRequest{NodePools: missing}
	if _, _, err := s.raftApply(structs.NodePoolUpsertRequestType, req); err != nil {
		return fmt.Errorf("writing the built-in node pools: %w", err)
	}
	return nil
}

// setBrokerEnabled enables the broker and the blocked-evals tracker, and
// refills them from state, unless cfg pauses the broker, in which case it
// disables both. It is a no-op when they already are as cfg wants.
func (s *Server) setBrokerEnabled(cfg *structs.SchedulerConfiguration) error {
	s.leader.brokerMu.Lock()
	defer s.leader.brokerMu.Unlock()
	return s.setBrokerEnabledLocked(cfg)
}

func (s *Server) setBrokerEnabledLocked(cfg *structs.SchedulerConfiguration) error {
	if s.evalBroker == nil {
		return nil
	}
	want := cfg == nil || !cfg.PauseEvalBroker
	if s.evalBroker.Enabled() == want {
		return nil
	}
	if !want {
		s.logger.Info("eval broker paused by the scheduler configuration")
		s.evalBroker.SetEnabled(false)
		if s.blockedEvals != nil {
			s.blockedEvals.SetEnabled(false)
		}
		return nil
	}
	s.evalBroker.SetEnabled(true)
	if s.blockedEvals != nil {
		s.blockedEvals.SetEnabled(true)
	}
	return s.restoreEvals()
}

// restoreEvals refills the broker with every pending eval and the blocked
// tracker with every blocked one. Evals the FSM hands over meanwhile are
// deduplicated by the components.
func (s *Server) restoreEvals() error {
	store := s.State()
	pending, err := store.EvalsByStatus(nil, structs.EvalStatusPending)
	if err != nil {
		return fmt.Errorf("restoring pending evals: %w", err)
	}
	for _, e := range pending {
		s.evalBroker.Restore(e)
	}
	blocked, err := store.EvalsByStatus(nil, structs.EvalStatusBlocked)
	if err != nil {
		return fmt.Errorf("restoring blocked evals: %w", err)
	}
	if s.blockedEvals != nil {
		for _, e := range blocked {
			s.blockedEvals.Block(e)
		}
	}
	s.logger.Debug("restored evals", "pending", len(pending), "blocked", len(blocked))
	return nil
}

// handleSchedulerConfigChange applies the stored scheduler configuration
// to the leader's components (pausing or resuming the broker). Holding
// brokerMu while checking leadership orders it with revokeLeadership,
// which clears the flag before it takes the lock to disable: a change that
// loses the race finds the server no longer leading and does nothing.
func (s *Server) handleSchedulerConfigChange() error {
	s.leader.brokerMu.Lock()
	defer s.leader.brokerMu.Unlock()
	if !s.isEstablishedLeader() {
		return nil
	}
	_, cfg, err := s.State().SchedulerConfig(nil)
	if err != nil {
		return err
	}
	return s.setBrokerEnabledLocked(cfg)
}

// rebuildAfterRestore refills the leader's components from a state a
// snapshot restore replaced wholesale (an operator restoring a backup):
// what the broker, blocked tracker and heartbeat timers hold was read
// from the old state. Followers have nothing to rebuild. It runs on the
// FSM goroutine and writes nothing through Raft.
func (s *Server) rebuildAfterRestore() {
	s.leader.brokerMu.Lock()
	defer s.leader.brokerMu.Unlock()
	if !s.isEstablishedLeader() {
		return
	}
	s.logger.Info("state restored from a snapshot; rebuilding the leader's components")
	if s.evalBroker != nil && s.evalBroker.Enabled() {
		s.evalBroker.SetEnabled(false)
		if s.blockedEvals != nil {
			s.blockedEvals.SetEnabled(false)
		}
		_, cfg, err := s.State().SchedulerConfig(nil)
		if err == nil {
			err = s.setBrokerEnabledLocked(cfg)
		}
		if err != nil {
			s.logger.Error("failed to rebuild the eval broker after a restore", "error", err)
		}
	}
	s.heartbeats.clearAll()
	if err := s.heartbeats.initialize(); err != nil {
		s.logger.Error("failed to re-arm heartbeats after a restore", "error", err)
	}
}
