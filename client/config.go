package client

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/opennomad/nomad/client/fingerprint"
	"github.com/opennomad/nomad/client/taskrunner"
	"github.com/opennomad/nomad/structs"
)

// Client option keys (the agent's `client { options { ... } }`).
const (
	// OptionRawExecEnable turns on raw_exec, which runs tasks without
	// isolation; a `plugin "raw_exec" { config { enabled = true } }`
	// block does the same.
	OptionRawExecEnable = "driver.raw_exec.enable"
	// OptionMockDriverEnable offers mock_driver, whose tasks are
	// simulated; for tests and large simulated clusters only.
	OptionMockDriverEnable = "driver.mock_driver.enable"
	// OptionDriverAllowlist and OptionDriverDenylist are comma-separated
	// driver names: only the allowed (when set) and never the denied
	// drivers are offered.
	OptionDriverAllowlist = "driver.allowlist"
	OptionDriverDenylist  = "driver.denylist"
)

// Defaults, as Nomad's client has them.
const (
	DefaultGCInterval        = time.Minute
	DefaultGCMaxAllocs       = 50
	DefaultMaxKillTimeout    = 30 * time.Second
	DefaultAllocSyncInterval = 200 * time.Millisecond
)

// Config configures a Client. The agent builds it from its `client`
// block; tests fill it directly.
type Config struct {
	// DataDir holds the client's state (node identity, allocations, task
	// handles) and the alloc directories. Required.
	DataDir string
	// StateDir and AllocDir default to <DataDir>/client and
	// <DataDir>/alloc.
	StateDir string
	AllocDir string

	Region     string
	Datacenter string
	// NodeName defaults to the host name.
	NodeName  string
	NodeClass string
	NodePool  string
	// Meta is the node's static metadata; Nomad's defaults
	// (defaultNodeMeta) fill the keys it does not set.
	Meta map[string]string
	// Options are the client options (OptionRawExecEnable, ...).
	Options map[string]string
	// Reserved is kept from tasks.
	Reserved *structs.NodeReservedResources

	// HTTPAddr is the agent's HTTP address, advertised on the node so
	// that the servers can send users here for logs and files.
	HTTPAddr string
	// NetworkInterface, NetworkSpeed, CPUTotalCompute, MemoryTotalMB and
	// the dynamic port range override fingerprinting (see
	// fingerprint.Config).
	NetworkInterface string
	NetworkSpeed     int
	CPUTotalCompute  int
	MemoryTotalMB    int
	MinDynamicPort   int
	MaxDynamicPort   int

	// Servers are the servers to register with, tried in order and
	// rotated on failure. Required (SetServers may replace them later).
	Servers []ServerEndpoint
	// DialServer, when set, makes the endpoint of a server by its RPC
	// address; the client then follows the server list the servers send
	// with every registration and heartbeat (RemoteServer with a shared
	// pool is the usual one). Nil keeps Servers as given.
	DialServer func(addr string) ServerEndpoint

	// HostVolumes are the static host volumes the node offers, by name;
	// each path must exist when the client starts.
	HostVolumes map[string]*structs.ClientHostVolumeConfig
	// HostVolumesDir is where dynamic host volumes are made;
	// <DataDir>/host_volumes by default.
	HostVolumesDir string

	// Plugins holds each driver's `plugin "<name>" { config {...} }`.
	Plugins map[string]map[string]interface{}
	// ExecutorPath is the binary task supervisors run from; empty means
	// the running binary.
	ExecutorPath string

	// MaxKillTimeout caps every task's kill_timeout.
	MaxKillTimeout time.Duration
	// DisableRemoteExec refuses every exec into this client's tasks
	// (client option disable_remote_exec).
	DisableRemoteExec bool
	// GCInterval is how often terminal allocations beyond GCMaxAllocs are
	// collected (their directories removed).
	GCInterval  time.Duration
	GCMaxAllocs int

	// DevMode sends the first heartbeat at once instead of after a random
	// stagger, so a dev agent's node is ready immediately.
	DevMode bool

	// AllocSyncInterval is how long alloc status changes are gathered
	// before one Node.UpdateAlloc carries them; 200ms unless set.
	AllocSyncInterval time.Duration
	// RetryMin and RetryMax bound the backoff of registration,
	// heartbeats, the alloc watch and status sync after errors.
	RetryMin time.Duration
	RetryMax time.Duration

	Logger hclog.Logger
	// Clock times the client's loops and its tasks' restarts; the wall
	// clock when nil.
	Clock taskrunner.Clock
	// Host is where fingerprinting reads the machine; the real one when
	// zero.
	Host fingerprint.Host
}

// normalize fills defaults and reports every problem of the
// configuration at once.
func (c *Config) normalize() error {
	var errs []error
	if c.DataDir == "" {
		errs = append(errs, errors.New("client: data_dir is required"))
	} else {
		abs, err := filepath.Abs(c.DataDir)
		if err != nil {
			errs = append(errs, fmt.Errorf("client: data_dir %q: %w", c.DataDir, err))
		}
		c.DataDir = abs
	}
	if c.StateDir == "" {
		c.StateDir = filepath.Join(c.DataDir, "client")
	}
	if c.AllocDir == "" {
		c.AllocDir = filepath.Join(c.DataDir, "alloc")
	}
	if c.HostVolumesDir == "" {
		c.HostVolumesDir = filepath.Join(c.DataDir, "host_volumes")
	}
	errs = append(errs, checkHostVolumes(c.HostVolumes)...)
	if c.Region == "" {
		c.Region = structs.DefaultRegion
	}
	if c.Datacenter == "" {
		c.Datacenter = "dc1"
	}
	c.Meta = withDefaultNodeMeta(c.Meta)
	if len(c.Servers) == 0 {
		errs = append(errs, errors.New("client: at least one server is required"))
	}
	for i, s := range c.Servers {
		if s.Conn == nil {
			errs = append(errs, fmt.Errorf("client: server %d (%q): no connection", i, s.Name))
		}
	}
	if c.MaxKillTimeout == 0 {
		c.MaxKillTimeout = DefaultMaxKillTimeout
	}
	if c.MaxKillTimeout < 0 {
		errs = append(errs, fmt.Errorf("client: max_kill_timeout must be positive, got %v", c.MaxKillTimeout))
	}
	if c.GCInterval == 0 {
		c.GCInterval = DefaultGCInterval
	}
	if c.GCInterval < 0 {
		errs = append(errs, fmt.Errorf("client: gc_interval must be positive, got %v", c.GCInterval))
	}
	if c.GCMaxAllocs == 0 {
		c.GCMaxAllocs = DefaultGCMaxAllocs
	}
	if c.GCMaxAllocs < 0 {
		errs = append(errs, fmt.Errorf("client: gc_max_allocs must be positive, got %d", c.GCMaxAllocs))
	}
	if c.AllocSyncInterval <= 0 {
		c.AllocSyncInterval = DefaultAllocSyncInterval
	}
	if c.RetryMin <= 0 {
		c.RetryMin = time.Second
	}
	if c.RetryMax <= 0 {
		c.RetryMax = 30 * time.Second
	}
	if c.RetryMax < c.RetryMin {
		c.RetryMax = c.RetryMin
	}
	for _, key := range []string{OptionRawExecEnable, OptionMockDriverEnable} {
		if _, err := c.boolOption(key); err != nil {
			errs = append(errs, err)
		}
	}
	if c.Logger == nil {
		c.Logger = hclog.NewNullLogger()
	}
	if c.Clock == nil {
		c.Clock = wallClock{}
	}
	if c.Host == (fingerprint.Host{}) {
		c.Host = fingerprint.DefaultHost()
	}
	return errors.Join(errs...)
}

// boolOption reads a boolean client option; unset is false.
func (c *Config) boolOption(key string) (bool, error) {
	v, ok := c.Options[key]
	if !ok || v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("client: option %q: %q is not a boolean", key, v)
	}
	return b, nil
}

// fingerprintConfig is the part of the configuration fingerprinting reads.
func (c *Config) fingerprintConfig() *fingerprint.Config {
	return &fingerprint.Config{
		DataDir:          c.DataDir,
		Datacenter:       c.Datacenter,
		NodeName:         c.NodeName,
		NodeClass:        c.NodeClass,
		NodePool:         c.NodePool,
		Meta:             c.Meta,
		HTTPAddr:         c.HTTPAddr,
		NetworkInterface: c.NetworkInterface,
		NetworkSpeed:     c.NetworkSpeed,
		CPUTotalCompute:  c.CPUTotalCompute,
		MemoryTotalMB:    c.MemoryTotalMB,
		Reserved:         c.Reserved,
		MinDynamicPort:   c.MinDynamicPort,
		MaxDynamicPort:   c.MaxDynamicPort,
		HostVolumes:      c.HostVolumes,
	}
}

// checkHostVolumes reports each static host volume that is malformed or
// whose path does not exist: a task could never mount it.
func checkHostVolumes(vols map[string]*structs.ClientHostVolumeConfig) []error {
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(vols)) {
		v := vols[name]
		if v == nil {
			errs = append(errs, fmt.Errorf("client: host_volume %q: no configuration", name))
			continue
		}
		v.Name = name
		if err := v.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("client: %w", err))
			continue
		}
		if _, err := os.Stat(v.Path); err != nil {
			errs = append(errs, fmt.Errorf("client: host_volume %q: %w", name, err))
		}
	}
	return errs
}

// wallClock is the real time.
type wallClock struct{}

func (wallClock) Now() time.Time                         { return time.Now() }
func (wallClock) After(d time.Duration) <-chan time.Time { return time.After(d) }
