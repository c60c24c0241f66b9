package state

import (
	"testing"
	"time"

	"github.com/hashicorp/go-memdb"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

func sealedVar(ns, path string, modifyIndex uint64) *structs.VariableEncrypted {
	return &structs.VariableEncrypted{
		VariableMetadata: structs.VariableMetadata{Namespace: ns, Path: path, ModifyIndex: modifyIndex, ModifyTime: 100},
		VariableData:     structs.VariableData{Data: []byte("sealed"), KeyID: "key-1"},
	}
}

func withLock(v *structs.VariableEncrypted, id string) *structs.VariableEncrypted {
	v.Lock = &structs.VariableLock{ID: id, TTL: 15 * time.Second, LockDelay: 15 * time.Second}
	return v
}

func TestVariables_SetListGet(t *testing.T) {
	s := testStore(t)
	ws := memdb.NewWatchSet()
	_, err := s.Variables(ws, "*", "")
	must.NoError(t, err)

	for i, v := range []*structs.VariableEncrypted{
		sealedVar("default", "app/web", 0), sealedVar("default", "app/db", 0),
		sealedVar("default", "other", 0), sealedVar("team", "app/x", 0),
	} {
		resp, err := s.VarApply(uint64(10+i), structs.VarOpSet, v)
		must.NoError(t, err)
		must.Eq(t, structs.VarOpResultOk, resp.Result)
		must.Eq(t, uint64(10+i), resp.Written.CreateIndex)
		must.Eq(t, uint64(0), v.ModifyIndex, must.Sprint("the caller's object is not written into"))
	}
	must.False(t, ws.Watch(time.After(5*time.Second)), must.Sprint("the list's watch fires"))
	must.Eq(t, uint64(13), mustIndex(t, s, TableVariables))

	paths := func(vs []*structs.VariableEncrypted) (out []string) {
		for _, v := range vs {
			out = append(out, v.Namespace+"."+v.Path)
		}
		return out
	}
	for _, c := range []struct {
		ns, prefix string
		want       []string
	}{
		{"default", "", []string{"default.app/db", "default.app/web", "default.other"}},
		{"default", "app/", []string{"default.app/db", "default.app/web"}},
		{"*", "app", []string{"default.app/db", "default.app/web", "team.app/x"}},
		{"team", "other", nil},
	} {
		got, err := s.Variables(nil, c.ns, c.prefix)
		must.NoError(t, err)
		must.Eq(t, c.want, paths(got), must.Sprintf("%s %q", c.ns, c.prefix))
	}

	// A second write keeps the creation.
	resp, err := s.VarApply(20, structs.VarOpSet, sealedVar("default", "app/db", 0))
	must.NoError(t, err)
	must.Eq(t, uint64(11), resp.Written.CreateIndex)
	must.Eq(t, uint64(20), resp.Written.ModifyIndex)

	used, err := s.VariablesByKeyID(nil, "key-1")
	must.NoError(t, err)
	must.Len(t, 4, used)
	has, err := s.NamespaceHasVariables("team")
	must.NoError(t, err)
	must.True(t, has)
	has, err = s.NamespaceHasVariables("tea")
	must.NoError(t, err)
	must.False(t, has)
}

// TestVariables_CAS: check-and-set on ModifyIndex, 0 meaning "must not
// exist", for writes and deletes.
func TestVariables_CAS(t *testing.T) {
	s := testStore(t)
	_, err := s.VarApply(10, structs.VarOpSet, sealedVar("default", "a", 0))
	must.NoError(t, err)

	cases := []struct {
		name     string
		op       structs.VarOp
		path     string
		index    uint64
		conflict bool
		// conflictIndex is the ModifyIndex the conflict shows (0: a
		// bare {Namespace, Path}).
		conflictIndex uint64
	}{
		{"create-only on existing", structs.VarOpCAS, "a", 0, true, 10},
		{"stale index", structs.VarOpCAS, "a", 9, true, 10},
		{"index on missing", structs.VarOpCAS, "b", 5, true, 0},
		{"delete stale", structs.VarOpDeleteCAS, "a", 3, true, 10},
		{"delete index on missing", structs.VarOpDeleteCAS, "b", 3, true, 0},
		{"delete 0 on missing", structs.VarOpDeleteCAS, "b", 0, false, 0},
		{"create-only on missing", structs.VarOpCAS, "c", 0, false, 0},
		{"matching index", structs.VarOpCAS, "a", 10, false, 0},
	}
	index := uint64(100)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			index++
			resp, err := s.VarApply(index, c.op, sealedVar("default", c.path, c.index))
			must.NoError(t, err)
			if !c.conflict {
				must.Eq(t, structs.VarOpResultOk, resp.Result)
				return
			}
			must.Eq(t, structs.VarOpResultConflict, resp.Result)
			must.Eq(t, c.path, resp.Conflict.Path)
			must.Eq(t, c.conflictIndex, resp.Conflict.ModifyIndex)
		})
	}
	// "matching index" wrote a at its index; deleting with it succeeds.
	got, err := s.VariableByPath(nil, "default", "a")
	must.NoError(t, err)
	resp, err := s.VarApply(200, structs.VarOpDeleteCAS, sealedVar("default", "a", got.ModifyIndex))
	must.NoError(t, err)
	must.Eq(t, structs.VarOpResultOk, resp.Result)
	got, err = s.VariableByPath(nil, "default", "a")
	must.NoError(t, err)
	must.Nil(t, got)
}

// TestVariables_Locks: a held lock keeps out writes, deletes and other
// holders without its ID; release keeps the items.
func TestVariables_Locks(t *testing.T) {
	s := testStore(t)
	resp, err := s.VarApply(10, structs.VarOpLockAcquire, withLock(sealedVar("default", "l", 0), "lock-1"))
	must.NoError(t, err)
	must.Eq(t, structs.VarOpResultOk, resp.Result)
	must.Eq(t, "lock-1", resp.Written.Lock.ID)

	refused := []struct {
		name string
		op   structs.VarOp
		v    *structs.VariableEncrypted
	}{
		{"second acquire", structs.VarOpLockAcquire, withLock(sealedVar("default", "l", 0), "lock-2")},
		{"set without the lock", structs.VarOpSet, sealedVar("default", "l", 0)},
		{"set with another lock", structs.VarOpSet, withLock(sealedVar("default", "l", 0), "lock-2")},
		{"delete without the lock", structs.VarOpDelete, sealedVar("default", "l", 0)},
	}
	for i, c := range refused {
		resp, err := s.VarApply(uint64(20+i), c.op, c.v)
		must.NoError(t, err, must.Sprint(c.name))
		must.Eq(t, structs.VarOpResultConflict, resp.Result, must.Sprint(c.name))
		must.Eq(t, structs.VariableMetadata{Namespace: "default", Path: "l"}, resp.Conflict.VariableMetadata, must.Sprint(c.name))
	}

	// The holder writes; the lock stays.
	resp, err = s.VarApply(30, structs.VarOpSet, withLock(sealedVar("default", "l", 0), "lock-1"))
	must.NoError(t, err)
	must.Eq(t, structs.VarOpResultOk, resp.Result)
	must.Eq(t, "lock-1", resp.Written.Lock.ID)

	// Release: the wrong ID is a conflict naming an empty lock; no
	// variable or no lock is an error.
	resp, err = s.VarApply(31, structs.VarOpLockRelease, withLock(sealedVar("default", "l", 0), "lock-2"))
	must.NoError(t, err)
	must.Eq(t, structs.VarOpResultConflict, resp.Result)
	must.Eq(t, &structs.VariableLock{}, resp.Conflict.Lock)
	_, err = s.VarApply(32, structs.VarOpLockRelease, withLock(sealedVar("default", "none", 0), "lock-1"))
	must.ErrorContains(t, err, "variable doesn't exist")

	resp, err = s.VarApply(33, structs.VarOpLockRelease, withLock(sealedVar("default", "l", 0), "lock-1"))
	must.NoError(t, err)
	must.Eq(t, structs.VarOpResultOk, resp.Result)
	got, err := s.VariableByPath(nil, "default", "l")
	must.NoError(t, err)
	must.Nil(t, got.Lock)
	must.Eq(t, []byte("sealed"), got.Data)
	must.Eq(t, uint64(10), got.CreateIndex)
	_, err = s.VarApply(34, structs.VarOpLockRelease, withLock(sealedVar("default", "l", 0), "lock-1"))
	must.ErrorContains(t, err, "variable doesn't hold a lock")

	// Unlocked again: anyone writes and deletes it.
	resp, err = s.VarApply(35, structs.VarOpDelete, sealedVar("default", "l", 0))
	must.NoError(t, err)
	must.Eq(t, structs.VarOpResultOk, resp.Result)
}
