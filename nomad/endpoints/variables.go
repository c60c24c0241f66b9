package endpoints

import (
	"crypto/rand"
	"fmt"
	"time"

	"github.com/hashicorp/go-memdb"

	"github.com/opennomad/nomad/acl"
	"github.com/opennomad/nomad/nomad/clock"
	"github.com/opennomad/nomad/nomad/keyring"
	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// Variables serves the Variables.* RPCs. Items are sealed with the
// keyring's active root key here, before the write reaches Raft, and
// opened here when a token that may read them asks: the state store and
// the Raft log only ever hold them sealed.
type Variables struct {
	srv Server
}

// variablesRules: every method checks the token against the variables
// rules of the path it concerns (write or destroy; read; list per
// variable listed), which the request's namespace alone cannot say.
var variablesRules = Rules{
	"Apply": Self("variables write (destroy to delete) on the path"),
	"Read":  Self("variables read on the path"),
	"List":  Self("any token; lists the variables it may list"),
}

// VariableLocks is the leader's timers of variable locks
// (varlocks.Timers).
type VariableLocks interface {
	// Arm starts or restarts the timer of a lock just taken.
	Arm(ns, path string, lock *structs.VariableLock)
	// Renew restarts the TTL of the live lock with lockID; false when
	// there is none.
	Renew(ns, path, lockID string) bool
	// Remove forgets the timer of a released lock or deleted variable.
	Remove(ns, path string)
}

// Apply writes a variable: set, check-and-set, delete, or a lock
// operation (Op). A refusal by a check-and-set or a lock is no error:
// the reply's Result says conflict and Conflict shows what is there.
func (v *Variables) Apply(args *structs.VariablesApplyRequest, reply *structs.VariablesApplyResponse) error {
	if done, err := v.srv.Forward("Variables.Apply", args, args, reply); done {
		return err
	}
	if args.Var == nil {
		return structs.KindErrorf(structs.ErrInvalid, "variable write: missing variable")
	}
	in := args.Var.Copy()
	if in.Namespace == "" {
		in.Namespace = args.RequestNamespace()
	}
	aclObj, err := v.srv.ResolveACL(args.AuthToken)
	if err != nil {
		return err
	}
	if err := checkVarOp(args.Op, in); err != nil {
		return err
	}
	need := acl.VariablesCapabilityWrite
	if args.Op == structs.VarOpDelete || args.Op == structs.VarOpDeleteCAS {
		need = acl.VariablesCapabilityDestroy
	}
	if !aclObj.AllowVariableOperation(in.Namespace, in.Path, need) {
		return structs.ErrPermissionDenied
	}
	reply.Op, reply.Input = args.Op, args.Var
	if args.Op == structs.VarOpLockRenew {
		return v.renew(in, reply)
	}

	store := v.srv.State()
	if args.Op == structs.VarOpLockAcquire {
		in.Lock.ID = structs.GenerateUUID()
	}
	in.ModifyTime = v.srv.Clock().Now().UnixNano()
	sealed := &structs.VariableEncrypted{VariableMetadata: in.VariableMetadata.Copy()}
	switch args.Op {
	case structs.VarOpSet, structs.VarOpCAS, structs.VarOpLockAcquire:
		key, err := activeRootKey(v.srv, store, "sealing variable")
		if err != nil {
			return err
		}
		if sealed, err = keyring.SealVariable(rand.Reader, key, in); err != nil {
			return err
		}
	}
	raw, index, err := v.srv.RaftApply(structs.VarApplyStateRequestType, &structs.VarApplyStateRequest{
		Op: args.Op, Var: sealed, WriteRequest: args.WriteRequest})
	if err != nil {
		return err
	}
	resp, ok := raw.(*structs.VarApplyStateResponse)
	if !ok {
		return fmt.Errorf("variable %q: unexpected answer %T from the state store", in.Path, raw)
	}
	reply.Index, reply.Result = index, resp.Result
	if resp.Result == structs.VarOpResultConflict {
		reply.Conflict, err = v.conflict(store, aclObj, resp.Conflict)
		if reply.Conflict != nil && reply.Conflict.ModifyIndex > 0 {
			reply.Index = reply.Conflict.ModifyIndex
		}
		return err
	}
	v.tendLock(args.Op, in, resp.Written)
	if resp.Written == nil {
		return nil
	}
	// The writer sees what it wrote, and the lock when it holds it.
	out := &structs.VariableDecrypted{VariableMetadata: resp.Written.VariableMetadata.Copy(), Items: in.Items}
	if args.Op == structs.VarOpLockRelease {
		out, err = openVariable(store, resp.Written)
		if err != nil {
			return err
		}
	}
	if out.Lock != nil && !aclObj.IsManagement() && (in.Lock == nil || in.Lock.ID != out.Lock.ID) {
		out.Lock = nil
	}
	reply.Output = out
	return nil
}

// checkVarOp refuses a write that can never succeed as asked.
func checkVarOp(op structs.VarOp, in *structs.VariableDecrypted) error {
	if err := structs.ValidateVariablePath(in.Path); err != nil {
		return err
	}
	switch op {
	case structs.VarOpSet, structs.VarOpCAS:
		if in.Lock != nil && (in.Lock.TTL != 0 || in.Lock.LockDelay != 0) {
			return structs.ErrVariableLockInSet
		}
		return in.Validate()
	case structs.VarOpDelete, structs.VarOpDeleteCAS:
		return nil
	case structs.VarOpLockAcquire:
		if in.Lock == nil {
			in.Lock = &structs.VariableLock{}
		}
		if err := in.Lock.CanonicalizeLock(); err != nil {
			return err
		}
		// A lock may be taken on a variable without items: the lock is
		// what its holder wants.
		if in.Items.Size() > structs.MaxVariableSize {
			return structs.ErrVariableTooLarge
		}
		return nil
	case structs.VarOpLockRenew, structs.VarOpLockRelease:
		if in.Lock == nil || in.Lock.ID == "" {
			return structs.ErrVariableMissingLock
		}
		if op == structs.VarOpLockRelease && len(in.Items) > 0 {
			return structs.ErrVariableReleaseItems
		}
		return nil
	}
	return structs.KindErrorf(structs.ErrInvalid, "variable %q: unknown operation %q", in.Path, op)
}

// renew restarts a lock's TTL on the leader's timer; nothing is written.
// A renewal refused answers the conflict's reason in Refusal.
func (v *Variables) renew(in *structs.VariableDecrypted, reply *structs.VariablesApplyResponse) error {
	stored, err := v.srv.State().VariableByPath(nil, in.Namespace, in.Path)
	if err != nil {
		return err
	}
	switch {
	case stored == nil:
		return structs.KindErrorf(structs.ErrNotFound, "variable doesn't exist")
	case !stored.IsLocked():
		reply.Result, reply.Refusal = structs.VarOpResultConflict, "variable doesn't hold a lock"
		return nil
	}
	locks := v.srv.VariableLocks()
	if stored.Lock.ID != in.Lock.ID || locks == nil || !locks.Renew(in.Namespace, in.Path, in.Lock.ID) {
		reply.Result, reply.Refusal = structs.VarOpResultConflict, "attempting to modify locked variable"
		return nil
	}
	reply.Result = structs.VarOpResultOk
	reply.Output = &structs.VariableDecrypted{VariableMetadata: stored.VariableMetadata.Copy()}
	reply.Index = stored.ModifyIndex
	return nil
}

// tendLock keeps the leader's lock timers in step with a write made.
func (v *Variables) tendLock(op structs.VarOp, in *structs.VariableDecrypted, written *structs.VariableEncrypted) {
	locks := v.srv.VariableLocks()
	if locks == nil {
		return
	}
	switch op {
	case structs.VarOpLockAcquire:
		locks.Arm(in.Namespace, in.Path, written.Lock)
	case structs.VarOpLockRelease, structs.VarOpDelete, structs.VarOpDeleteCAS:
		locks.Remove(in.Namespace, in.Path)
	}
}

// conflict is what a refused write shows: the stored variable, its items
// only for a token that may read them, its lock only for management.
func (v *Variables) conflict(store *state.StateStore, aclObj *acl.ACL, c *structs.VariableEncrypted) (*structs.VariableDecrypted, error) {
	if c == nil {
		return nil, nil
	}
	out := &structs.VariableDecrypted{VariableMetadata: c.VariableMetadata.Copy()}
	if len(c.Data) > 0 && aclObj.AllowVariableOperation(c.Namespace, c.Path, acl.VariablesCapabilityRead) {
		opened, err := openVariable(store, c)
		if err != nil {
			return nil, err
		}
		out = opened
	}
	if out.IsLocked() && !aclObj.IsManagement() {
		out.Lock = nil
	}
	return out, nil
}

// Read returns the variable at the request's path, its items open; Data
// is nil when there is none.
func (v *Variables) Read(args *structs.VariablesReadRequest, reply *structs.VariablesReadResponse) error {
	if done, err := v.srv.Forward("Variables.Read", args, args, reply); done {
		return err
	}
	aclObj, err := v.srv.ResolveACL(args.AuthToken)
	if err != nil {
		return err
	}
	ns := args.RequestNamespace()
	if !aclObj.AllowVariableOperation(ns, args.Path, acl.VariablesCapabilityRead) {
		return structs.ErrPermissionDenied
	}
	return blockingQuery(v.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		reply.Data = nil
		stored, err := store.VariableByPath(ws, ns, args.Path)
		if err != nil {
			return 0, err
		}
		if stored == nil {
			return store.Index(state.TableVariables)
		}
		out, err := openVariable(store, stored)
		if err != nil {
			return 0, err
		}
		if !aclObj.IsManagement() {
			out.Lock = nil
		}
		reply.Data = out
		return stored.ModifyIndex, nil
	})
}

// List returns the metadata of the variables of the request's namespace
// ("*": of all) under its Prefix that the token may list, by namespace
// and path.
func (v *Variables) List(args *structs.VariablesListRequest, reply *structs.VariablesListResponse) error {
	if done, err := v.srv.Forward("Variables.List", args, args, reply); done {
		return err
	}
	aclObj, err := v.srv.ResolveACL(args.AuthToken)
	if err != nil {
		return err
	}
	ns := args.RequestNamespace()
	return blockingQuery(v.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		all, err := store.Variables(ws, ns, args.Prefix)
		if err != nil {
			return 0, err
		}
		reply.Data = make([]*structs.VariableMetadata, 0, len(all))
		for _, sv := range all {
			if !aclObj.AllowVariableOperation(sv.Namespace, sv.Path, acl.VariablesCapabilityList) {
				continue
			}
			m := sv.VariableMetadata.Copy()
			if !aclObj.IsManagement() {
				m.Lock = nil
			}
			reply.Data = append(reply.Data, &m)
		}
		return store.Index(state.TableVariables)
	})
}

// keyringWait bounds how long a write waits for the first root key: the
// leader of a new cluster makes it just after taking office.
const keyringWait = 10 * time.Second

// activeRootKey is the key new variables are sealed and identities
// signed with, waited for up to keyringWait; purpose opens the error when
// there is none.
func activeRootKey(srv Server, store *state.StateStore, purpose string) (*structs.RootKey, error) {
	ctx, cancel := clock.WithTimeout(srv.ShutdownContext(), srv.Clock(), keyringWait)
	defer cancel()
	for {
		ws := memdb.NewWatchSet()
		keys, err := store.RootKeys(ws)
		if err != nil {
			return nil, err
		}
		for _, k := range keys {
			if k.Meta.Active() {
				return k, nil
			}
		}
		if err := ws.WatchCtx(ctx); err != nil {
			return nil, fmt.Errorf("%s: no active root key", purpose)
		}
	}
}

// openVariable opens a stored variable with the root key that sealed it.
func openVariable(store *state.StateStore, sv *structs.VariableEncrypted) (*structs.VariableDecrypted, error) {
	key, err := store.RootKeyByID(nil, sv.KeyID)
	if err != nil {
		return nil, err
	}
	return keyring.OpenVariable(key, sv)
}
