package client

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/opennomad/nomad/client/allocrunner"
	"github.com/opennomad/nomad/client/driver"
	"github.com/opennomad/nomad/client/fingerprint"
	"github.com/opennomad/nomad/client/state"
	"github.com/opennomad/nomad/client/taskenv"
	"github.com/opennomad/nomad/client/taskrunner"
	"github.com/opennomad/nomad/structs"
)

// Client is the node agent. NewClient describes the machine, restores
// the allocations a previous run left, and starts the loops that keep the
// node registered and its allocations in line with the servers:
//
//	register -> heartbeat (at the TTL the servers return)
//	         -> alloc watch (blocking Node.GetClientAllocs, Alloc.GetAllocs)
//	alloc status sync (Node.UpdateAlloc, batched)
//	native service registrations of running allocations
//	garbage collection of finished allocations
//	driver health checks, registering again when it changes
//
// Its exported methods are safe for concurrent use; the HTTP agent calls
// the file, log and alloc operations from request goroutines.
type Client struct {
	cfg     Config
	logger  hclog.Logger
	clock   taskrunner.Clock
	servers *serverList
	drivers driver.Catalog
	db      state.DB
	allocs  *allocrunner.Set

	nodeMu sync.RWMutex
	node   *structs.Node
	// machine is what fingerprinting found at startup; the node is
	// rebuilt from it when driver health changes.
	machine *fingerprint.Result
	// dynamicMeta is the meta applied at run time (ApplyNodeMeta), kept
	// in the state directory; guarded by nodeMu.
	dynamicMeta map[string]*string
	// nodeChanged asks the node update loop to register the node again.
	nodeChanged chan struct{}
	// dynamicVolumes are the dynamic host volumes the node offers, by
	// name; guarded by nodeMu.
	dynamicVolumes map[string]*structs.ClientHostVolumeConfig

	// idMu guards the node identity the servers last issued, and
	// whether renewing it was asked for.
	idMu          sync.Mutex
	identity      *nodeIdentity
	renewIdentity bool

	hbMu          sync.Mutex
	lastHeartbeat time.Time
	heartbeatTTL  time.Duration

	// registered is closed once the node first registered; the alloc
	// watch and status sync wait for it.
	registered chan struct{}

	syncMu  sync.Mutex
	pending map[string]*structs.Allocation

	services *serviceSync
	checks   *checkRunner

	statsMu   sync.Mutex
	cpuSample map[string]cpuSample

	gcNow chan struct{}

	// lifeMu orders Apply against Shutdown and Destroy: once stopped is
	// set no alloc watch result is applied, so no runner starts after the
	// set was let go of.
	lifeMu  sync.Mutex
	stopped bool

	shutdownCh   chan struct{}
	shutdownOnce sync.Once
	// loops counts the goroutines Shutdown waits for. The alloc watch is
	// not among them: it may sit in a blocking query for minutes, and the
	// in-process RPC cannot be cancelled; it exits when that returns.
	loops sync.WaitGroup
}

// NewClient builds and starts a client. It fails when the configuration
// is invalid, the data directory is unusable or the machine cannot be
// fingerprinted; it does not wait for the servers.
func NewClient(cfg *Config) (*Client, error) {
	c := &Client{
		cfg:         *cfg,
		registered:  make(chan struct{}),
		pending:     map[string]*structs.Allocation{},
		cpuSample:   map[string]cpuSample{},
		gcNow:       make(chan struct{}, 1),
		nodeChanged: make(chan struct{}, 1),
		shutdownCh:  make(chan struct{}),
		services:    newServiceSync(),
	}
	if err := c.cfg.normalize(); err != nil {
		return nil, err
	}
	c.logger = c.cfg.Logger.Named("client")
	c.clock = c.cfg.Clock
	c.checks = newCheckRunner(c.clock, c.shutdownCh)
	c.servers = newServerList(c.cfg.Servers, c.logger)

	// Tasks of exec run as nobody and must traverse into their alloc
	// directories; the client's own state stays private.
	for _, d := range []struct {
		path string
		mode os.FileMode
	}{{c.cfg.DataDir, 0o711}, {c.cfg.AllocDir, 0o711}, {c.cfg.StateDir, 0o700}} {
		if err := os.MkdirAll(d.path, d.mode); err != nil {
			return nil, fmt.Errorf("client: %w", err)
		}
	}
	id, err := state.LoadOrCreateNodeIdentity(c.cfg.StateDir)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	if c.dynamicMeta, err = state.LoadNodeMeta(c.cfg.StateDir); err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	if err := c.loadNodeIdentity(); err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	if c.drivers, err = buildDrivers(&c.cfg); err != nil {
		return nil, err
	}
	fpCfg := c.cfg.fingerprintConfig()
	if c.machine, err = fingerprint.Fingerprint(fpCfg, c.cfg.Host); err != nil {
		return nil, fmt.Errorf("client: fingerprinting: %w", err)
	}
	c.node = fingerprint.BuildNode(id.ID, id.SecretID, fpCfg, c.machine, c.drivers.Fingerprint(c.clock.Now()))
	c.applyDynamicMeta(c.node)

	if c.db, err = state.NewFileDB(filepath.Join(c.cfg.StateDir, "state")); err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	c.allocs = allocrunner.NewSet(allocrunner.SetConfig{
		AllocDirRoot:   c.cfg.AllocDir,
		StateDirRoot:   filepath.Join(c.cfg.StateDir, "tasks"),
		Drivers:        c.drivers,
		HostEnv:        taskenv.HostEnv(os.Environ(), taskenv.DefaultEnvDenylist),
		StateDB:        c.db,
		MaxKillTimeout: c.cfg.MaxKillTimeout,
		Logger:         c.logger,
		Clock:          c.clock,
		Node:           c.Node,
		Updated:        c.allocUpdated,
	})

	// Reattach before talking to the servers: tasks that kept running are
	// found, and those that died while the client was down are reported
	// failed by the first status sync.
	bad, err := c.allocs.Restore()
	if err != nil {
		return nil, fmt.Errorf("client: restoring allocations: %w", err)
	}
	for allocID, err := range bad {
		c.logger.Error("could not restore allocation", "alloc_id", allocID, "error", err)
	}
	c.logger.Info("client started", "node_id", c.node.ID, "name", c.node.Name,
		"restored_allocs", len(c.allocs.Runners()), "drivers", healthyDrivers(c.node))

	c.loops.Add(5)
	go c.run()
	go c.syncLoop()
	go c.serviceLoop()
	go c.gcLoop()
	go c.driverHealthLoop()
	return c, nil
}

// run registers the node, then starts the alloc watch and heartbeats
// until shutdown.
func (c *Client) run() {
	defer c.loops.Done()
	ttl, ok := c.registerUntilDone()
	if !ok {
		return
	}
	close(c.registered)
	go c.watchAllocs()
	go c.watchHostVolumes()
	c.heartbeatLoop(c.firstHeartbeat(ttl))
}

// Node returns a copy of the node the client registers.
func (c *Client) Node() *structs.Node {
	c.nodeMu.RLock()
	defer c.nodeMu.RUnlock()
	return c.node.Copy()
}

// NodeID is the node's ID.
func (c *Client) NodeID() string {
	c.nodeMu.RLock()
	defer c.nodeMu.RUnlock()
	return c.node.ID
}

// Servers lists the servers the client knows, the one it uses first.
func (c *Client) Servers() []string { return c.servers.names() }

// RPC calls a server endpoint the way the client's own calls go: to the
// server in use, moving on to the next when one cannot serve. A
// client-only agent answers its HTTP API through it.
func (c *Client) RPC(method string, args, reply interface{}) error {
	return c.servers.call(method, args, reply)
}

// SetServers replaces the servers the client talks to.
func (c *Client) SetServers(servers []ServerEndpoint) error {
	for i, s := range servers {
		if s.Conn == nil {
			return fmt.Errorf("client: server %d (%q): no connection", i, s.Name)
		}
	}
	if len(servers) == 0 {
		return ErrNoServers
	}
	c.servers.set(servers)
	return nil
}

// LastHeartbeat is when the servers last acknowledged a heartbeat (zero
// before the first), and the TTL they gave with it.
func (c *Client) LastHeartbeat() (time.Time, time.Duration) {
	c.hbMu.Lock()
	defer c.hbMu.Unlock()
	return c.lastHeartbeat, c.heartbeatTTL
}

// Allocations returns the allocations the client runs, as it sees them:
// the servers' latest version with the client's status and task states.
func (c *Client) Allocations() []*structs.Allocation {
	runners := c.allocs.Runners()
	out := make([]*structs.Allocation, 0, len(runners))
	for _, ar := range runners {
		out = append(out, ar.Alloc())
	}
	return out
}

// Shutdown stops the client but leaves its tasks running: a client
// started on the same data directory reattaches to them.
func (c *Client) Shutdown() error {
	c.stop()
	c.allocs.Shutdown()
	return c.db.Close()
}

// Destroy stops the client and every task it runs, and removes the
// allocations' directories and state. Tests and a node being retired use
// it; a restarting agent uses Shutdown.
func (c *Client) Destroy() error {
	c.stop()
	for _, ar := range c.allocs.Runners() {
		ar.Destroy()
	}
	for _, ar := range c.allocs.Runners() {
		<-ar.DestroyedCh()
	}
	return c.db.Close()
}

// stop ends the client's loops, once.
func (c *Client) stop() {
	c.shutdownOnce.Do(func() {
		c.lifeMu.Lock()
		c.stopped = true
		c.lifeMu.Unlock()
		close(c.shutdownCh)
		c.loops.Wait()
		c.logger.Info("client stopped")
	})
}

// stopping reports whether Shutdown or Destroy began.
func (c *Client) stopping() bool {
	select {
	case <-c.shutdownCh:
		return true
	default:
		return false
	}
}

// sleep waits d on the client's clock; false when the client stops first.
func (c *Client) sleep(d time.Duration) bool {
	select {
	case <-c.shutdownCh:
		return false
	case <-c.clock.After(d):
		return true
	}
}

// retryWait is the backoff after failures consecutive failures.
func (c *Client) retryWait(failures int) time.Duration {
	return backoff(c.cfg.RetryMin, c.cfg.RetryMax, failures, rand.Float64())
}

// healthyDrivers names the drivers the node offers, for the startup log.
func healthyDrivers(n *structs.Node) []string {
	var out []string
	for name, d := range n.Drivers {
		if d != nil && d.Detected && d.Healthy {
			out = append(out, name)
		}
	}
	return out
}
