package nodesim

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/opennomad/nomad/structs"
)

// Simulator runs the simulated nodes. Create it with New, start it with
// Start and stop it with Stop.
type Simulator struct {
	cfg     Config
	logger  hclog.Logger
	servers *serverSet
	nodes   []*simNode

	heartbeats *heartbeater
	reports    *reporter
	stats      counters

	stopCh   chan struct{}
	stopOnce sync.Once
	// loops are the goroutines Stop waits for; node watches are not
	// among them, since a watch may sit in a blocking query until the
	// server answers it.
	loops sync.WaitGroup
}

// New prepares the simulator for cfg against servers; nothing is sent
// before Start.
func New(cfg Config, servers []Server) (*Simulator, error) {
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("node simulator: %w", err)
	}
	if len(servers) == 0 {
		return nil, errors.New("node simulator: at least one server is required")
	}
	for i, s := range servers {
		if s.Conn == nil {
			return nil, fmt.Errorf("node simulator: server %d (%q) has no connection", i, s.Name)
		}
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	s := &Simulator{
		cfg:     cfg,
		logger:  cfg.Logger.Named("nodesim"),
		servers: &serverSet{servers: append([]Server(nil), servers...)},
		stopCh:  make(chan struct{}),
	}
	s.nodes = make([]*simNode, cfg.Nodes)
	for i := range s.nodes {
		s.nodes[i] = newSimNode(&s.cfg, i, len(servers))
	}
	s.heartbeats = newHeartbeater(s)
	s.reports = newReporter(s)
	return s, nil
}

// Start begins the reporting and heartbeat loops and registers every node
// in the background, at most RegisterConcurrency at a time. Each node
// becomes ready, heartbeats and watches its allocations once registered.
// Use WaitRegistered to wait for all of them.
func (s *Simulator) Start() {
	s.loops.Add(1)
	go func() {
		defer s.loops.Done()
		s.reports.run()
	}()
	s.heartbeats.start()

	s.loops.Add(1)
	go func() {
		defer s.loops.Done()
		s.registerAll()
	}()
}

// Stop stops heartbeating and reporting and waits for those loops; node
// watches end when their pending query returns. It is safe to call more
// than once.
func (s *Simulator) Stop() {
	s.stopOnce.Do(func() { close(s.stopCh) })
	s.loops.Wait()
}

// stopped reports whether Stop was called.
func (s *Simulator) stopped() bool {
	select {
	case <-s.stopCh:
		return true
	default:
		return false
	}
}

// sleep waits d, returning false if the simulator stops first.
func (s *Simulator) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.stopCh:
		return false
	}
}

// WaitRegistered blocks until every node is registered and ready, ctx
// ends, or the simulator stops.
func (s *Simulator) WaitRegistered(ctx context.Context) error {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		if n := int(s.stats.ready.Load()); n >= len(s.nodes) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d of %d nodes ready: %w", s.stats.ready.Load(), len(s.nodes), ctx.Err())
		case <-s.stopCh:
			return errors.New("node simulator stopped")
		case <-t.C:
		}
	}
}

// NodeIDs returns the IDs of the simulated nodes, in node order.
func (s *Simulator) NodeIDs() []string {
	out := make([]string, len(s.nodes))
	for i, n := range s.nodes {
		out[i] = n.id
	}
	return out
}

// registerAll registers every node through a pool of workers.
func (s *Simulator) registerAll() {
	work := make(chan *simNode)
	var wg sync.WaitGroup
	for range min(s.cfg.RegisterConcurrency, len(s.nodes)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range work {
				s.registerUntilDone(n, true)
			}
		}()
	}
	for _, n := range s.nodes {
		select {
		case work <- n:
		case <-s.stopCh:
		}
		if s.stopped() {
			break
		}
	}
	close(work)
	wg.Wait()
}

// registerUntilDone registers n and turns it ready, retrying with backoff
// until that works or the simulator stops. The first registration also
// starts the node's alloc watch; every one schedules its next heartbeat.
func (s *Simulator) registerUntilDone(n *simNode, first bool) {
	for failures := 0; !s.stopped(); failures++ {
		if failures > 0 && !s.sleep(backoff(failures)) {
			return
		}
		ttl, err := s.register(n)
		if err != nil {
			s.stats.registerErrors.Add(1)
			s.logger.Warn("registering a node failed", "node", n.name, "error", err)
			continue
		}
		if first {
			s.stats.ready.Add(1)
			go s.watch(n)
		}
		s.heartbeats.schedule(n, time.Now().Add(firstHeartbeat(ttl)))
		return
	}
}

// register sends the node initializing, then heartbeats it ready, as a
// client does once its first registration succeeds. It returns the TTL
// of the ready heartbeat.
func (s *Simulator) register(n *simNode) (time.Duration, error) {
	req := &structs.NodeRegisterRequest{
		Node:         n.build(&s.cfg, time.Now()),
		WriteRequest: structs.WriteRequest{Region: s.cfg.Region},
	}
	var resp structs.NodeUpdateResponse
	if err := s.servers.write("Node.Register", req, &resp); err != nil {
		return 0, fmt.Errorf("node %q: register: %w", n.name, err)
	}
	s.stats.registrations.Add(1)
	ttl, err := s.heartbeat(n)
	if err != nil {
		return 0, fmt.Errorf("node %q: first heartbeat: %w", n.name, err)
	}
	return ttl, nil
}

// heartbeat tells the servers the node is ready and returns the TTL they
// expect the next heartbeat within.
func (s *Simulator) heartbeat(n *simNode) (time.Duration, error) {
	req := &structs.NodeUpdateStatusRequest{
		NodeID:       n.id,
		SecretID:     n.secretID,
		Status:       structs.NodeStatusReady,
		WriteRequest: structs.WriteRequest{Region: s.cfg.Region},
	}
	var resp structs.NodeUpdateResponse
	if err := s.servers.write("Node.UpdateStatus", req, &resp); err != nil {
		return 0, err
	}
	s.stats.heartbeats.Add(1)
	return resp.HeartbeatTTL, nil
}

// backoff is the wait before retry number failures: 250ms doubling to
// 8s.
func backoff(failures int) time.Duration {
	d := 250 * time.Millisecond << min(failures-1, 5)
	return min(d, 8*time.Second)
}
