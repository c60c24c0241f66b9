package membership

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/memberlist"
	"github.com/hashicorp/serf/serf"
)

// Config configures a server's Membership.
type Config struct {
	// NodeName and Region name the member "<NodeName>.<Region>".
	NodeName   string
	Region     string
	Datacenter string

	// BindAddr and BindPort are where gossip listens (TCP and UDP);
	// AdvertiseAddr and AdvertisePort what other servers dial, when the
	// bind address is not reachable as is.
	BindAddr      string
	BindPort      int
	AdvertiseAddr string
	AdvertisePort int

	// ServerID is the server's Raft ID; RPCAddr ("host:port") its RPC
	// address, which is also its Raft address. Both are published in the
	// tags and go into the Raft configuration.
	ServerID string
	RPCAddr  string
	// Build is the server's version, RaftVersion its Raft protocol (3).
	Build       string
	RaftVersion int

	// BootstrapExpect is the number of servers to wait for before
	// bootstrapping Raft. 0 never bootstraps: a server with Raft state, or
	// one meant to join an existing cluster. Every server of a new
	// cluster must expect the same number.
	BootstrapExpect int
	// PeerCount asks the server at rpcAddr how many Raft peers it has.
	// Before bootstrapping, every other server is asked, and a server
	// that already has peers means the cluster exists: this server then
	// waits to be added instead. Nil skips the check (tests of a fresh
	// cluster). Called from the bootstrap goroutine.
	PeerCount func(ctx context.Context, rpcAddr string) (int, error)
	// BootstrapRetryInterval is how often bootstrapping is re-tried while
	// enough servers are known but a check failed.
	BootstrapRetryInterval time.Duration
	// OnServer, when set, is told every change gossip reports about a
	// server of this region (this one included, first), from the event
	// goroutine; it must not block. The server records addresses and
	// names with it.
	OnServer func(ServerInfo)

	// ReconcileInterval is how often the leader compares Raft's
	// configuration with the known servers even without gossip events.
	ReconcileInterval time.Duration
	// DeadServerGrace is how long a server may stay failed (or unknown
	// to gossip while in Raft's configuration) before the leader removes
	// it; 0 disables the cleanup. CleanupInterval is how often it looks.
	DeadServerGrace time.Duration
	CleanupInterval time.Duration
	// MinQuorum is the smallest voter count the cleanup leaves.
	MinQuorum int
	// CleanupPolicy, when set, is asked before each cleanup whether it
	// may run and for the fewest voters it must leave (the larger of
	// that and MinQuorum counts): the stored autopilot configuration.
	CleanupPolicy func() (enabled bool, minQuorum int)

	// SnapshotPath, when set, is where gossip keeps the members it knew,
	// so that a restarted server rejoins them by itself.
	SnapshotPath string
	// Keys, when set, encrypt gossip (memberlist's AES-GCM): the first
	// encrypts what this server sends, any of them opens what it receives,
	// and a member without one of them cannot join. KeyringFile, when
	// set, is where serf keeps the keyring after each change made at run
	// time (InstallKey, UseKey, RemoveKey); see InitKeyring.
	Keys        [][]byte
	KeyringFile string

	// Profile picks gossip timings: ProfileLAN (the default) for servers
	// on one network, ProfileLocal for servers on one machine.
	Profile Profile
	// Tune, when set, adjusts the serf configuration last; tests shorten
	// timings with it.
	Tune func(*serf.Config)

	Logger hclog.Logger
}

// Profile is a set of gossip timings.
type Profile int

const (
	// ProfileLAN is memberlist's LAN configuration: failure detection in
	// a few seconds on one network.
	ProfileLAN Profile = iota
	// ProfileLocal is memberlist's configuration for one machine.
	ProfileLocal
)

// DefaultConfig returns the defaults: Nomad's 60 s reconcile interval and
// serf port 4648, and dead servers removed after 5 minutes failed.
func DefaultConfig() Config {
	return Config{
		Region:                 "global",
		Datacenter:             "dc1",
		BindAddr:               "0.0.0.0",
		BindPort:               4648,
		RaftVersion:            3,
		BootstrapRetryInterval: time.Second,
		ReconcileInterval:      60 * time.Second,
		DeadServerGrace:        5 * time.Minute,
		CleanupInterval:        10 * time.Second,
	}
}

// validate checks the configuration and fills what defaults.
func (c *Config) validate() error {
	var errs []error
	if c.NodeName == "" {
		errs = append(errs, errors.New("node name is required"))
	}
	if c.Region == "" {
		errs = append(errs, errors.New("region is required"))
	}
	if c.ServerID == "" {
		errs = append(errs, errors.New("server ID is required"))
	}
	if _, _, err := net.SplitHostPort(c.RPCAddr); err != nil {
		errs = append(errs, fmt.Errorf("rpc address %q: %w", c.RPCAddr, err))
	}
	if c.BootstrapExpect < 0 {
		errs = append(errs, fmt.Errorf("bootstrap_expect must be >= 0, got %d", c.BootstrapExpect))
	}
	for i, k := range c.Keys {
		if err := memberlist.ValidateKey(k); err != nil {
			errs = append(errs, fmt.Errorf("gossip key %d: %w", i, err))
		}
	}
	if c.KeyringFile != "" && len(c.Keys) == 0 {
		errs = append(errs, errors.New("a keyring file needs gossip keys"))
	}
	if c.BindPort < 0 || c.BindPort > 65535 {
		errs = append(errs, fmt.Errorf("serf port %d out of range", c.BindPort))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("membership configuration: %w", err)
	}
	d := DefaultConfig()
	if c.BindAddr == "" {
		c.BindAddr = d.BindAddr
	}
	if c.RaftVersion == 0 {
		c.RaftVersion = d.RaftVersion
	}
	if c.BootstrapRetryInterval <= 0 {
		c.BootstrapRetryInterval = d.BootstrapRetryInterval
	}
	if c.ReconcileInterval <= 0 {
		c.ReconcileInterval = d.ReconcileInterval
	}
	if c.CleanupInterval <= 0 {
		c.CleanupInterval = d.CleanupInterval
	}
	if c.Logger == nil {
		c.Logger = hclog.NewNullLogger()
	}
	return nil
}

// memberName is the gossip name of the server.
func (c *Config) memberName() string { return c.NodeName + "." + c.Region }

// serfConfig builds serf's configuration.
func (c *Config) serfConfig(events chan<- serf.Event) (*serf.Config, error) {
	sc := serf.DefaultConfig()
	sc.NodeName = c.memberName()
	sc.Tags = c.tags()
	sc.EventCh = events
	sc.SnapshotPath = c.SnapshotPath
	sc.EnableNameConflictResolution = true
	std := c.Logger.Named("serf").StandardLogger(&hclog.StandardLoggerOptions{InferLevels: true})
	sc.LogOutput = nil
	sc.Logger = std

	var ml *memberlist.Config
	switch c.Profile {
	case ProfileLocal:
		ml = memberlist.DefaultLocalConfig()
	default:
		ml = memberlist.DefaultLANConfig()
	}
	ml.Name = sc.NodeName
	ml.BindAddr = c.BindAddr
	ml.BindPort = c.BindPort
	ml.AdvertisePort = c.BindPort
	if c.AdvertiseAddr != "" {
		ml.AdvertiseAddr = c.AdvertiseAddr
	}
	if c.AdvertisePort != 0 {
		ml.AdvertisePort = c.AdvertisePort
	}
	ml.LogOutput = nil
	ml.Logger = std
	if len(c.Keys) > 0 {
		keyring, err := memberlist.NewKeyring(c.Keys, c.Keys[0])
		if err != nil {
			return nil, fmt.Errorf("gossip keyring: %w", err)
		}
		ml.Keyring = keyring
		sc.KeyringFile = c.KeyringFile
	}
	sc.MemberlistConfig = ml
	if c.Tune != nil {
		c.Tune(sc)
	}
	return sc, nil
}
