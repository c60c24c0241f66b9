package state

import (
	"fmt"

	"github.com/hashicorp/go-memdb"

	"github.com/opennomad/nomad/structs"
)

// Variables, by (namespace, path), their items sealed. The store judges
// every write against what is there: check-and-set on ModifyIndex and
// the lock a variable may hold, answering a refusal as a conflict (not an
// error) so that the caller can show what is there.

const indexKeyID = "key_id"

func variablesTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TableVariables,
		Indexes: map[string]*memdb.IndexSchema{
			indexID: idIndex(namespacedID(
				func(v *structs.VariableEncrypted) string { return v.Namespace },
				func(v *structs.VariableEncrypted) string { return v.Path })),
			// key_id finds the variables a root key seals: a key in use
			// is not deleted, and a full rotation seals them again.
			indexKeyID: {
				Name:    indexKeyID,
				Indexer: strField(func(v *structs.VariableEncrypted) string { return v.KeyID }),
			},
		},
	}
}

// Variables returns the variables of namespace ns ("*": of every
// namespace) whose paths start with prefix, by namespace and path.
func (s *StateStore) Variables(ws memdb.WatchSet, ns, prefix string) ([]*structs.VariableEncrypted, error) {
	txn := s.db.Txn(false)
	if ns == "*" {
		it, err := get(txn, ws, TableVariables, indexID)
		if err != nil {
			return nil, err
		}
		return collect(it, func(v *structs.VariableEncrypted) bool {
			return len(v.Path) >= len(prefix) && v.Path[:len(prefix)] == prefix
		}), nil
	}
	it, err := get(txn, ws, TableVariables, indexID+"_prefix", ns, prefix)
	if err != nil {
		return nil, err
	}
	return collect[structs.VariableEncrypted](it, nil), nil
}

// VariablesByKeyID returns the variables sealed with the root key.
func (s *StateStore) VariablesByKeyID(ws memdb.WatchSet, keyID string) ([]*structs.VariableEncrypted, error) {
	it, err := get(s.db.Txn(false), ws, TableVariables, indexKeyID, keyID)
	if err != nil {
		return nil, err
	}
	return collect[structs.VariableEncrypted](it, nil), nil
}

// VariableByPath returns the variable or nil.
func (s *StateStore) VariableByPath(ws memdb.WatchSet, ns, path string) (*structs.VariableEncrypted, error) {
	return variableByPath(s.db.Txn(false), ws, ns, path)
}

func variableByPath(txn *memdb.Txn, ws memdb.WatchSet, ns, path string) (*structs.VariableEncrypted, error) {
	raw, err := first(txn, ws, TableVariables, indexID, ns, path)
	if err != nil || raw == nil {
		return nil, err
	}
	return raw.(*structs.VariableEncrypted), nil
}

// NamespaceHasVariables reports whether any variable lives in ns.
func (s *StateStore) NamespaceHasVariables(ns string) (bool, error) {
	raw, err := first(s.db.Txn(false), nil, TableVariables, indexID+"_prefix", ns, "")
	return raw != nil, err
}

// VarApply makes one variable write at index; see Txn.VarApply.
func (s *StateStore) VarApply(index uint64, op structs.VarOp, v *structs.VariableEncrypted) (*structs.VarApplyStateResponse, error) {
	var resp *structs.VarApplyStateResponse
	err := s.WithWriteTxn(index, func(tx *Txn) error {
		var err error
		resp, err = tx.VarApply(op, v)
		return err
	})
	return resp, err
}

// VarApply makes one variable write, judged against what is stored:
//
//   - set: refused (conflict) when a lock is held and v does not carry
//     its ID; the lock is kept.
//   - cas: as set, and only when v.ModifyIndex is the stored one (0:
//     nothing stored).
//   - delete, delete-cas: as set and cas; deleting nothing succeeds
//     unless a cas index names something.
//   - lock-acquire: refused when a lock is held; writes v with its lock.
//   - lock-release: drops the lock whose ID v carries, keeping the items;
//     an error when there is no variable or no lock.
//
// v's times are the writer's; its indexes are set here. The caller's
// object is not written into.
func (tx *Txn) VarApply(op structs.VarOp, v *structs.VariableEncrypted) (*structs.VarApplyStateResponse, error) {
	tx.touch(TableVariables)
	if v == nil {
		return nil, structs.KindErrorf(structs.ErrInvalid, "variable write %q: missing variable", op)
	}
	existing, err := variableByPath(tx.txn, nil, v.Namespace, v.Path)
	if err != nil {
		return nil, err
	}
	resp := &structs.VarApplyStateResponse{Op: op, Result: structs.VarOpResultOk}
	conflict := func(c *structs.VariableEncrypted) (*structs.VarApplyStateResponse, error) {
		resp.Result, resp.Conflict = structs.VarOpResultConflict, c
		return resp, nil
	}
	// bare names the variable and nothing more: the answer to a write
	// refused by a lock, or by a check-and-set on nothing.
	bare := &structs.VariableEncrypted{VariableMetadata: structs.VariableMetadata{Namespace: v.Namespace, Path: v.Path}}
	lockedOut := existing != nil && existing.IsLocked() && (v.Lock == nil || v.Lock.ID != existing.Lock.ID)

	switch op {
	case structs.VarOpCAS, structs.VarOpDeleteCAS:
		switch {
		case existing == nil && v.ModifyIndex == 0:
		case existing == nil:
			return conflict(bare)
		case existing.ModifyIndex != v.ModifyIndex:
			return conflict(existing.Copy())
		}
	}
	switch op {
	case structs.VarOpSet, structs.VarOpCAS:
		if lockedOut {
			return conflict(bare)
		}
		w := v.Copy()
		w.Lock = nil
		if existing != nil {
			w.Lock = existing.Lock.Copy()
		}
		return tx.writeVariable(resp, existing, w)
	case structs.VarOpDelete, structs.VarOpDeleteCAS:
		if existing == nil {
			return resp, nil
		}
		if lockedOut {
			return conflict(bare)
		}
		return resp, tx.delete(TableVariables, existing)
	case structs.VarOpLockAcquire:
		if existing != nil && existing.IsLocked() {
			return conflict(bare)
		}
		if v.Lock == nil || v.Lock.ID == "" {
			return nil, structs.ErrVariableMissingLock
		}
		return tx.writeVariable(resp, existing, v.Copy())
	case structs.VarOpLockRelease:
		switch {
		case existing == nil:
			return nil, fmt.Errorf("variable doesn't exist")
		case !existing.IsLocked():
			return nil, fmt.Errorf("variable doesn't hold a lock")
		case v.Lock == nil || v.Lock.ID != existing.Lock.ID:
			c := bare.Copy()
			c.Lock = &structs.VariableLock{}
			return conflict(c)
		}
		w := existing.Copy()
		w.Lock = nil
		w.ModifyTime = v.ModifyTime
		return tx.writeVariable(resp, existing, w)
	}
	return nil, structs.KindErrorf(structs.ErrInvalid, "variable %q: unknown operation %q", v.Path, op)
}

// writeVariable stores w, keeping existing's creation.
func (tx *Txn) writeVariable(resp *structs.VarApplyStateResponse, existing, w *structs.VariableEncrypted) (*structs.VarApplyStateResponse, error) {
	w.CreateIndex, w.ModifyIndex = tx.index, tx.index
	if w.CreateTime == 0 {
		w.CreateTime = w.ModifyTime
	}
	if existing != nil {
		w.CreateIndex, w.CreateTime = existing.CreateIndex, existing.CreateTime
	}
	if err := tx.insert(TableVariables, w); err != nil {
		return nil, fmt.Errorf("variable %q: %w", w.Path, err)
	}
	resp.Written = w.Copy()
	return resp, nil
}
