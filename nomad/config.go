package nomad

import (
	"errors"
	"fmt"
	"math"
	"net"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/opennomad/nomad/nomad/clock"
	"github.com/opennomad/nomad/nomad/keyring"
	"github.com/opennomad/nomad/nomad/membership"
	"github.com/opennomad/nomad/nomad/planapply"
	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/nomad/worker"
	"github.com/opennomad/nomad/scheduler"
	"github.com/opennomad/nomad/structs"
)

// Config configures a Server. Start from DefaultConfig and override what
// the agent configuration sets; NewServer validates the result.
type Config struct {
	// Region and Datacenter place the server; a request for another
	// region is sent to a server of that region.
	Region     string
	Datacenter string
	// NodeName names the server in logs and membership.
	NodeName string

	// RPCAdvertise is the address ("host:port") other agents reach this
	// server's RPC at. Status.Leader, Status.Peers, Status.Members and the
	// Raft configuration report servers by it; when empty they report the
	// server's Raft address.
	RPCAdvertise string
	// SerfAdvertise is the gossip address ("host:port") Status.Members
	// reports for this server.
	SerfAdvertise string

	// DataDir holds the Raft log, snapshots and the server's persistent
	// ID. Required unless DevMode.
	DataDir string
	// DevMode keeps everything in memory: nothing survives a restart.
	DevMode bool
	// BootstrapExpect is the number of servers to wait for before
	// bootstrapping Raft. A single server (1) bootstraps itself; larger
	// clusters are bootstrapped by the membership layer (or a test, through
	// Raft().BootstrapCluster). 0 in dev mode means 1.
	BootstrapExpect int

	// RaftConfig overrides the tuned Raft configuration when set (tests
	// shorten its timeouts). LocalID and NotifyCh are always set by the
	// server.
	RaftConfig *raft.Config
	// RaftTransport carries Raft traffic. Nil means an in-memory
	// transport, which is all a single server needs; the server owns and
	// closes the transport either way.
	RaftTransport raft.Transport
	// RaftSnapshotsRetained is how many Raft snapshots are kept on disk.
	RaftSnapshotsRetained int
	// RaftSnapshotThreshold (entries since the last snapshot),
	// RaftSnapshotInterval (how often that is checked) and
	// RaftTrailingLogs (entries kept after a snapshot, so that a lagging
	// follower can catch up from the log rather than a whole snapshot)
	// tune log compaction; zero keeps DefaultRaftConfig's.
	RaftSnapshotThreshold uint64
	RaftSnapshotInterval  time.Duration
	RaftTrailingLogs      uint64

	// Cluster is how this server reaches the others (RPC, Raft, gossip).
	Cluster ClusterConfig

	// NumSchedulers is the number of scheduling workers on this server;
	// EnabledSchedulers the eval types they take (they must include
	// "_core"). Operators may change both at run time through the worker
	// pool.
	NumSchedulers     int
	EnabledSchedulers []string
	// Schedulers build the scheduler of each job type, for the workers
	// and for Job.Plan's dry runs; scheduler.Builtin() when nil. Tests
	// inject their own schedulers here.
	Schedulers scheduler.Factories
	// JobMaxCount is the most allocations one job may ask for, summed
	// over its groups (0: structs.DefaultJobMaxCount). Register, plan and
	// validate refuse a job above it.
	JobMaxCount int
	// JobMaxSourceSize is the largest job source a registration may keep
	// with the version it makes (0: structs.DefaultJobMaxSourceSize).
	JobMaxSourceSize int
	// LeaderPausedFraction is the share of its workers a leading server
	// pauses (rounded down), to leave CPU to Raft, the broker and the plan
	// applier; in [0, 1].
	LeaderPausedFraction float64
	// PlanApplyPipeline is how many plan results the applier may have in
	// Raft at once (plan_apply_pipeline); 0 means
	// planapply.DefaultPipeline.
	PlanApplyPipeline int

	// Heartbeats (see heartbeat.go). A client is told a TTL of
	// max(MinHeartbeatTTL, nodes/MaxHeartbeatsPerSecond) plus jitter; the
	// server waits HeartbeatGrace longer before marking the node down.
	// After an election every node gets FailoverHeartbeatTTL.
	MinHeartbeatTTL        time.Duration
	MaxHeartbeatsPerSecond float64
	HeartbeatGrace         time.Duration
	FailoverHeartbeatTTL   time.Duration

	// Garbage collection: how often the leader schedules each collection
	// and how old a terminal object must be to be collected.
	EvalGCInterval       time.Duration
	EvalGCThreshold      time.Duration
	BatchEvalGCThreshold time.Duration
	JobGCInterval        time.Duration
	JobGCThreshold       time.Duration
	NodeGCInterval       time.Duration
	NodeGCThreshold      time.Duration
	DeploymentGCInterval time.Duration
	// ACLExpiredGCInterval is how often the leader removes expired ACL
	// tokens and one-time tokens.
	ACLExpiredGCInterval  time.Duration
	DeploymentGCThreshold time.Duration

	// DefaultSchedulerConfig is written to Raft by the first leader of a
	// new cluster; afterwards the stored configuration rules.
	DefaultSchedulerConfig structs.SchedulerConfiguration

	// Eval broker timings (the broker's own knobs, plus the follow-up
	// delay of evals that exhausted their deliveries and the interval of
	// the reaper that cancels superseded evals).
	EvalNackTimeout                  time.Duration
	EvalDeliveryLimit                int
	EvalNackInitialReenqueueDelay    time.Duration
	EvalNackSubsequentReenqueueDelay time.Duration
	EvalFailedFollowupBaselineDelay  time.Duration
	EvalFailedFollowupDelayRange     time.Duration
	EvalReapCancelableInterval       time.Duration

	// ACLEnabled turns the ACL system on: the ACL endpoints serve, and
	// requests are authorized by their tokens.
	ACLEnabled bool
	// AuthoritativeRegion is the region whose ACL policies, roles, auth
	// methods, binding rules and global tokens every region uses: they
	// are written there, and the leader of any other region copies them
	// with ReplicationToken (a management token of that region). Empty
	// means this server's own region.
	AuthoritativeRegion string
	ReplicationToken    string
	// ACLTokenMinExpirationTTL and ACLTokenMaxExpirationTTL bound the
	// time to live of a new token.
	ACLTokenMinExpirationTTL time.Duration
	ACLTokenMaxExpirationTTL time.Duration

	// RootKeyRotationThreshold is how old the active root key may get
	// before the leader rotates it; KeyringCheckInterval how often the
	// leader looks at the keyring (keyring.Tick).
	RootKeyRotationThreshold time.Duration
	KeyringCheckInterval     time.Duration

	// AllocUpdateBatchInterval is how long Node.UpdateAlloc gathers client
	// updates before writing them in one Raft entry.
	AllocUpdateBatchInterval time.Duration

	// MemoryLimit is the memory figure the operator gave this server, in
	// bytes (0: none). The agent also makes 90% of it the Go runtime's soft
	// memory limit; the server reports it with its live heap, and the
	// leader refuses writes that add work while any server's live heap is
	// past mempressure.HighWater of its figure.
	MemoryLimit uint64
	// MemoryCheckInterval is how often the leader gathers every server's
	// live heap.
	MemoryCheckInterval time.Duration
	// HeapLive reads this server's live heap in bytes;
	// mempressure.LiveHeap when nil. Tests inject a reading.
	HeapLive func() uint64

	// EventPublisher, when set, receives the state store's change events.
	EventPublisher state.EventPublisher

	// Logger receives the server's logs; a null logger when nil.
	Logger hclog.Logger
	// Clock drives every timer of the server (heartbeats, batching,
	// reapers, GC); the wall clock when nil.
	Clock clock.Clock
}

// DefaultConfig returns Nomad's defaults for a server in region "global",
// datacenter "dc1".
func DefaultConfig() *Config {
	return &Config{
		Region:                structs.DefaultRegion,
		Datacenter:            "dc1",
		NodeName:              "server",
		BootstrapExpect:       1,
		RaftSnapshotsRetained: 2,
		Cluster:               ClusterConfig{RPCHoldTimeout: DefaultRPCHoldTimeout},

		NumSchedulers:        runtime.NumCPU(),
		EnabledSchedulers:    worker.AllSchedulers(),
		LeaderPausedFraction: worker.DefaultLeaderPausedFraction,
		PlanApplyPipeline:    planapply.DefaultPipeline,

		MinHeartbeatTTL:        10 * time.Second,
		MaxHeartbeatsPerSecond: 50.0,
		HeartbeatGrace:         10 * time.Second,
		FailoverHeartbeatTTL:   5 * time.Minute,

		EvalGCInterval:        5 * time.Minute,
		EvalGCThreshold:       time.Hour,
		BatchEvalGCThreshold:  24 * time.Hour,
		JobGCInterval:         5 * time.Minute,
		JobGCThreshold:        4 * time.Hour,
		NodeGCInterval:        5 * time.Minute,
		NodeGCThreshold:       24 * time.Hour,
		DeploymentGCInterval:  5 * time.Minute,
		ACLExpiredGCInterval:  5 * time.Minute,
		DeploymentGCThreshold: time.Hour,

		DefaultSchedulerConfig: *structs.DefaultSchedulerConfiguration(),

		EvalNackTimeout:                  60 * time.Second,
		EvalDeliveryLimit:                3,
		EvalNackInitialReenqueueDelay:    time.Second,
		EvalNackSubsequentReenqueueDelay: 20 * time.Second,
		EvalFailedFollowupBaselineDelay:  time.Minute,
		EvalFailedFollowupDelayRange:     5 * time.Minute,
		EvalReapCancelableInterval:       5 * time.Second,

		RootKeyRotationThreshold: keyring.DefaultRotationThreshold,
		ACLTokenMinExpirationTTL: structs.DefaultACLTokenMinExpirationTTL,
		ACLTokenMaxExpirationTTL: structs.DefaultACLTokenMaxExpirationTTL,
		KeyringCheckInterval:     time.Minute,

		AllocUpdateBatchInterval: 50 * time.Millisecond,
		MemoryCheckInterval:      time.Second,
	}
}

// DefaultRaftConfig is hashicorp/raft's configuration tuned for
// throughput: the apply channel is drained in batches of up to
// MaxAppendEntries and followers are sent commits within 5 ms. With the
// library defaults (no batching, 64 entries, 50 ms) a server commits a few
// thousand entries per second; tuned, tens of thousands.
//
// MaxAppendEntries is 256, not more: every commit on every server
// allocates a batch of that many pointers before the FSM sees it (8 KB at
// 1,024, for the one or two entries a commit usually holds, 5% of all the
// bytes a server allocated per job), while the batches a busy server
// actually forms stay far below it.
//
// Followers give up on a silent leader after 500 ms (the library waits
// 1 s), which brings failover to about a second. The leader's lease keeps
// the library's 500 ms: a shorter lease makes a busy leader step down
// ("leadership lost while committing log"). raft_multiplier scales all
// three on machines too slow for them.
func DefaultRaftConfig() *raft.Config {
	c := raft.DefaultConfig()
	c.BatchApplyCh = true
	c.MaxAppendEntries = 256
	c.CommitTimeout = 5 * time.Millisecond
	c.SnapshotThreshold = 8192
	c.TrailingLogs = 10240
	c.HeartbeatTimeout = 500 * time.Millisecond
	c.ElectionTimeout = 500 * time.Millisecond
	c.LeaderLeaseTimeout = 500 * time.Millisecond
	return c
}

// ScaledRaftConfig is DefaultRaftConfig with its heartbeat, election and
// lease timeouts multiplied by m (raft_multiplier): slower failover, in
// exchange for keeping leadership on slow or overloaded machines.
func ScaledRaftConfig(m int) *raft.Config {
	c := DefaultRaftConfig()
	if m > 1 {
		c.HeartbeatTimeout *= time.Duration(m)
		c.ElectionTimeout *= time.Duration(m)
		c.LeaderLeaseTimeout *= time.Duration(m)
	}
	return c
}

// validate reports every problem of the configuration at once.
func (c *Config) validate() error {
	var errs []error
	if c.Region == "" {
		errs = append(errs, errors.New("region is required"))
	}
	if c.Datacenter == "" {
		errs = append(errs, errors.New("datacenter is required"))
	}
	if !c.DevMode && c.DataDir == "" {
		errs = append(errs, errors.New("data_dir is required unless in dev mode"))
	}
	errs = append(errs, c.Cluster.validate()...)
	for _, p := range c.SettingProblems() {
		errs = append(errs, errors.New(p.String()))
	}
	if f := c.LeaderPausedFraction; math.IsNaN(f) || f < 0 || f > 1 {
		errs = append(errs, fmt.Errorf("leader_paused_fraction must be in [0, 1], got %v", f))
	}
	for _, a := range []struct{ name, addr string }{{"rpc advertise", c.RPCAdvertise}, {"serf advertise", c.SerfAdvertise}} {
		if a.addr == "" {
			continue
		}
		if _, port, err := net.SplitHostPort(a.addr); err != nil {
			errs = append(errs, fmt.Errorf("%s address %q: %w", a.name, a.addr, err))
		} else if _, err := strconv.ParseUint(port, 10, 16); err != nil {
			errs = append(errs, fmt.Errorf("%s address %q: bad port", a.name, a.addr))
		}
	}
	positive := []struct {
		name string
		d    time.Duration
	}{
		{"eval_gc_interval", c.EvalGCInterval},
		{"node_gc_interval", c.NodeGCInterval},
		{"deployment_gc_interval", c.DeploymentGCInterval},
		{"acl_expired_gc_interval", c.ACLExpiredGCInterval},
		{"eval_nack_timeout", c.EvalNackTimeout},
		{"eval_reap_cancelable_interval", c.EvalReapCancelableInterval},
		{"alloc_update_batch_interval", c.AllocUpdateBatchInterval},
		{"root_key_rotation_threshold", c.RootKeyRotationThreshold},
		{"keyring_check_interval", c.KeyringCheckInterval},
		{"memory_check_interval", c.MemoryCheckInterval},
	}
	for _, p := range positive {
		if p.d <= 0 {
			errs = append(errs, fmt.Errorf("%s must be > 0, got %s", p.name, p.d))
		}
	}
	nonNegative := []struct {
		name string
		d    time.Duration
	}{
		{"eval_failed_followup_baseline_delay", c.EvalFailedFollowupBaselineDelay},
		{"eval_failed_followup_delay_range", c.EvalFailedFollowupDelayRange},
	}
	for _, p := range nonNegative {
		if p.d < 0 {
			errs = append(errs, fmt.Errorf("%s must be >= 0, got %s", p.name, p.d))
		}
	}
	if c.EvalDeliveryLimit < 1 {
		errs = append(errs, fmt.Errorf("eval_delivery_limit must be >= 1, got %d", c.EvalDeliveryLimit))
	}
	if err := c.DefaultSchedulerConfig.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("default_scheduler_config: %w", err))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("invalid server configuration: %w", err)
	}
	return nil
}

// ConfigProblem is one problem of a server setting: the setting, named as
// in the agent configuration's server block, and what is wrong with it.
type ConfigProblem struct {
	Key     string
	Problem string
}

func (p ConfigProblem) String() string { return p.Key + ": " + p.Problem }

// SettingProblems checks the settings an operator sets in the agent
// configuration's server block. They are checked here only: NewServer
// reports them among its own checks, and the agent reports them with
// the file and line that set each.
func (c *Config) SettingProblems() []ConfigProblem {
	var p []ConfigProblem
	add := func(key, format string, args ...any) {
		p = append(p, ConfigProblem{Key: key, Problem: fmt.Sprintf(format, args...)})
	}
	if c.BootstrapExpect < 0 {
		add("bootstrap_expect", "must be >= 0, got %d", c.BootstrapExpect)
	}
	if c.NumSchedulers < 0 {
		add("num_schedulers", "must be >= 0, got %d", c.NumSchedulers)
	}
	if !slices.Contains(c.EnabledSchedulers, structs.JobTypeCore) {
		add("enabled_schedulers", "must include %q (garbage collection), got %q", structs.JobTypeCore, c.EnabledSchedulers)
	}
	for _, name := range c.EnabledSchedulers {
		if !slices.Contains(worker.AllSchedulers(), name) {
			add("enabled_schedulers", "unknown scheduler %q (have %s)", name, strings.Join(worker.AllSchedulers(), ", "))
		}
	}
	for _, d := range []struct {
		key string
		val time.Duration
	}{
		{"min_heartbeat_ttl", c.MinHeartbeatTTL},
		{"failover_heartbeat_ttl", c.FailoverHeartbeatTTL},
		{"job_gc_interval", c.JobGCInterval},
	} {
		if d.val <= 0 {
			add(d.key, "must be a positive duration, got %s", d.val)
		}
	}
	for _, d := range []struct {
		key string
		val time.Duration
	}{
		{"heartbeat_grace", c.HeartbeatGrace},
		{"eval_gc_threshold", c.EvalGCThreshold},
		{"batch_eval_gc_threshold", c.BatchEvalGCThreshold},
		{"job_gc_threshold", c.JobGCThreshold},
		{"node_gc_threshold", c.NodeGCThreshold},
		{"deployment_gc_threshold", c.DeploymentGCThreshold},
	} {
		if d.val < 0 {
			add(d.key, "must not be negative, got %s", d.val)
		}
	}
	if c.MaxHeartbeatsPerSecond <= 0 {
		add("max_heartbeats_per_second", "must be > 0, got %g", c.MaxHeartbeatsPerSecond)
	}
	if c.PlanApplyPipeline < 0 {
		add("plan_apply_pipeline", "must be >= 1 (0 for the default), got %d", c.PlanApplyPipeline)
	}
	if c.RaftSnapshotInterval < 0 {
		add("raft_snapshot_interval", "must be >= 0, got %s", c.RaftSnapshotInterval)
	}
	if k := c.Cluster.GossipKey; k != "" {
		if _, err := membership.ParseKey(k); err != nil {
			add("encrypt", "%v (make one with 'nomad operator gossip keyring generate')", err)
		}
	}
	return p
}
