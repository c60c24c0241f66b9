package nomad

import (
	"bytes"
	"testing"
	"time"

	"github.com/hashicorp/go-memdb"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/nomad/varlocks"
	"github.com/opennomad/nomad/structs"
)

func newVar(path string, items structs.VariableItems) *structs.VariableDecrypted {
	return &structs.VariableDecrypted{VariableMetadata: structs.VariableMetadata{Path: path}, Items: items}
}

func applyVar(t *testing.T, s *Server, op structs.VarOp, v *structs.VariableDecrypted, secret string) (*structs.VariablesApplyResponse, error) {
	t.Helper()
	var resp structs.VariablesApplyResponse
	err := s.RPC("Variables.Apply", &structs.VariablesApplyRequest{Op: op, Var: v, WriteRequest: asTokenWrite(secret)}, &resp)
	return &resp, err
}

// TestVariablesEndpoint_Lifecycle writes, reads, lists and deletes a
// variable, with a check-and-set conflict on the way; the state store
// holds the items sealed only.
func TestVariablesEndpoint_Lifecycle(t *testing.T) {
	s := newTestServer(t, nil)
	resp, err := applyVar(t, s, structs.VarOpSet, newVar("app/db", structs.VariableItems{"password": "s3cr3t-value"}), "")
	must.NoError(t, err)
	must.Eq(t, structs.VarOpResultOk, resp.Result)
	must.Eq(t, "default", resp.Output.Namespace)
	must.Eq(t, "s3cr3t-value", resp.Output.Items["password"])
	must.Positive(t, resp.Output.CreateTime)
	written := resp.Output.ModifyIndex

	// Sealed at rest: neither the state store nor a snapshot of it holds
	// the value.
	stored, err := s.State().VariableByPath(nil, "default", "app/db")
	must.NoError(t, err)
	must.NotEq(t, "", stored.KeyID)
	must.False(t, bytes.Contains(stored.Data, []byte("s3cr3t-value")))
	var snap bytes.Buffer
	must.NoError(t, s.State().Snapshot().Persist(&snap))
	must.False(t, bytes.Contains(snap.Bytes(), []byte("s3cr3t-value")))

	var read structs.VariablesReadResponse
	must.NoError(t, s.RPC("Variables.Read", &structs.VariablesReadRequest{Path: "app/db"}, &read))
	must.Eq(t, structs.VariableItems{"password": "s3cr3t-value"}, read.Data.Items)
	must.Eq(t, written, read.Index)
	must.NoError(t, s.RPC("Variables.Read", &structs.VariablesReadRequest{Path: "nope"}, &read))
	must.Nil(t, read.Data)

	// Check-and-set: create-only on an existing variable is a conflict
	// showing what is there.
	cas := newVar("app/db", structs.VariableItems{"password": "other"})
	resp, err = applyVar(t, s, structs.VarOpCAS, cas, "")
	must.NoError(t, err)
	must.True(t, resp.IsConflict())
	must.Eq(t, written, resp.Conflict.ModifyIndex)
	must.Eq(t, "s3cr3t-value", resp.Conflict.Items["password"])
	cas.ModifyIndex = written
	resp, err = applyVar(t, s, structs.VarOpCAS, cas, "")
	must.NoError(t, err)
	must.Eq(t, structs.VarOpResultOk, resp.Result)

	invalid := []struct {
		op   structs.VarOp
		v    *structs.VariableDecrypted
		want string
	}{
		{structs.VarOpSet, newVar("a b", structs.VariableItems{"k": "v"}), `invalid path "a b"`},
		{structs.VarOpSet, newVar("a", nil), "variable missing required Items object"},
		{structs.VarOpSet, &structs.VariableDecrypted{VariableMetadata: structs.VariableMetadata{Path: "a",
			Lock: &structs.VariableLock{TTL: time.Minute}}, Items: structs.VariableItems{"k": "v"}}, "variable should not contain lock definition"},
		{structs.VarOpLockRelease, newVar("a", nil), "missing lock information"},
	}
	for _, c := range invalid {
		_, err := applyVar(t, s, c.op, c.v, "")
		must.ErrorIs(t, err, structs.ErrInvalid)
		must.ErrorContains(t, err, c.want)
	}

	var list structs.VariablesListResponse
	must.NoError(t, s.RPC("Variables.List", &structs.VariablesListRequest{
		QueryOptions: structs.QueryOptions{Namespace: "*", Prefix: "app"}}, &list))
	must.Len(t, 1, list.Data)
	must.Eq(t, "app/db", list.Data[0].Path)

	// The namespace and the root key it uses cannot go while it lives.
	must.NoError(t, s.RPC("Namespace.UpsertNamespaces", &structs.NamespaceUpsertRequest{
		Namespaces: []*structs.Namespace{{Name: "team"}}}, &structs.GenericResponse{}))
	inTeam := newVar("x", structs.VariableItems{"k": "v"})
	inTeam.Namespace = "team"
	_, err = applyVar(t, s, structs.VarOpSet, inTeam, "")
	must.NoError(t, err)
	err = s.RPC("Namespace.DeleteNamespaces", &structs.NamespaceDeleteRequest{Namespaces: []string{"team"}}, &structs.GenericResponse{})
	must.ErrorContains(t, err, `namespace "team" has variables associated with it`)

	var rotated structs.KeyringRotateResponse
	must.NoError(t, s.RPC("Keyring.Rotate", &structs.KeyringRotateRequest{}, &rotated))
	err = s.RPC("Keyring.Delete", &structs.KeyringDeleteRequest{KeyID: stored.KeyID}, &structs.KeyringDeleteResponse{})
	must.ErrorContains(t, err, "root key in use, cannot delete")
	// Variables sealed with the old key still open.
	must.NoError(t, s.RPC("Variables.Read", &structs.VariablesReadRequest{Path: "app/db"}, &read))
	must.Eq(t, "other", read.Data.Items["password"])

	resp, err = applyVar(t, s, structs.VarOpDelete, newVar("app/db", nil), "")
	must.NoError(t, err)
	must.Eq(t, structs.VarOpResultOk, resp.Result)
	must.NoError(t, s.RPC("Variables.Read", &structs.VariablesReadRequest{Path: "app/db"}, &read))
	must.Nil(t, read.Data)
}

// TestVariablesEndpoint_Locks: a lock taken keeps others out, is
// renewed and released by its ID, and is timed on the leader.
func TestVariablesEndpoint_Locks(t *testing.T) {
	s := newTestServer(t, nil)
	resp, err := applyVar(t, s, structs.VarOpLockAcquire, newVar("lock", structs.VariableItems{"k": "v"}), "")
	must.NoError(t, err)
	must.Eq(t, structs.VarOpResultOk, resp.Result)
	lock := resp.Output.Lock
	must.NotNil(t, lock)
	must.True(t, structs.IsUUID(lock.ID))
	must.Eq(t, structs.DefaultVariableLockTTL, lock.TTL)
	must.Eq(t, 1, s.variableLocks().(*varlocks.Timers).Len())

	resp, err = applyVar(t, s, structs.VarOpLockAcquire, newVar("lock", structs.VariableItems{"k": "v"}), "")
	must.NoError(t, err)
	must.True(t, resp.IsConflict())
	must.Eq(t, structs.VariableMetadata{Namespace: "default", Path: "lock"}, resp.Conflict.VariableMetadata)
	resp, err = applyVar(t, s, structs.VarOpSet, newVar("lock", structs.VariableItems{"k": "w"}), "")
	must.NoError(t, err)
	must.True(t, resp.IsConflict())

	withID := func(id string) *structs.VariableDecrypted {
		v := newVar("lock", nil)
		v.Lock = &structs.VariableLock{ID: id}
		return v
	}
	resp, err = applyVar(t, s, structs.VarOpLockRenew, withID(lock.ID), "")
	must.NoError(t, err)
	must.Eq(t, structs.VarOpResultOk, resp.Result)
	resp, err = applyVar(t, s, structs.VarOpLockRenew, withID("other"), "")
	must.NoError(t, err)
	must.Eq(t, "attempting to modify locked variable", resp.Refusal)
	_, err = applyVar(t, s, structs.VarOpLockRenew, func() *structs.VariableDecrypted {
		v := withID(lock.ID)
		v.Path = "none"
		return v
	}(), "")
	must.ErrorIs(t, err, structs.ErrNotFound)

	resp, err = applyVar(t, s, structs.VarOpLockRelease, withID("other"), "")
	must.NoError(t, err)
	must.True(t, resp.IsConflict())
	resp, err = applyVar(t, s, structs.VarOpLockRelease, withID(lock.ID), "")
	must.NoError(t, err)
	must.Eq(t, structs.VarOpResultOk, resp.Result)
	must.Nil(t, resp.Output.Lock)
	must.Eq(t, "v", resp.Output.Items["k"], must.Sprint("release keeps the items"))
	must.Eq(t, 0, s.variableLocks().(*varlocks.Timers).Len())

	// An expired lock is released through Raft by the leader.
	resp, err = applyVar(t, s, structs.VarOpLockAcquire, newVar("lock", structs.VariableItems{"k": "v"}), "")
	must.NoError(t, err)
	s.releaseExpiredVarLock("default", "lock", resp.Output.Lock.ID)
	stored, err := s.State().VariableByPath(nil, "default", "lock")
	must.NoError(t, err)
	must.Nil(t, stored.Lock)
}

// TestVariablesEndpoint_ACL: the variables rules of the token's policies
// decide per path; lists show what the token may list.
func TestVariablesEndpoint_ACL(t *testing.T) {
	s, boot := newBootstrappedACLServer(t, nil)
	mgmt := boot.SecretID
	for _, p := range []string{"app/one", "app/w/two", "secret/x"} {
		_, err := applyVar(t, s, structs.VarOpSet, newVar(p, structs.VariableItems{"k": p}), mgmt)
		must.NoError(t, err)
	}
	var wr structs.GenericResponse
	must.NoError(t, s.RPC("ACL.UpsertPolicies", &structs.ACLPolicyUpsertRequest{Policies: []*structs.ACLPolicy{
		{Name: "app", Rules: `namespace "default" {
			policy = "deny"
			variables {
				path "app/*" { capabilities = ["read"] }
				path "app/w/*" { capabilities = ["write", "destroy"] }
			}
		}`}}, WriteRequest: asTokenWrite(mgmt)}, &wr))
	var created structs.ACLTokenUpsertResponse
	must.NoError(t, s.RPC("ACL.UpsertTokens", &structs.ACLTokenUpsertRequest{Tokens: []*structs.ACLToken{
		{Name: "app", Type: structs.ACLClientToken, Policies: []string{"app"}}}, WriteRequest: asTokenWrite(mgmt)}, &created))
	app := created.Tokens[0].SecretID

	reads := []struct {
		path string
		ok   bool
	}{{"app/one", true}, {"secret/x", false}, {"app/w/two", false}}
	for _, c := range reads {
		var read structs.VariablesReadResponse
		err := s.RPC("Variables.Read", &structs.VariablesReadRequest{Path: c.path, QueryOptions: asTokenQuery(app)}, &read)
		if c.ok {
			must.NoError(t, err, must.Sprint(c.path))
			must.Eq(t, c.path, read.Data.Items["k"])
			continue
		}
		must.ErrorIs(t, err, structs.ErrPermissionDenied, must.Sprint(c.path))
	}

	writes := []struct {
		op   structs.VarOp
		path string
		ok   bool
	}{
		{structs.VarOpSet, "app/one", false},
		{structs.VarOpSet, "app/w/three", true},
		{structs.VarOpDelete, "app/w/three", true},
		{structs.VarOpDelete, "app/one", false},
		{structs.VarOpSet, "secret/x", false},
	}
	for _, c := range writes {
		_, err := applyVar(t, s, c.op, newVar(c.path, structs.VariableItems{"k": "v"}), app)
		if c.ok {
			must.NoError(t, err, must.Sprintf("%s %s", c.op, c.path))
			continue
		}
		must.ErrorIs(t, err, structs.ErrPermissionDenied, must.Sprintf("%s %s", c.op, c.path))
	}

	// A conflict shows items only to a token that may read them: the
	// write-only path's conflict comes without them.
	resp, err := applyVar(t, s, structs.VarOpCAS, newVar("app/w/two", structs.VariableItems{"k": "v"}), app)
	must.NoError(t, err)
	must.True(t, resp.IsConflict())
	must.Nil(t, resp.Conflict.Items)
	must.Positive(t, resp.Conflict.ModifyIndex)

	var list structs.VariablesListResponse
	must.NoError(t, s.RPC("Variables.List", &structs.VariablesListRequest{QueryOptions: asTokenQuery(app)}, &list))
	paths := []string{}
	for _, m := range list.Data {
		paths = append(paths, m.Path)
	}
	must.Eq(t, []string{"app/one"}, paths, must.Sprint("read implies list; write and destroy do not"))
	must.NoError(t, s.RPC("Variables.List", &structs.VariablesListRequest{QueryOptions: asTokenQuery("")}, &list))
	must.Len(t, 0, list.Data)
}

// TestVariables_FullRotationReseals: after a full rotation the leader
// seals every variable again with the new key, keeping its items, lock
// and creation, and the old key becomes inactive once none is left.
func TestVariables_FullRotationReseals(t *testing.T) {
	s := newTestServer(t, nil)
	_, err := applyVar(t, s, structs.VarOpSet, newVar("a", structs.VariableItems{"k": "a"}), "")
	must.NoError(t, err)
	locked, err := applyVar(t, s, structs.VarOpLockAcquire, newVar("b", structs.VariableItems{"k": "b"}), "")
	must.NoError(t, err)
	before, err := s.State().VariableByPath(nil, "default", "b")
	must.NoError(t, err)
	oldKey := before.KeyID

	var rotated structs.KeyringRotateResponse
	must.NoError(t, s.RPC("Keyring.Rotate", &structs.KeyringRotateRequest{Full: true}, &rotated))
	// The rotation wakes the leader's keyring tending, which seals the
	// variables again and retires the old key.
	waitForState(t, s, func(ws memdb.WatchSet, store *state.StateStore) (bool, string) {
		k, err := store.RootKeyByID(ws, oldKey)
		must.NoError(t, err)
		return k.Meta.State == structs.RootKeyStateInactive, "old key still " + k.Meta.State
	})
	vars, err := s.State().Variables(nil, "*", "")
	must.NoError(t, err)
	for _, v := range vars {
		must.Eq(t, rotated.Key.KeyID, v.KeyID, must.Sprint(v.Path))
		var read structs.VariablesReadResponse
		must.NoError(t, s.RPC("Variables.Read", &structs.VariablesReadRequest{Path: v.Path}, &read))
		must.Eq(t, v.Path, read.Data.Items["k"])
	}
	after, err := s.State().VariableByPath(nil, "default", "b")
	must.NoError(t, err)
	must.Eq(t, locked.Output.Lock.ID, after.Lock.ID)
	must.Eq(t, before.CreateIndex, after.CreateIndex)
	must.Eq(t, before.ModifyTime, after.ModifyTime)
	must.NoError(t, s.RPC("Keyring.Delete", &structs.KeyringDeleteRequest{KeyID: oldKey}, &structs.KeyringDeleteResponse{}))
}

// TestVariablesEndpoint_BlockingRead: a read waiting past the variable's
// index wakes when the variable is written.
func TestVariablesEndpoint_BlockingRead(t *testing.T) {
	s := newTestServer(t, nil)
	resp, err := applyVar(t, s, structs.VarOpSet, newVar("w", structs.VariableItems{"k": "1"}), "")
	must.NoError(t, err)
	done := make(chan *structs.VariablesReadResponse, 1)
	go func() {
		var read structs.VariablesReadResponse
		err := s.RPC("Variables.Read", &structs.VariablesReadRequest{Path: "w", QueryOptions: structs.QueryOptions{
			MinQueryIndex: resp.Output.ModifyIndex, MaxQueryTime: 10 * time.Second}}, &read)
		if err != nil {
			t.Error(err)
		}
		done <- &read
	}()
	_, err = applyVar(t, s, structs.VarOpSet, newVar("w", structs.VariableItems{"k": "2"}), "")
	must.NoError(t, err)
	select {
	case read := <-done:
		must.Eq(t, "2", read.Data.Items["k"])
		must.Greater(t, resp.Output.ModifyIndex, read.Index)
	case <-time.After(10 * time.Second):
		t.Fatal("the blocking read did not wake")
	}
}
