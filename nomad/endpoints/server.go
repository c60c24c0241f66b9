package endpoints

import (
	"context"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/opennomad/nomad/acl"
	"github.com/opennomad/nomad/nomad/clock"
	"github.com/opennomad/nomad/nomad/evaltrace"
	"github.com/opennomad/nomad/nomad/periodic"
	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/nomad/worker"
	"github.com/opennomad/nomad/scheduler"
	"github.com/opennomad/nomad/structs"
)

// Server is what the endpoints need of the server they run in. Package
// nomad implements it; every method must be safe for concurrent use, as
// many requests are served at once. Each method's comment is the contract
// an implementation keeps; the endpoints rely on nothing else.
type Server interface {
	// Forward decides where a request is served; every endpoint calls it
	// first. It returns false when this server must serve the request
	// itself: it leads (and its leadership is established), or the
	// request is a read that accepts stale data. Otherwise it returns
	// true with the outcome of serving the request elsewhere: the reply
	// is filled by the leader (or, for a request naming another region,
	// by a server of that region), or the error says why that failed (a
	// request for a region no alive server of which is known fails with
	// structs.ErrNoRegionPath; no leader within the hold timeout with
	// structs.ErrNoLeader). method is the RPC's name ("Job.Register"),
	// info and args the request (usually the same value), reply the
	// endpoint's reply.
	Forward(method string, info structs.RPCInfo, args, reply interface{}) (bool, error)

	// State returns this server's state store. Reads are as fresh as the
	// entries this server has applied.
	State() *state.StateStore

	// RaftApply replicates one entry of type t holding msg and returns
	// once this server's FSM applied it, with the FSM's response and the
	// entry's index. A refused entry returns the FSM's error; losing
	// leadership meanwhile returns an error of kind structs.ErrNoLeader.
	RaftApply(t structs.MessageType, msg interface{}) (interface{}, uint64, error)

	// Clock is the server's clock: every timestamp an endpoint writes and
	// every wait it times is read from it.
	Clock() clock.Clock

	// ShutdownContext ends when the server starts shutting down; waits
	// (blocking queries, Eval.Dequeue) end with it.
	ShutdownContext() context.Context

	// SetQueryMeta records in meta how fresh this server's answer is:
	// whether it knows a leader and when it last heard from it (zero on
	// the leader). It leaves the index alone.
	SetQueryMeta(meta *structs.QueryMeta)

	// Logger is the server's logger.
	Logger() hclog.Logger

	// Settings returns the server's configuration as the endpoints read
	// it, current at the call.
	Settings() Settings

	// ResolveACL returns what the token with secretID may do: everything
	// while ACLs are off; structs.ErrPermissionDenied for a secret no
	// token has, structs.ErrACLTokenExpired for an expired one. Methods
	// whose rule is Self, or that filter what they answer, use it.
	ResolveACL(secretID string) (*acl.ACL, error)

	// IsEstablishedLeader reports whether this server leads and has
	// taken up its duties (broker enabled, heartbeat timers armed).
	IsEstablishedLeader() bool

	// EvalBroker returns the leader's eval broker, nil when this server
	// runs none. The broker refuses calls with structs.ErrBrokerDisabled
	// while this server does not lead (or the operator paused it).
	EvalBroker() EvalBroker
	// EvalTrace returns the timeline of the evaluations this server
	// handled as leader; nil records and answers nothing.
	EvalTrace() *evaltrace.Trace

	// BlockedEvals returns the leader's tracker of blocked evals, nil
	// when this server runs none.
	BlockedEvals() BlockedEvals

	// EvalBacklog is the evaluations the leader holds waiting for a
	// worker or for capacity: its broker's ready evals, across every
	// scheduler, plus its blocked evals. 0 on a server that runs neither.
	EvalBacklog() int
	// MemoryPressure reports whether the leader refuses writes that add
	// work because a server's live heap is past the high-water mark of
	// its memory figure, with the fullest server's reading.
	MemoryPressure() (bool, structs.ServerMemory)

	// EnqueuePlan queues a plan for the leader's plan applier and returns
	// the handle its answer comes through: structs.ErrPlanQueueDisabled
	// when this server runs no plan queue or does not lead.
	EnqueuePlan(plan *structs.Plan) (PlanFuture, error)

	// KickCancelableReaper wakes the leader's reaper of superseded evals
	// without blocking; a no-op while it is not running.
	KickCancelableReaper()

	// KickKeyring has the leader look at the keyring now, without
	// blocking: after a full rotation it seals the variables of the
	// rekeying keys again with the active one.
	KickKeyring()

	// EnqueueCoreJob puts a core (garbage collection) eval of the kind
	// (structs.CoreJob*) into the leader's broker, without a Raft write,
	// and returns it; structs.ErrBrokerDisabled when the broker is off.
	EnqueueCoreJob(kind string) (*structs.Evaluation, error)

	// SchedulerConfigChanged applies the stored scheduler configuration
	// to the leader's components (pausing or resuming the broker); it
	// does nothing on a server that is not the established leader.
	SchedulerConfigChanged() error

	// ResetHeartbeat (re)arms the node's heartbeat timer on the leader
	// and returns the TTL the node must heartbeat within.
	ResetHeartbeat(nodeID string) (time.Duration, error)

	// ClearHeartbeat disarms the node's heartbeat timer, if any.
	ClearHeartbeat(nodeID string)

	// HeartbeatCount is the number of nodes with an armed heartbeat
	// timer.
	HeartbeatCount() int

	// BatchAllocUpdates writes client alloc updates and the evals they
	// cause in a Raft entry shared with the other updates that arrive
	// within the server's batch interval (one eval per job per entry),
	// and returns the entry's index once it is applied.
	BatchAllocUpdates(updates []*structs.Allocation, evals []*structs.Evaluation) (uint64, error)

	// LeaderRPCAddr is the RPC address ("host:port") of the leader, ""
	// when no leader is known.
	LeaderRPCAddr() string

	// ClientServers are the alive servers of the region as clients should
	// see them.
	ClientServers() []*structs.NodeServerInfo

	// RaftPeers are the RPC addresses of the servers of the Raft
	// configuration, voters and non-voters.
	RaftPeers() ([]string, error)

	// RaftConfiguration fills reply with the Raft configuration: every
	// server with its node name, RPC address and suffrage, and which one
	// leads.
	RaftConfiguration(reply *structs.RaftConfigurationResponse) error

	// RemoveRaftPeer removes the server with Raft ID id from the Raft
	// configuration and returns the index of the change; an error of
	// kind structs.ErrInvalid when no server has the ID.
	RemoveRaftPeer(id string) (uint64, error)

	// ServerHealth judges every server of the Raft configuration (the
	// leader's view: call it on the leader).
	ServerHealth() (*structs.OperatorHealthReply, error)

	// LocalRaftStats is this server's view of its own Raft log.
	LocalRaftStats() structs.RaftStats
	// LocalMemory is this server's live heap and memory figure.
	LocalMemory() structs.ServerMemory

	// TransferLeadership hands leadership to the server with Raft ID id,
	// or at address (one of them may be given), or to the most
	// up-to-date follower when both are empty; an error of kind
	// structs.ErrInvalid when no voter matches.
	TransferLeadership(id, address string) error

	// Members are the servers this server knows as gossip members, with
	// their status; only itself when it runs no gossip.
	Members() []*structs.ServerMember

	// Regions are the regions with an alive server in gossip, sorted;
	// this server's own is always one of them.
	Regions() []string

	// Deployments is the leader's deployment watcher, which carries out
	// an operator's actions on a roll-out with its own rules.
	Deployments() DeploymentWatcher

	// VariableLocks is the leader's timers of variable locks, nil on a
	// server that does not lead.
	VariableLocks() VariableLocks

	// ForwardToServer decides which server serves a request meant for
	// one server (its scheduler workers): it returns false when serverID
	// is "" or names this server, by member name ("<node>.<region>") or
	// node name. Otherwise it returns true with the outcome of serving the
	// request on the server of that name in the cluster, marked
	// forwarded; a name no known server has, or a forwarded request that
	// reaches a server of another name, fails with an error of kind
	// structs.ErrNotFound.
	ForwardToServer(method, serverID string, info structs.RPCInfo, args, reply interface{}) (bool, error)

	// MemberName is this server's gossip member name ("<node>.<region>").
	MemberName() string

	// SchedulerWorkers is this server's pool of scheduler workers.
	SchedulerWorkers() *worker.Pool

	// ForcePeriodicRun launches a child of the periodic job now through
	// the leader's periodic dispatcher.
	ForcePeriodicRun(namespace, jobID string) (*periodic.Launched, error)
}

// Settings are the parts of the server's configuration the endpoints
// read.
type Settings struct {
	// Region, Datacenter and NodeName name this server.
	Region     string
	Datacenter string
	NodeName   string
	// JobMaxCount bounds the allocations of a job (0: the default).
	JobMaxCount int
	// JobMaxSourceSize bounds a kept job source (0: the default).
	JobMaxSourceSize int
	// Schedulers build the scheduler of each job type (Job.Plan's dry
	// runs).
	Schedulers scheduler.Factories
	// ACLEnabled turns the ACL system on; the ACL endpoints refuse every
	// call but ACL.WhoAmI while it is off.
	ACLEnabled bool
	// AuthoritativeRegion is where ACL policies, roles, auth methods,
	// binding rules and global tokens are written: the configured one,
	// else Region.
	AuthoritativeRegion string
	// ACLTokenMinExpirationTTL and ACLTokenMaxExpirationTTL bound a new
	// token's time to live (0: the defaults).
	ACLTokenMinExpirationTTL time.Duration
	ACLTokenMaxExpirationTTL time.Duration
	// DataDir is the server's data directory, "" in dev mode; the ACL
	// bootstrap reset file lives there.
	DataDir string
}

// EvalBroker is the leader's queue of evaluations as the Eval and Plan
// endpoints use it (broker.Broker implements it).
type EvalBroker interface {
	// Dequeue waits until ctx ends for the highest-priority ready eval of
	// one of the schedulers and returns it with its delivery token.
	Dequeue(ctx context.Context, schedulers []string, timeout time.Duration) (*structs.Evaluation, string, error)
	// EnabledNotify returns a channel closed once the broker is enabled.
	EnabledNotify() <-chan struct{}
	// Ack and Nack end the delivery of an eval held under token.
	Ack(evalID, token string) error
	Nack(evalID, token string) error
	// OutstandingReset restarts the nack timer of a delivery.
	OutstandingReset(evalID, token string) error
	// PauseNackTimeout and ResumeNackTimeout stop and restart the nack
	// timer of a delivery while its plan waits for the applier.
	PauseNackTimeout(evalID, token string) error
	ResumeNackTimeout(evalID, token string) error
}

// BlockedEvals is the leader's set of blocked evals (broker.BlockedEvals).
type BlockedEvals interface {
	// Reblock re-tracks the blocked eval a worker holds under token.
	Reblock(eval *structs.Evaluation, token string)
}

// PlanFuture is a submitter's handle on a queued plan.
type PlanFuture interface {
	// Wait blocks until the applier responds and returns its answer.
	Wait() (*structs.PlanResult, error)
}

// DeploymentWatcher carries out operators' actions on deployments
// (deploymentwatcher.Watcher).
type DeploymentWatcher interface {
	Promote(req *structs.DeploymentPromoteRequest) (*structs.DeploymentUpdateResponse, error)
	Fail(req *structs.DeploymentFailRequest) (*structs.DeploymentUpdateResponse, error)
	Pause(req *structs.DeploymentPauseRequest) (*structs.DeploymentUpdateResponse, error)
	SetAllocHealth(req *structs.DeploymentAllocHealthRequest) (*structs.DeploymentUpdateResponse, error)
}

// Endpoint is one RPC receiver and the name its methods are served under
// ("Job": "Job.Register", ...). Every exported method of Receiver has
// net/rpc's shape, func(args A, reply *R) error.
type Endpoint struct {
	Name     string
	Receiver interface{}
	// Rules says what each method needs of its caller's token; the
	// registry checks it before the method runs.
	Rules Rules
}

// All returns every endpoint, served by srv.
func All(srv Server) []Endpoint {
	return []Endpoint{
		{"Job", &Job{srv: srv}, jobRules},
		{"Node", &Node{srv: srv}, nodeRules},
		{"Eval", &Eval{srv: srv}, evalRules},
		{"Plan", &Plan{srv: srv}, planRules},
		{"Alloc", &Alloc{srv: srv}, allocRules},
		{"Deployment", &Deployment{srv: srv}, deploymentRules},
		{"Periodic", &Periodic{srv: srv}, periodicRules},
		{"Operator", &Operator{srv: srv}, operatorRules},
		{"Status", &Status{srv: srv}, statusRules},
		{"Region", &Region{srv: srv}, regionRules},
		{"System", &System{srv: srv}, systemRules},
		{"Keyring", &Keyring{srv: srv}, keyringRules},
		{"ACL", &ACL{srv: srv, pending: newPendingLogins()}, aclRules},
		{"Namespace", &Namespace{srv: srv}, namespaceRules},
		{"ServiceRegistration", &ServiceRegistration{srv: srv}, serviceRegistrationRules},
		{"HostVolume", &HostVolume{srv: srv}, hostVolumeRules},
		{"NodePool", &NodePool{srv: srv}, nodePoolRules},
		{"Variables", &Variables{srv: srv}, variablesRules},
		{"Search", &Search{srv: srv}, searchRules},
		{"Scaling", &Scaling{srv: srv}, scalingRules},
		{"Workers", &Workers{srv: srv}, workersRules},
	}
}
