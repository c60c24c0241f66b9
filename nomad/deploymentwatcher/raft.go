package deploymentwatcher

import "github.com/opennomad/nomad/structs"

// Raft is how the watcher writes. The server implements it by applying
// Raft entries on the leader; StateRaft applies the same changes straight
// to a state store for tests.
//
// The watcher calls it from its own goroutine, and from the goroutines of
// the RPC handlers that call its operator methods (Promote, Fail, Pause,
// SetAllocHealth); implementations must be safe for concurrent use. A
// call returns once the entry is committed and applied to the leader's
// state store, with the entry's Raft index; an error means nothing was
// written, and carries the state store's validation error when the FSM
// refused the entry (a promotion without enough healthy canaries, say).
// Evals carried by an entry are handed to the broker by the FSM.
type Raft interface {
	// UpdateDeploymentStatus changes a deployment's status, optionally
	// registering a job version (an auto-revert) and writing an eval, in
	// one entry of type structs.DeploymentStatusUpdateRequestType
	// (DeploymentStatusUpdateRequest{DeploymentUpdate, Job, Eval}). A
	// successful status marks the job version stable (the state store
	// does that).
	UpdateDeploymentStatus(update *structs.DeploymentStatusUpdate, job *structs.Job, eval *structs.Evaluation) (uint64, error)

	// UpdateDeploymentPromotion promotes canaries, in one entry of type
	// structs.DeploymentPromoteRequestType carrying the request.
	UpdateDeploymentPromotion(req *structs.ApplyDeploymentPromoteRequest) (uint64, error)

	// UpdateDeploymentAllocHealth records alloc health verdicts (and what
	// else the request carries), in one entry of type
	// structs.DeploymentAllocHealthRequestType carrying the request.
	UpdateDeploymentAllocHealth(req *structs.ApplyDeploymentAllocHealthRequest) (uint64, error)

	// UpdateDeploymentAllocHealthBatch records the verdicts of many
	// requests, each with what it carries, in one entry of type
	// structs.DeploymentAllocHealthBatchRequestType
	// (DeploymentAllocHealthBatchRequest{Requests}). Each request applies
	// as it would in its own UpdateDeploymentAllocHealth entry; when the
	// state store refuses one, the entry writes nothing. Only servers of
	// structs.MinVersionAllocHealthBatch apply it (see
	// Config.AllocHealthBatch).
	UpdateDeploymentAllocHealthBatch(reqs []*structs.ApplyDeploymentAllocHealthRequest) (uint64, error)

	// UpsertEvals writes evals, in one entry of type
	// structs.EvalUpdateRequestType (EvalUpdateRequest{Evals}).
	UpsertEvals(evals []*structs.Evaluation) (uint64, error)
}
