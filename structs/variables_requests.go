package structs

// VarOp is one kind of write to a variable.
type VarOp string

// Variable operations, as Nomad names them.
const (
	// VarOpSet writes a variable (a locked one only with its lock's ID).
	VarOpSet VarOp = "set"
	// VarOpCAS writes it if its ModifyIndex is the request's (0: if it
	// does not exist).
	VarOpCAS VarOp = "cas"
	// VarOpDelete removes it (a locked one only with its lock's ID).
	VarOpDelete VarOp = "delete"
	// VarOpDeleteCAS removes it if its ModifyIndex is the request's (0:
	// if it does not exist, which then succeeds doing nothing).
	VarOpDeleteCAS VarOp = "delete-cas"
	// VarOpLockAcquire takes the variable's lock, writing its items.
	VarOpLockAcquire VarOp = "lock-acquire"
	// VarOpLockRenew restarts the lock's TTL; the leader's timer alone
	// keeps it, so no Raft entry is written.
	VarOpLockRenew VarOp = "lock-renew"
	// VarOpLockRelease drops the lock and keeps the items.
	VarOpLockRelease VarOp = "lock-release"
)

// VarOpResult says how a write ended.
type VarOpResult string

// Results of a variable write.
const (
	// VarOpResultOk: the write was made (or there was nothing to delete).
	VarOpResultOk VarOpResult = "ok"
	// VarOpResultConflict: a check-and-set or a lock refused the write;
	// Conflict holds what is there.
	VarOpResultConflict VarOpResult = "conflict"
)

// VarApplyStateRequest is the Raft entry of a variable write, its items
// already sealed.
type VarApplyStateRequest struct {
	Op  VarOp
	Var *VariableEncrypted
	WriteRequest
}

// VarApplyStateResponse is the state store's answer to a variable
// write: the variable written, or on a conflict what is there (only
// Namespace and Path when there is nothing, or a lock refused the
// write).
type VarApplyStateResponse struct {
	Op       VarOp
	Result   VarOpResult
	Conflict *VariableEncrypted
	// Written is the variable as stored after the write; nil after a
	// delete.
	Written *VariableEncrypted
}

// VariablesApplyRequest is a write to a variable: Variables.Apply.
type VariablesApplyRequest struct {
	Op  VarOp
	Var *VariableDecrypted
	WriteRequest
}

// VariablesApplyResponse answers Variables.Apply. On a conflict, Conflict
// is what is there, its items only for a token that may read them.
type VariablesApplyResponse struct {
	Op       VarOp
	Input    *VariableDecrypted
	Result   VarOpResult
	Conflict *VariableDecrypted
	// Refusal is the reason of a conflict that shows no variable (a lock
	// renewal refused).
	Refusal string
	// Output is the variable written, with its items.
	Output *VariableDecrypted
	WriteMeta
}

// IsConflict reports whether the write was refused by a check-and-set or
// a lock.
func (r *VariablesApplyResponse) IsConflict() bool { return r.Result == VarOpResultConflict }

// VariablesListRequest lists variables: QueryOptions.Namespace ("*" for
// all) and Prefix, a path prefix.
type VariablesListRequest struct {
	QueryOptions
}

// VariablesListResponse answers Variables.List, by namespace and path.
type VariablesListResponse struct {
	Data []*VariableMetadata
	QueryMeta
}

// VariablesReadRequest reads the variable at Path in the request's
// namespace: Variables.Read.
type VariablesReadRequest struct {
	Path string
	QueryOptions
}

// VariablesReadResponse answers Variables.Read; Data is nil when there is
// no such variable.
type VariablesReadResponse struct {
	Data *VariableDecrypted
	QueryMeta
}
