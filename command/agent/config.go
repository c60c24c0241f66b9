package agent

import (
	"os"
	"runtime"
	"time"

	"github.com/opennomad/nomad/nomad/keyring"
	"github.com/opennomad/nomad/nomad/planapply"
	"github.com/opennomad/nomad/nomad/worker"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/tlsconf"
)

// Config is an agent's configuration: defaults, then every -config file
// in order, then command-line flags, each layer overriding what it sets.
//
// The `hcl` tags name each field in agent configuration files; a field
// without a tag cannot be set from a file. Fields are plain values: the
// defaults are filled in before any file is read, so "unset" never needs
// to be told apart from zero after loading.
type Config struct {
	Name       string `hcl:"name"`
	Region     string `hcl:"region"`
	Datacenter string `hcl:"datacenter"`
	// DataDir holds Raft data and client state. Required unless DevMode.
	DataDir  string `hcl:"data_dir"`
	BindAddr string `hcl:"bind_addr"`
	// LogLevel is TRACE, DEBUG, INFO, WARN or ERROR; reloadable.
	LogLevel string `hcl:"log_level"`
	LogJSON  bool   `hcl:"log_json"`
	// EnableDebug serves /v1/agent/pprof/.
	EnableDebug bool `hcl:"enable_debug"`
	// DisableUpdateCheck is accepted for Nomad's files: this agent never
	// contacts anyone to check for updates, so there is nothing to turn
	// off.
	DisableUpdateCheck bool `hcl:"disable_update_check"`
	// LeaveOnInt and LeaveOnTerm make a server leave the region
	// gracefully (gossip leave, removal from Raft) on SIGINT or SIGTERM
	// before it shuts down. Off by default, as Nomad's: a server that
	// only stops is seen as failed and keeps its place in the Raft
	// configuration, so it rejoins as the same peer when it restarts.
	LeaveOnInt  bool `hcl:"leave_on_interrupt"`
	LeaveOnTerm bool `hcl:"leave_on_terminate"`

	Ports     Ports     `hcl:"ports,block"`
	Addresses Addresses `hcl:"addresses,block"`
	Advertise Advertise `hcl:"advertise,block"`

	Server    ServerConfig             `hcl:"server,block"`
	Client    ClientConfig             `hcl:"client,block"`
	Plugins   map[string]*PluginConfig `hcl:"plugin,block"`
	Telemetry Telemetry                `hcl:"telemetry,block"`
	ACL       ACLConfig                `hcl:"acl,block"`
	Consul    ConsulConfig             `hcl:"consul,block"`
	Vault     VaultConfig              `hcl:"vault,block"`
	// TLS is the `tls` block: HTTPS for the API, mutual TLS for the RPC
	// port.
	TLS tlsconf.Config `hcl:"tls,block"`
	// Limits is the `limits` block (config_limits.go).
	Limits Limits `hcl:"limits,block"`

	// DevMode runs a server and a client in one process with in-memory
	// state; set by -dev only.
	DevMode bool
	// Files lists the configuration files loaded, in order.
	Files []string

	// origins records where each key was last set ("server.enabled" ->
	// "server.hcl:3:3" or "flag -server"), so that validation errors of
	// the merged configuration point at the file and line to fix.
	origins map[string]string
}

// Ports are the agent's listening ports.
type Ports struct {
	HTTP int `hcl:"http"`
	RPC  int `hcl:"rpc"`
	Serf int `hcl:"serf"`
}

// Addresses override bind_addr per listener.
type Addresses struct {
	HTTP string `hcl:"http"`
	RPC  string `hcl:"rpc"`
	Serf string `hcl:"serf"`
}

// Advertise are the addresses other agents use to reach this one, as
// "host" or "host:port"; empty means the bind address (or the first
// private address when binding to 0.0.0.0).
type Advertise struct {
	HTTP string `hcl:"http"`
	RPC  string `hcl:"rpc"`
	Serf string `hcl:"serf"`
}

// ServerConfig is the `server` block.
type ServerConfig struct {
	Enabled bool `hcl:"enabled"`
	// BootstrapExpect is the number of servers to wait for before the
	// first leader election; 1 bootstraps a single server at once, 0
	// only joins an existing cluster.
	BootstrapExpect int `hcl:"bootstrap_expect"`
	// NumSchedulers is the number of scheduler workers; 0 disables
	// scheduling on this server.
	NumSchedulers     int      `hcl:"num_schedulers"`
	EnabledSchedulers []string `hcl:"enabled_schedulers"`

	HeartbeatGrace         time.Duration `hcl:"heartbeat_grace"`
	MinHeartbeatTTL        time.Duration `hcl:"min_heartbeat_ttl"`
	MaxHeartbeatsPerSecond float64       `hcl:"max_heartbeats_per_second"`
	FailoverHeartbeatTTL   time.Duration `hcl:"failover_heartbeat_ttl"`

	// JobMaxCount is the most allocations one job may ask for (the sum
	// of its groups' counts); a job asking for more is refused.
	JobMaxCount int `hcl:"job_max_count"`
	// JobMaxSourceSize is the largest job source (with its variables) a
	// server keeps with a job version, as a size ("1M", "512KiB"); a
	// larger one is dropped with a warning.
	JobMaxSourceSize string `hcl:"job_max_source_size"`

	// MemoryLimit is the memory the operator gives this server, a size
	// such as "2GB" ("" or "0": none). 90% of it becomes the Go runtime's soft
	// memory limit, and while any server's live heap is past 70% of its
	// own figure the leader answers job registrations, dispatches and
	// scalings 429 with Retry-After, until every server is under 60%.
	MemoryLimit string `hcl:"memory_limit"`
	// heapLive replaces the server's reading of its live heap (tests).
	heapLive func() uint64

	EvalGCThreshold       time.Duration `hcl:"eval_gc_threshold"`
	BatchEvalGCThreshold  time.Duration `hcl:"batch_eval_gc_threshold"`
	JobGCInterval         time.Duration `hcl:"job_gc_interval"`
	JobGCThreshold        time.Duration `hcl:"job_gc_threshold"`
	NodeGCThreshold       time.Duration `hcl:"node_gc_threshold"`
	DeploymentGCThreshold time.Duration `hcl:"deployment_gc_threshold"`

	// DefaultSchedulerConfig seeds the cluster's scheduler configuration
	// when the cluster is first bootstrapped; later changes go through
	// the operator API.
	DefaultSchedulerConfig SchedulerConfigBlock `hcl:"default_scheduler_config,block"`

	ServerJoin ServerJoin `hcl:"server_join,block"`
	// RetryJoin and StartJoin are the older spellings of
	// server_join.retry_join and server_join.start_join; they are added to
	// the server_join lists.
	RetryJoin []string `hcl:"retry_join"`
	StartJoin []string `hcl:"start_join"`

	// PlanApplyPipeline is the number of plan results the leader's
	// applier keeps in Raft at once (it judges the next plan meanwhile);
	// planapply.DefaultPipeline unless set. Nomad's default is 1.
	PlanApplyPipeline int `hcl:"plan_apply_pipeline"`
	// RaftProtocol must be 3, the only version spoken.
	RaftProtocol int `hcl:"raft_protocol"`
	// RaftMultiplier scales Raft's heartbeat, election and lease
	// timeouts (1 to 10; 0 means 1): raise it on slow or busy machines
	// that lose leadership, at the cost of slower failover.
	RaftMultiplier int `hcl:"raft_multiplier"`
	// RaftSnapshotThreshold, RaftSnapshotInterval and RaftTrailingLogs
	// tune log compaction: a snapshot is taken when this many entries
	// were written since the last one (checked every interval), and this
	// many entries are kept after it for followers that lag. 0 keeps the
	// server's default.
	RaftSnapshotThreshold int           `hcl:"raft_snapshot_threshold"`
	RaftSnapshotInterval  time.Duration `hcl:"raft_snapshot_interval"`
	RaftTrailingLogs      int           `hcl:"raft_trailing_logs"`

	EnableEventBroker bool `hcl:"enable_event_broker"`
	EventBufferSize   int  `hcl:"event_buffer_size"`

	// RootKeyRotationThreshold is how old the active root key may get
	// before the leader rotates it.
	RootKeyRotationThreshold time.Duration `hcl:"root_key_rotation_threshold"`
	// EncryptKey (encrypt) is the gossip encryption key, base64 of 16, 24
	// or 32 bytes. It only seeds <data_dir>/server/serf.keyring on first
	// start; after that the keyring file holds the keys. Never shown by
	// /v1/agent/self.
	EncryptKey string `hcl:"encrypt" json:"-"`
	// AuthoritativeRegion is the region whose ACL policies, roles, auth
	// methods, binding rules and global tokens every region uses; the
	// leader of any other region copies them with acl.replication_token.
	// Empty: this agent's own region.
	AuthoritativeRegion string `hcl:"authoritative_region"`
	// OIDCIssuer, when set, is the issuer of workload identities and
	// turns on /.well-known/openid-configuration.
	OIDCIssuer string `hcl:"oidc_issuer"`
}

// SchedulerConfigBlock is `server.default_scheduler_config`.
type SchedulerConfigBlock struct {
	SchedulerAlgorithm            string `hcl:"scheduler_algorithm"`
	MemoryOversubscriptionEnabled bool   `hcl:"memory_oversubscription_enabled"`
	RejectJobRegistration         bool   `hcl:"reject_job_registration"`
	PauseEvalBroker               bool   `hcl:"pause_eval_broker"`
	NodeLimitForFeasibilityChecks int    `hcl:"node_limit_for_feasibility_checks"`
	// EvalBacklogLimit is structs.SchedulerConfiguration's; 0 is no
	// limit. Not Nomad's.
	EvalBacklogLimit int                   `hcl:"eval_backlog_limit"`
	PreemptionConfig PreemptionConfigBlock `hcl:"preemption_config,block"`
}

// PreemptionConfigBlock is `default_scheduler_config.preemption_config`.
type PreemptionConfigBlock struct {
	SystemSchedulerEnabled   bool `hcl:"system_scheduler_enabled"`
	SysBatchSchedulerEnabled bool `hcl:"sysbatch_scheduler_enabled"`
	BatchSchedulerEnabled    bool `hcl:"batch_scheduler_enabled"`
	ServiceSchedulerEnabled  bool `hcl:"service_scheduler_enabled"`
}

// SchedulerConfiguration returns the block as the structs value the server
// bootstraps Raft with.
func (b *SchedulerConfigBlock) SchedulerConfiguration() *structs.SchedulerConfiguration {
	return &structs.SchedulerConfiguration{
		SchedulerAlgorithm:            b.SchedulerAlgorithm,
		MemoryOversubscriptionEnabled: b.MemoryOversubscriptionEnabled,
		RejectJobRegistration:         b.RejectJobRegistration,
		PauseEvalBroker:               b.PauseEvalBroker,
		NodeLimitForFeasibilityChecks: uint(b.NodeLimitForFeasibilityChecks),
		EvalBacklogLimit:              uint(b.EvalBacklogLimit),
		PreemptionConfig: structs.PreemptionConfig{
			SystemSchedulerEnabled:   b.PreemptionConfig.SystemSchedulerEnabled,
			SysBatchSchedulerEnabled: b.PreemptionConfig.SysBatchSchedulerEnabled,
			BatchSchedulerEnabled:    b.PreemptionConfig.BatchSchedulerEnabled,
			ServiceSchedulerEnabled:  b.PreemptionConfig.ServiceSchedulerEnabled,
		},
	}
}

// ServerJoin is how an agent finds the servers: `server_join` in both the
// server and the client block.
type ServerJoin struct {
	// StartJoin addresses are tried once at startup.
	StartJoin []string `hcl:"start_join"`
	// RetryJoin addresses are retried every RetryInterval until one
	// answers, at most RetryMax times (0: forever).
	RetryJoin     []string      `hcl:"retry_join"`
	RetryInterval time.Duration `hcl:"retry_interval"`
	RetryMax      int           `hcl:"retry_max"`
}

// ClientConfig is the `client` block.
type ClientConfig struct {
	Enabled bool `hcl:"enabled"`
	// StateDir and AllocDir default to <data_dir>/client and
	// <data_dir>/alloc.
	StateDir string `hcl:"state_dir"`
	AllocDir string `hcl:"alloc_dir"`
	// Servers are the RPC addresses ("host:4647") of servers to register
	// with.
	Servers    []string   `hcl:"servers"`
	ServerJoin ServerJoin `hcl:"server_join,block"`

	NodeClass string            `hcl:"node_class"`
	NodePool  string            `hcl:"node_pool"`
	Meta      map[string]string `hcl:"meta"`
	Options   map[string]string `hcl:"options"`
	Reserved  Reserved          `hcl:"reserved,block"`

	NetworkInterface string `hcl:"network_interface"`
	// CPUTotalCompute and MemoryTotalMB override the fingerprinted totals
	// when non-zero.
	CPUTotalCompute int `hcl:"cpu_total_compute"`
	MemoryTotalMB   int `hcl:"memory_total_mb"`
	MinDynamicPort  int `hcl:"min_dynamic_port"`
	MaxDynamicPort  int `hcl:"max_dynamic_port"`

	// MaxKillTimeout caps any task's kill_timeout.
	MaxKillTimeout time.Duration `hcl:"max_kill_timeout"`
	GCInterval     time.Duration `hcl:"gc_interval"`
	GCMaxAllocs    int           `hcl:"gc_max_allocs"`
	// DisableRemoteExec refuses nomad alloc exec into this client's
	// tasks, whatever the caller's token allows.
	DisableRemoteExec bool `hcl:"disable_remote_exec"`

	// HostVolumes are the `host_volume "<name>"` blocks: directories of
	// this host that jobs may mount by name.
	HostVolumes map[string]*HostVolumeConfig `hcl:"host_volume,block"`
	// HostVolumesDir is where the built-in mkdir plugin makes dynamic
	// host volumes; <data_dir>/host_volumes by default.
	HostVolumesDir string `hcl:"host_volumes_dir"`
}

// HostVolumeConfig is one `client.host_volume "<name>"` block.
type HostVolumeConfig struct {
	Path     string `hcl:"path"`
	ReadOnly bool   `hcl:"read_only"`
}

// Reserved is the part of the node kept from tasks: `client.reserved`.
type Reserved struct {
	CPU      int `hcl:"cpu"`
	MemoryMB int `hcl:"memory"`
	DiskMB   int `hcl:"disk"`
	// ReservedPorts is a list of ports and ranges, e.g. "22,80,8000-8010".
	ReservedPorts string `hcl:"reserved_ports"`
}

// PluginConfig is a `plugin "<driver>"` block.
type PluginConfig struct {
	Args []string `hcl:"args"`
	// Config is the driver's own configuration, free-form.
	Config map[string]any `hcl:"config,block"`
}

// Telemetry is the `telemetry` block.
type Telemetry struct {
	// PrometheusMetrics enables /v1/metrics?format=prometheus.
	PrometheusMetrics bool `hcl:"prometheus_metrics"`
	// CollectionInterval is how often runtime and node gauges are sampled.
	CollectionInterval time.Duration `hcl:"collection_interval"`
	// DisableHostname stops prefixing gauge names with the host name.
	DisableHostname bool `hcl:"disable_hostname"`
	// InMemoryCollectionInterval and InMemoryRetentionPeriod size the
	// in-memory sink behind /v1/metrics.
	InMemoryCollectionInterval time.Duration `hcl:"in_memory_collection_interval"`
	InMemoryRetentionPeriod    time.Duration `hcl:"in_memory_retention_period"`
	PublishAllocationMetrics   bool          `hcl:"publish_allocation_metrics"`
	PublishNodeMetrics         bool          `hcl:"publish_node_metrics"`
}

// ACLConfig is the `acl` block. enabled turns the ACL system on: the
// ACL endpoints serve and tokens are required. A client-only agent keeps
// the tokens it resolved through its servers for TokenTTL and their
// policies for PolicyTTL (roles are read with the token). The role cache
// lifetime is read so that Nomad's files load. ReplicationToken is the
// management token of the authoritative region (server.authoritative_region)
// a server of another region copies the shared ACL objects with.
type ACLConfig struct {
	Enabled          bool          `hcl:"enabled"`
	TokenTTL         time.Duration `hcl:"token_ttl"`
	PolicyTTL        time.Duration `hcl:"policy_ttl"`
	RoleTTL          time.Duration `hcl:"role_ttl"`
	ReplicationToken string        `hcl:"replication_token"`
	// TokenMinExpirationTTL and TokenMaxExpirationTTL bound the time to
	// live of new tokens (default 1m and 24h).
	TokenMinExpirationTTL time.Duration `hcl:"token_min_expiration_ttl"`
	TokenMaxExpirationTTL time.Duration `hcl:"token_max_expiration_ttl"`
}

// ConsulConfig is the `consul` block. There is no Consul integration:
// services register with the built-in provider only. The block is read so
// that Nomad's files load; an agent given one says at start-up that it is
// ignored.
type ConsulConfig struct {
	Address    string `hcl:"address"`
	Auth       string `hcl:"auth"`
	Token      string `hcl:"token"`
	SSL        bool   `hcl:"ssl"`
	ServerAuto bool   `hcl:"server_auto_join"`
	ClientAuto bool   `hcl:"client_auto_join"`
}

// set reports whether the block asks for anything.
func (c ConsulConfig) set() bool { return c != ConsulConfig{} }

// VaultConfig is the `vault` block. There is no Vault integration, so it
// may only say `enabled = false`.
type VaultConfig struct {
	Enabled bool   `hcl:"enabled"`
	Address string `hcl:"address"`
}

// Default listening ports.
const (
	DefaultHTTPPort = 4646
	DefaultRPCPort  = 4647
	DefaultSerfPort = 4648
)

// DefaultConfig returns Nomad's defaults.
func DefaultConfig() *Config {
	name, _ := os.Hostname()
	return &Config{
		Name:       name,
		Region:     structs.DefaultRegion,
		Datacenter: "dc1",
		BindAddr:   "0.0.0.0",
		LogLevel:   "INFO",
		Ports:      Ports{HTTP: DefaultHTTPPort, RPC: DefaultRPCPort, Serf: DefaultSerfPort},
		Limits:     DefaultLimits(),
		Server: ServerConfig{
			NumSchedulers:          runtime.NumCPU(),
			EnabledSchedulers:      worker.AllSchedulers(),
			HeartbeatGrace:         10 * time.Second,
			MinHeartbeatTTL:        10 * time.Second,
			MaxHeartbeatsPerSecond: 50.0,
			JobMaxCount:            structs.DefaultJobMaxCount,
			JobMaxSourceSize:       "1M",
			FailoverHeartbeatTTL:   5 * time.Minute,
			EvalGCThreshold:        time.Hour,
			BatchEvalGCThreshold:   24 * time.Hour,
			JobGCInterval:          5 * time.Minute,
			JobGCThreshold:         4 * time.Hour,
			NodeGCThreshold:        24 * time.Hour,
			DeploymentGCThreshold:  time.Hour,
			DefaultSchedulerConfig: SchedulerConfigBlock{
				SchedulerAlgorithm: structs.SchedulerAlgorithmBinpack,
				PreemptionConfig:   PreemptionConfigBlock{SystemSchedulerEnabled: true},
				EvalBacklogLimit:   structs.DefaultEvalBacklogLimit,
			},
			ServerJoin:        ServerJoin{RetryInterval: 30 * time.Second},
			PlanApplyPipeline: planapply.DefaultPipeline,
			RaftProtocol:      3,
			EnableEventBroker: true,
			EventBufferSize:   100,

			RootKeyRotationThreshold: keyring.DefaultRotationThreshold,
		},
		Client: ClientConfig{
			NodePool:       structs.NodePoolDefault,
			ServerJoin:     ServerJoin{RetryInterval: 30 * time.Second},
			MinDynamicPort: 20000,
			MaxDynamicPort: 32000,
			MaxKillTimeout: 30 * time.Second,
			GCInterval:     time.Minute,
			GCMaxAllocs:    50,
		},
		Plugins: map[string]*PluginConfig{},
		Telemetry: Telemetry{
			CollectionInterval:         time.Second,
			InMemoryCollectionInterval: 10 * time.Second,
			InMemoryRetentionPeriod:    time.Minute,
		},
		origins: map[string]string{},
	}
}

// DevConfig returns the -dev defaults: a server and a client in one
// process on 127.0.0.1, bootstrapping alone, with in-memory state, the
// raw_exec driver enabled, DEBUG logs and the profiler on.
func DevConfig() *Config {
	c := DefaultConfig()
	c.DevMode = true
	c.BindAddr = "127.0.0.1"
	c.LogLevel = "DEBUG"
	c.EnableDebug = true
	// As Nomad's dev agent: /v1/metrics?format=prometheus answers.
	c.Telemetry.PrometheusMetrics = true
	c.Server.Enabled = true
	c.Server.BootstrapExpect = 1
	c.Client.Enabled = true
	c.Plugins["raw_exec"] = &PluginConfig{Config: map[string]any{"enabled": true}}
	return c
}

// PluginEnabled reports whether the plugin block of driver sets
// `enabled = true` in its config.
func (c *Config) PluginEnabled(driver string) bool {
	p := c.Plugins[driver]
	if p == nil {
		return false
	}
	on, _ := p.Config["enabled"].(bool)
	return on
}

// origin returns where key was last set, or "" for a default.
func (c *Config) origin(key string) string {
	return c.origins[key]
}

func (c *Config) setOrigin(key, where string) {
	if c.origins == nil {
		c.origins = map[string]string{}
	}
	c.origins[key] = where
}
