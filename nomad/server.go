package nomad

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/opennomad/nomad/nomad/auth"
	"github.com/opennomad/nomad/nomad/autopilot"
	"github.com/opennomad/nomad/nomad/clock"
	"github.com/opennomad/nomad/nomad/coresched"
	"github.com/opennomad/nomad/nomad/evaltrace"
	"github.com/opennomad/nomad/nomad/fsm"
	"github.com/opennomad/nomad/nomad/mempressure"
	"github.com/opennomad/nomad/nomad/planapply"
	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/nomad/worker"
	"github.com/opennomad/nomad/scheduler"
	"github.com/opennomad/nomad/structs"
)

// Server is one Nomad server. Create it with NewServer; it joins (or, as
// a single server, bootstraps) Raft at once and takes on the leader's
// duties whenever Raft elects it. Stop it with Shutdown.
type Server struct {
	config *Config
	logger hclog.Logger
	clock  clock.Clock
	// tokens resolves the tokens requests carry (when ACLs are on).
	tokens *auth.Resolver
	// id is the server's Raft ID, stable across restarts.
	id string

	fsm           *fsm.FSM
	raft          *raft.Raft
	raftStores    *raftStores
	raftTransport raft.Transport
	raftNotifyCh  chan bool

	// The leader-only scheduling pipeline; fields may be nil.
	evalBroker evalBroker
	// evalTrace is the timeline of the evaluations this server handled
	// as leader (package evaltrace); nil with a test pipeline.
	evalTrace    *evaltrace.Trace
	blockedEvals blockedEvalTracker
	planQueue    planQueue
	// planApplier commits plans while this server leads; nil when the
	// pipeline has no real plan queue and broker (tests with fakes).
	planApplier *planapply.Applier
	// duties are the leader's watchers (drainer, deployments, periodic).
	duties *leaderDuties
	// workers schedule evals on every server.
	workers *worker.Pool
	// peers names the servers of the Raft configuration.
	peers peerBook
	// autopilot remembers since when each server has been healthy, for
	// the leader's health reports.
	autopilot autopilot.Tracker
	// memory says whether the leader refuses writes for the servers'
	// memory (leader_memory.go).
	memory mempressure.Gate
	// net is the listener, the pool to other servers and gossip.
	net clusterNet

	rpc          *rpcRegistry
	heartbeats   *heartbeater
	allocUpdates *allocUpdateBatcher

	leader leadership
	// varLocks are the leader's timers of variable locks.
	varLocks varLockTimers
	// reapKick wakes the leader's cancelable-eval reaper (Eval.Ack).
	reapKick chan struct{}
	// keyringKick wakes the leader's keyring tending (a full rotation).
	keyringKick chan struct{}

	// shutdownCtx ends when Shutdown starts; every goroutine of the
	// server watches it.
	shutdownCtx    context.Context
	shutdownCancel context.CancelFunc
	shutdownOnce   sync.Once
	shutdownErr    error
	wg             sync.WaitGroup
}

// NewServer validates cfg, starts Raft from cfg.DataDir (or in memory)
// and returns a running server: its scheduling workers run at once; the
// eval broker, blocked-evals tracker, plan queue and applier and the
// leader's duties whenever Raft elects it.
func NewServer(cfg *Config) (*Server, error) {
	return newServer(cfg, nil)
}

// newServer builds a server around the leader components p returns for
// the completed configuration (newPipeline when p is nil).
func newServer(cfg *Config, components func(*Config) (pipeline, error)) (*Server, error) {
	if cfg == nil {
		return nil, errors.New("server configuration is required")
	}
	c := *cfg
	if c.Logger == nil {
		c.Logger = hclog.NewNullLogger()
	}
	if c.Clock == nil {
		c.Clock = clock.Real{}
	}
	if c.Schedulers == nil {
		c.Schedulers = scheduler.Builtin()
	}
	if c.DevMode && c.BootstrapExpect == 0 {
		c.BootstrapExpect = 1
	}
	if err := c.validate(); err != nil {
		return nil, err
	}
	if components == nil {
		components = newPipeline
	}
	p, err := components(&c)
	if err != nil {
		return nil, err
	}
	id, err := serverID(&c)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		config:         &c,
		logger:         c.Logger.Named("server"),
		clock:          c.Clock,
		tokens:         auth.NewResolver(c.Clock.Now),
		id:             id,
		raftNotifyCh:   make(chan bool, 1),
		leader:         leadership{ready: make(chan struct{})},
		reapKick:       make(chan struct{}, 1),
		keyringKick:    make(chan struct{}, 1),
		evalBroker:     p.broker,
		evalTrace:      p.trace,
		blockedEvals:   p.blocked,
		planQueue:      p.plans,
		shutdownCtx:    ctx,
		shutdownCancel: cancel,
	}
	var fsmBroker fsm.EvalBroker = p.broker
	if p.broker != nil {
		fsmBroker = traceEnqueues{broker: p.broker, trace: p.trace}
	}
	var fsmBlocked fsm.BlockedEvals = p.blocked
	if p.blocked != nil {
		fsmBlocked = traceBlocks{blockedEvalTracker: p.blocked, trace: p.trace}
	}
	fsmCfg := fsm.Config{
		EvalBroker:   fsmBroker,
		BlockedEvals: fsmBlocked,
		StateConfig:  state.Config{Logger: c.Logger, Publisher: c.EventPublisher},
		Logger:       c.Logger,
		OnRestore:    s.rebuildAfterRestore,
	}
	if s.fsm, err = fsm.New(fsmCfg); err != nil {
		cancel()
		return nil, err
	}
	s.heartbeats = newHeartbeater(s)
	s.allocUpdates = newAllocUpdateBatcher(s)
	if s.rpc, err = newRPCRegistry(s); err != nil {
		cancel()
		return nil, err
	}
	if err := s.buildLeaderParts(p); err != nil {
		cancel()
		return nil, err
	}
	if err := s.setupListener(); err != nil {
		cancel()
		return nil, err
	}
	hadRaftState, err := s.setupRaft()
	if err != nil {
		cancel()
		s.closeNetwork()
		return nil, err
	}
	s.peers.set(raft.ServerID(s.id), peerInfo{rpcAddr: s.rpcAddr(), name: s.memberName()})
	s.wg.Add(1)
	go s.monitorLeadership()
	s.workers.Start(s.shutdownCtx)
	s.startServing()
	if err := s.setupGossip(hadRaftState); err != nil {
		s.Shutdown()
		return nil, err
	}
	s.logger.Info("server started", "id", s.id, "region", c.Region, "datacenter", c.Datacenter,
		"dev_mode", c.DevMode, "data_dir", c.DataDir, "schedulers", c.NumSchedulers)
	return s, nil
}

// buildLeaderParts builds the plan applier (when the pipeline has the
// real plan queue and broker), the leader's duties and the worker pool,
// and registers the applier and the pool to follow leadership. Nothing
// runs yet: the duties and applier start with leadership, the workers in
// NewServer once Raft is up.
func (s *Server) buildLeaderParts(p pipeline) error {
	c := s.config
	queue, okQueue := p.plans.(*planapply.Queue)
	evals, okEvals := p.broker.(planapply.OutstandingEvals)
	if okQueue && okEvals {
		jobRefs := newVersionGate(s.clock, func() bool {
			return s.serversMeetMinimumVersion(structs.MinVersionPlanJobRef)
		})
		planEvals := newVersionGate(s.clock, func() bool {
			return s.serversMeetMinimumVersion(structs.MinVersionPlanEval)
		})
		a, err := planapply.New(planapply.Config{
			Queue: queue, Evals: evals, Raft: &serverPlanRaft{s: s}, State: s.State,
			Clock: s.clock, Logger: s.logger, Pipeline: c.PlanApplyPipeline,
			JobRefs: jobRefs.Open, PlanEvals: planEvals.Open,
		})
		if err != nil {
			return err
		}
		s.planApplier = a
		s.AddLeadershipObserver(a)
	}
	duties, err := newLeaderDuties(s)
	if err != nil {
		return err
	}
	s.duties = duties
	s.workers, err = worker.NewPool(worker.PoolConfig{
		NumSchedulers:        c.NumSchedulers,
		EnabledSchedulers:    c.EnabledSchedulers,
		MaxSchedulers:        max(runtime.NumCPU(), c.NumSchedulers),
		LeaderPausedFraction: c.LeaderPausedFraction,
		Worker: worker.Config{
			Endpoints: &rpcWorkerEndpoints{s: s},
			State:     s.State,
			Factories: s.workerSchedulers(),
			Clock:     s.clock,
			Logger:    s.logger,
		},
	})
	if err != nil {
		return fmt.Errorf("scheduler workers: %w", err)
	}
	s.AddLeadershipObserver(s.workers)
	return nil
}

// workerSchedulers are the schedulers a worker runs: the configured ones
// and the garbage collector under structs.JobTypeCore.
func (s *Server) workerSchedulers() scheduler.Factories {
	f := maps.Clone(s.config.Schedulers)
	f[structs.JobTypeCore] = s.coreSchedulerFactory
	return f
}

// coreSchedulerFactory builds the garbage collector for a worker's
// "_core" eval, over the worker's snapshot.
func (s *Server) coreSchedulerFactory(_ *scheduler.Config, st scheduler.State, _ scheduler.Planner) scheduler.Scheduler {
	view, ok := st.(*state.SchedulerView)
	if !ok {
		return failingScheduler{err: fmt.Errorf("core scheduler: state is %T, not a state store snapshot", st)}
	}
	c := s.config
	return coresched.New(coresched.Config{
		RPC: s.RPC,
		Now: s.now(),
		Thresholds: coresched.Thresholds{
			Eval: c.EvalGCThreshold, BatchEval: c.BatchEvalGCThreshold, Job: c.JobGCThreshold,
			Node: c.NodeGCThreshold, Deployment: c.DeploymentGCThreshold,
		},
		Logger: s.logger.Named("core"),
	}, view.Snapshot())
}

// failingScheduler fails every eval with err.
type failingScheduler struct{ err error }

func (f failingScheduler) Process(*structs.Evaluation) error { return f.err }

// Workers returns the server's scheduling worker pool, which operators
// pause, resume and resize at run time.
func (s *Server) Workers() *worker.Pool { return s.workers }

// Shutdown stops the server: it gives up leadership duties, stops Raft and
// closes the Raft stores and transport. It is safe to call more than once.
func (s *Server) Shutdown() error {
	s.shutdownOnce.Do(func() {
		s.logger.Info("shutting down server")
		s.shutdownCancel()
		s.wg.Wait()
		// Workers exit once their eval in hand is done; it may still
		// need Raft, which stops after them.
		s.workers.Shutdown()
		var errs []error
		if err := s.shutdownGossip(); err != nil {
			errs = append(errs, err)
		}
		if err := s.raft.Shutdown().Error(); err != nil {
			errs = append(errs, fmt.Errorf("stopping raft: %w", err))
		}
		if err := closeRaft(s.raftStores, s.raftTransport); err != nil {
			errs = append(errs, fmt.Errorf("closing raft stores: %w", err))
		}
		if err := s.closeNetwork(); err != nil {
			errs = append(errs, err)
		}
		s.shutdownErr = errors.Join(errs...)
	})
	return s.shutdownErr
}

// ID returns the server's Raft ID.
func (s *Server) ID() string { return s.id }

// State returns the server's current state store. Reads may use it
// directly; it is replaced when a Raft snapshot is restored, so fetch it
// per use.
func (s *Server) State() *state.StateStore { return s.fsm.State() }

// Raft returns the server's Raft instance, for membership management and
// operator tooling.
func (s *Server) Raft() *raft.Raft { return s.raft }

// IsLeader reports whether Raft considers this server the leader.
func (s *Server) IsLeader() bool { return s.raft.State() == raft.Leader }

// Leader returns the Raft address of the current leader, "" when none is
// known.
func (s *Server) Leader() string {
	addr, _ := s.raft.LeaderWithID()
	return string(addr)
}

// Config returns a copy of the configuration the server runs with.
func (s *Server) Config() Config { return *s.config }

// now reads the server's clock.
func (s *Server) now() time.Time { return s.clock.Now() }
