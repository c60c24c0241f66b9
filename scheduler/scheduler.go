package scheduler

import (
	"fmt"
	"math/rand"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/opennomad/nomad/structs"
)

// State is the read-only view of cluster state a scheduler plans against.
// Implementations must be immutable snapshots: every call made during one
// Process sees the same state, whatever is committed meanwhile. Objects
// returned are shared with the snapshot and with every other reader (the
// leader's drainer and deployment watcher among them) and must never be
// modified: a scheduler copies what it changes and sends the copy in its
// plan. Slices returned are the caller's to reorder, except Nodes' and
// the live list of AllocsByNodeTerminal, which are shared too.
type State interface {
	// Nodes returns every node, sorted by ID, so that the seeded shuffle
	// of the candidates depends on the set of nodes alone. The slice may
	// be shared with other readers: it is read, never reordered.
	Nodes() ([]*structs.Node, error)
	// NodeByID returns the node or nil when it does not exist.
	NodeByID(id string) (*structs.Node, error)

	// JobByID returns the job or nil when it does not exist (purged).
	JobByID(namespace, id string) (*structs.Job, error)
	// JobByIDAndVersion returns one stored version of a job, or nil.
	JobByIDAndVersion(namespace, id string, version uint64) (*structs.Job, error)

	// AllocByID returns the alloc or nil.
	AllocByID(id string) (*structs.Allocation, error)
	// AllocsByJob returns the job's allocs. With anyCreateIndex false only
	// allocs of the job instance currently registered are returned (an
	// earlier, purged job with the same ID is excluded).
	AllocsByJob(namespace, jobID string, anyCreateIndex bool) ([]*structs.Allocation, error)
	// AllocsByNode returns every alloc on the node, terminal or not.
	AllocsByNode(nodeID string) ([]*structs.Allocation, error)
	// AllocsByNodeTerminal returns the node's allocs whose TerminalStatus
	// equals terminal, sorted by ID. With false the slice may be shared
	// with other readers: it is read, never reordered nor written.
	AllocsByNodeTerminal(nodeID string, terminal bool) ([]*structs.Allocation, error)

	// EvalByID returns the eval or nil.
	EvalByID(id string) (*structs.Evaluation, error)

	// LatestDeploymentByJobID returns the job's newest deployment or nil.
	LatestDeploymentByJobID(namespace, jobID string) (*structs.Deployment, error)
	// DeploymentByID returns the deployment or nil.
	DeploymentByID(id string) (*structs.Deployment, error)

	// SchedulerConfig returns the cluster scheduler configuration; nil
	// when none was ever written (callers use the defaults).
	SchedulerConfig() (*structs.SchedulerConfiguration, error)

	// LatestIndex is the Raft index the snapshot reflects.
	LatestIndex() (uint64, error)
}

// Planner is how a scheduler acts. In a server it is the worker, which
// forwards to the leader; in tests it is a Harness that records and
// applies. Calls are made from the scheduler's own goroutine, one at a time.
type Planner interface {
	// SubmitPlan hands a plan to the plan applier and returns what was
	// committed. When the applier rejected part of the plan because the
	// scheduler's state was stale, the result carries a RefreshIndex and
	// the Planner returns a State at least that new; otherwise the
	// returned State is nil and the scheduler keeps its own.
	SubmitPlan(plan *structs.Plan) (*structs.PlanResult, State, error)

	// UpdateEval writes the evaluation being processed (its final status,
	// failed placements, queued counts, ...).
	UpdateEval(eval *structs.Evaluation) error

	// CreateEval writes a new evaluation: a blocked eval waiting for
	// capacity or a follow-up eval for delayed rescheduling.
	CreateEval(eval *structs.Evaluation) error

	// ReblockEval puts a blocked eval that still cannot place everything
	// back into the blocked set without writing a new eval.
	ReblockEval(eval *structs.Evaluation) error
}

// Scheduler processes one evaluation to completion: it plans, submits,
// retries on stale state, and finally updates the eval.
type Scheduler interface {
	Process(eval *structs.Evaluation) error
}

// Config carries what a scheduler needs besides state and planner. Time
// and randomness are injected so runs are reproducible.
type Config struct {
	Logger hclog.Logger
	// Now returns the current time; decisions such as "reschedule now or
	// later" are taken against it.
	Now func() time.Time
	// Rand seeds node shuffling and tie breaks. Nil means a source seeded
	// from the eval ID, so the same eval always shuffles the same way.
	Rand *rand.Rand
	// MaxPlacementsPerPass bounds the new allocations of one task group a
	// pass tries to place (0: DefaultMaxPlacementsPerPass); the rest stay
	// queued and a follow-up evaluation places them.
	MaxPlacementsPerPass int
	// Scratch, when set, is memory the scheduler reuses instead of
	// allocating per evaluation; nil gives each Process its own. It must
	// not be shared by schedulers that run at the same time.
	Scratch *Scratch
}

// DefaultMaxPlacementsPerPass is the default of
// Config.MaxPlacementsPerPass: above any count the benchmarks or common
// jobs use, so they place in one pass, and small enough that a pass's
// memory stays bounded whatever count a job asks for.
const DefaultMaxPlacementsPerPass = 10_000

func (c *Config) now() time.Time {
	if c == nil || c.Now == nil {
		return time.Now()
	}
	return c.Now()
}

func (c *Config) maxPlacementsPerPass() int {
	if c == nil || c.MaxPlacementsPerPass <= 0 {
		return DefaultMaxPlacementsPerPass
	}
	return c.MaxPlacementsPerPass
}

func (c *Config) logger() hclog.Logger {
	if c == nil || c.Logger == nil {
		return hclog.NewNullLogger()
	}
	return c.Logger
}

// Factory builds a scheduler for one evaluation.
type Factory func(cfg *Config, state State, planner Planner) Scheduler

// Factories maps each eval type to the factory of the scheduler that
// processes it.
type Factories map[string]Factory

// Builtin returns the schedulers of the job types: service, batch,
// system and sysbatch. The map is new on every call, so its holder may
// add to it (the server adds its garbage collector) or replace an entry
// (tests inject their own scheduler) without affecting anyone else.
func Builtin() Factories {
	return Factories{
		structs.JobTypeService:  serviceFactory,
		structs.JobTypeBatch:    batchFactory,
		structs.JobTypeSystem:   systemFactory,
		structs.JobTypeSysBatch: sysBatchFactory,
	}
}

// New returns the scheduler for the eval type.
func (f Factories) New(evalType string, cfg *Config, state State, planner Planner) (Scheduler, error) {
	factory, ok := f[evalType]
	if !ok {
		return nil, fmt.Errorf("unknown scheduler %q", evalType)
	}
	return factory(cfg, state, planner), nil
}

// NewScheduler returns the builtin scheduler for the eval type.
func NewScheduler(evalType string, cfg *Config, state State, planner Planner) (Scheduler, error) {
	return Builtin().New(evalType, cfg, state, planner)
}
