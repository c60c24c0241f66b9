package fsm

import (
	"fmt"
	"io"
	"slices"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-metrics"
	"github.com/hashicorp/raft"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// EvalBroker is what the FSM needs of the leader's eval broker
// (broker.Broker): somewhere to put evals that are ready to be scheduled.
//
// Enqueue is called from Raft's FSM goroutine after the eval is committed
// to the state store, on every server; only the leader's broker is enabled,
// so followers ignore it. It must not block and must not modify the eval,
// which is shared with the state store.
type EvalBroker interface {
	Enqueue(eval *structs.Evaluation)
}

// BlockedEvals is what the FSM needs of the leader's blocked-evals
// tracker (broker.BlockedEvals). Like EvalBroker its methods are called from
// the FSM goroutine after each commit, on every server, are no-ops unless
// the tracker is enabled (the leader), must not block, and must not modify
// the evals they are given.
type BlockedEvals interface {
	// Block tracks an eval written with status blocked.
	Block(eval *structs.Evaluation)
	// Untrack forgets the job's blocked eval: an eval of the job completed
	// with everything placed.
	Untrack(jobID, namespace string)
	// Unblock releases evals waiting for capacity in the computed node
	// class: a node of it became ready or eligible at index.
	Unblock(computedClass string, index uint64)
	// UnblockClassAndQuota is Unblock for capacity freed by an allocation
	// that finished (quota is "" without quotas).
	UnblockClassAndQuota(computedClass, quota string, index uint64)
	// UnblockNode releases system-job evals blocked on the node.
	UnblockNode(nodeID string, index uint64)
}

// Config configures an FSM.
type Config struct {
	// EvalBroker and BlockedEvals receive the FSM's side effects; either
	// may be nil (a server without a scheduling pipeline, a tool reading a
	// snapshot).
	EvalBroker   EvalBroker
	BlockedEvals BlockedEvals
	// StateConfig configures every state store the FSM creates (the
	// first, and each one a snapshot restore builds).
	StateConfig state.Config
	Logger      hclog.Logger
	// OnRestore, when set, is called after a snapshot restore replaced the
	// state, on the FSM goroutine: the leader rebuilds its in-memory
	// components from the new state. It must not write through Raft.
	OnRestore func()
}

// FSM is the replicated state machine: Raft hands it every committed log
// entry, in order, on every server, and it applies each to the state
// store. Entries that carry several changes (a job and its eval, a plan's
// allocations and preemption evals) apply in one state transaction, so
// readers see all of an entry or none of it.
//
// After an entry commits, the FSM tells the leader's broker and
// blocked-evals tracker what changed: new pending evals, newly blocked
// ones, capacity that appeared. Those calls are made on every server and
// ignored where the components are disabled, which keeps Apply a pure
// function of the log on followers.
//
// Raft hands over the entries it commits together through ApplyBatch (see
// batch.go), which applies runs of them in one state transaction with
// the result of applying them one by one through Apply.
//
// Raft calls Apply, ApplyBatch, Snapshot and Restore from a single goroutine;
// FSMSnapshot.Persist runs concurrently with Apply. State may be called
// from any goroutine.
type FSM struct {
	logger      hclog.Logger
	stateConfig state.Config
	broker      EvalBroker
	blocked     BlockedEvals
	onRestore   func()

	// store is swapped whole by Restore; readers load it per request.
	store atomic.Pointer[state.StateStore]
}

// applyFunc applies the msgpack body of one log entry at index and
// returns the value Raft hands back to the writer: nil, an error, or a
// type-specific result.
type applyFunc func(f *FSM, body []byte, index uint64) interface{}

// appliers maps each supported message type to its apply function; the
// batchable types (batch.go) join it at init. Types numbered in structs
// but missing here are refused.
var appliers = map[structs.MessageType]applyFunc{
	structs.NodeRegisterRequestType:                        (*FSM).applyNodeRegister,
	structs.NodeDeregisterRequestType:                      (*FSM).applyNodeDeregister,
	structs.NodeBatchDeregisterRequestType:                 (*FSM).applyNodeDeregister,
	structs.NodeUpdateStatusRequestType:                    (*FSM).applyNodeUpdateStatus,
	structs.NodeUpdateDrainRequestType:                     (*FSM).applyNodeUpdateDrain,
	structs.BatchNodeUpdateDrainRequestType:                (*FSM).applyBatchNodeUpdateDrain,
	structs.NodeUpdateEligibilityRequestType:               (*FSM).applyNodeUpdateEligibility,
	structs.JobBatchDeregisterRequestType:                  (*FSM).applyJobBatchDeregister,
	structs.JobStabilityRequestType:                        (*FSM).applyJobStability,
	structs.EvalDeleteRequestType:                          (*FSM).applyEvalDelete,
	structs.AllocUpdateRequestType:                         (*FSM).applyDeprecatedAllocUpdate,
	structs.ReconcileJobSummariesRequestType:               (*FSM).applyReconcileJobSummaries,
	structs.DeploymentDeleteRequestType:                    (*FSM).applyDeploymentDelete,
	structs.SchedulerConfigRequestType:                     (*FSM).applySchedulerConfig,
	structs.AutopilotRequestType:                           (*FSM).applyAutopilotConfig,
	structs.ClusterMetadataRequestType:                     (*FSM).applyClusterMetadata,
	structs.RootKeyUpsertRequestType:                       (*FSM).applyRootKeyUpsert,
	structs.RootKeyDeleteRequestType:                       (*FSM).applyRootKeyDelete,
	structs.ACLPoliciesUpsertRequestType:                   (*FSM).applyACLPoliciesUpsert,
	structs.ACLPoliciesDeleteRequestType:                   (*FSM).applyACLPoliciesDelete,
	structs.ACLTokensUpsertRequestType:                     (*FSM).applyACLTokensUpsert,
	structs.ACLTokensDeleteRequestType:                     (*FSM).applyACLTokensDelete,
	structs.ACLTokenBootstrapRequestType:                   (*FSM).applyACLTokenBootstrap,
	structs.ACLRolesUpsertRequestType:                      (*FSM).applyACLRolesUpsert,
	structs.ACLRolesDeleteRequestType:                      (*FSM).applyACLRolesDelete,
	structs.ACLAuthMethodsUpsertRequestType:                (*FSM).applyACLAuthMethodsUpsert,
	structs.ACLAuthMethodsDeleteRequestType:                (*FSM).applyACLAuthMethodsDelete,
	structs.ACLBindingRulesUpsertRequestType:               (*FSM).applyACLBindingRulesUpsert,
	structs.ACLBindingRulesDeleteRequestType:               (*FSM).applyACLBindingRulesDelete,
	structs.OneTimeTokenUpsertRequestType:                  (*FSM).applyOneTimeTokenUpsert,
	structs.OneTimeTokenDeleteRequestType:                  (*FSM).applyOneTimeTokenDelete,
	structs.NamespaceUpsertRequestType:                     (*FSM).applyNamespaceUpsert,
	structs.NamespaceDeleteRequestType:                     (*FSM).applyNamespaceDelete,
	structs.HostVolumeApplyRequestType:                     (*FSM).applyHostVolume,
	structs.NodePoolUpsertRequestType:                      (*FSM).applyNodePoolUpsert,
	structs.NodePoolDeleteRequestType:                      (*FSM).applyNodePoolDelete,
	structs.VarApplyStateRequestType:                       (*FSM).applyVariable,
	structs.ScalingEventRegisterRequestType:                (*FSM).applyScalingEvent,
	structs.JobVersionTagRequestType:                       (*FSM).applyJobVersionTag,
	structs.ServiceRegistrationUpsertRequestType:           (*FSM).applyServiceRegistrationUpsert,
	structs.ServiceRegistrationDeleteByIDRequestType:       (*FSM).applyServiceRegistrationDeleteByID,
	structs.ServiceRegistrationDeleteByAllocIDsRequestType: (*FSM).applyServiceRegistrationDeleteByAllocIDs,
}

// New returns an FSM over a new, empty state store.
func New(cfg Config) (*FSM, error) {
	logger := cfg.Logger
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	f := &FSM{
		logger:      logger.Named("fsm"),
		stateConfig: cfg.StateConfig,
		broker:      cfg.EvalBroker,
		blocked:     cfg.BlockedEvals,
		onRestore:   cfg.OnRestore,
	}
	store, err := state.NewStateStore(&f.stateConfig)
	if err != nil {
		return nil, err
	}
	f.store.Store(store)
	return f, nil
}

// State returns the current state store. A snapshot restore replaces it
// (and abandons the old one), so callers fetch it per use rather than
// keeping it.
func (f *FSM) State() *state.StateStore {
	return f.store.Load()
}

// Apply applies one committed log entry. Raft returns the result to the
// writer on the leader (through the apply future's Response); followers
// discard it.
//
// An entry that cannot be applied (a body that does not decode, an
// unsupported type, a write the state store refuses) is answered with an
// error and skipped: the state is left as it was and nothing is
// enqueued. The outcome depends only on the entry and the state, so
// every server skips it alike and they stay identical; Apply never
// panics over an entry, and the entries after it apply as usual. Writers
// keep such entries out of the log in the first place (validation, and
// structs.CheckEntry for jobs); this is what happens to one that an older
// server let through.
func (f *FSM) Apply(log *raft.Log) interface{} {
	if log.Type != raft.LogCommand || len(log.Data) == 0 {
		return nil
	}
	msgType := structs.MessageType(log.Data[0])
	fn, ok := appliers[msgType&^structs.IgnoreUnknownTypeFlag]
	if !ok {
		if msgType&structs.IgnoreUnknownTypeFlag != 0 {
			f.logger.Warn("skipping log entry of an unknown type", "type", msgType, "index", log.Index)
			return nil
		}
		err := fmt.Errorf("log entry %d: unsupported message type %s", log.Index, msgType)
		f.logger.Error("cannot apply log entry", "error", err)
		return err
	}
	defer metrics.MeasureSinceWithLabels([]string{"nomad", "fsm", "apply"}, time.Now(),
		[]metrics.Label{{Name: "type", Value: msgType.String()}})
	resp := fn(f, log.Data[1:], log.Index)
	if err, isErr := resp.(error); isErr {
		f.logger.Debug("log entry not applied", "type", msgType, "index", log.Index, "error", err)
	}
	return resp
}

// decode reads an entry body, naming the message type in the error.
func decode(body []byte, t structs.MessageType, out interface{}) error {
	if err := structs.Decode(body, out); err != nil {
		return fmt.Errorf("decoding %s entry: %w", t, err)
	}
	return nil
}

// Snapshot captures the state for Raft to persist. It is O(1): the state
// snapshot is an immutable view that Persist streams out later, while
// Apply continues.
func (f *FSM) Snapshot() (raft.FSMSnapshot, error) {
	return &fsmSnapshot{snap: f.State().Snapshot(), logger: f.logger}, nil
}

// Restore replaces the whole state with a persisted snapshot: it builds a
// new store from rc, swaps it in, and abandons the old store so that
// blocking queries and index waiters holding it wake up and re-read.
func (f *FSM) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	defer metrics.MeasureSince([]string{"nomad", "fsm", "restore"}, time.Now())
	store, err := state.Restore(rc, &f.stateConfig)
	if err != nil {
		return fmt.Errorf("restoring state from snapshot: %w", err)
	}
	old := f.store.Swap(store)
	old.Abandon()
	if f.onRestore != nil {
		f.onRestore()
	}
	return nil
}

// fsmSnapshot is a point-in-time state that Raft persists.
type fsmSnapshot struct {
	snap   *state.StateSnapshot
	logger hclog.Logger
}

// Persist streams the snapshot into the sink; Raft calls it on its own
// goroutine.
func (s *fsmSnapshot) Persist(sink raft.SnapshotSink) error {
	defer metrics.MeasureSince([]string{"nomad", "fsm", "persist"}, time.Now())
	if err := s.snap.Persist(sink); err != nil {
		s.logger.Error("failed to persist state snapshot", "error", err)
		_ = sink.Cancel()
		return err
	}
	return sink.Close()
}

// Release is a no-op: the snapshot holds no resources beyond memory.
func (s *fsmSnapshot) Release() {}

// ---- side effects ------------------------------------------------------------

// afterEvals returns the side effect of committing evals (nil ones are
// skipped): handleEvals, or nil when there are none.
func (f *FSM) afterEvals(evals ...*structs.Evaluation) func() {
	some := evals
	if slices.Contains(evals, nil) {
		some = slices.DeleteFunc(slices.Clone(evals), func(e *structs.Evaluation) bool { return e == nil })
	}
	if len(some) == 0 {
		return nil
	}
	return func() { f.handleEvals(some) }
}

// handleEvals tells the broker and the blocked tracker about evals just
// committed: pending ones are ready to schedule, blocked ones wait for
// capacity, and one that completed placing everything makes its job's
// blocked eval moot.
func (f *FSM) handleEvals(evals []*structs.Evaluation) {
	for _, e := range evals {
		switch {
		case e.ShouldEnqueue():
			if f.broker != nil {
				f.broker.Enqueue(e)
			}
		case e.ShouldBlock():
			if f.blocked != nil {
				f.blocked.Block(e)
			}
		case e.Status == structs.EvalStatusComplete && len(e.FailedTGAllocs) == 0:
			if f.blocked != nil {
				f.blocked.Untrack(e.JobID, e.Namespace)
			}
		}
	}
}

// unblockNode releases evals that may fit on a node that just gained
// schedulable capacity (became ready, or eligible while ready).
func (f *FSM) unblockNode(node *structs.Node, index uint64) {
	if f.blocked == nil || node == nil {
		return
	}
	f.blocked.Unblock(node.ComputedClass, index)
	f.blocked.UnblockNode(node.ID, index)
}

// gainedCapacity reports whether a write turned a node that could not take
// new allocations into one that can.
func gainedCapacity(before, after *structs.Node) bool {
	return after != nil && after.Ready() && (before == nil || !before.Ready())
}
