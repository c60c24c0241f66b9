package fsm

import (
	"bytes"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// TestFSM_Variables applies variable writes through Raft entries: a set,
// a check-and-set conflict answered as a response (not an error), an
// unknown operation refused; then through a snapshot and back.
func TestFSM_Variables(t *testing.T) {
	f, _ := newTestFSM(t)
	v := &structs.VariableEncrypted{
		VariableMetadata: structs.VariableMetadata{Namespace: "default", Path: "a/b", ModifyTime: 5},
		VariableData:     structs.VariableData{Data: []byte("sealed"), KeyID: "k"},
	}
	resp := applyEntry(t, f, 10, structs.VarApplyStateRequestType, &structs.VarApplyStateRequest{Op: structs.VarOpSet, Var: v})
	must.Eq(t, structs.VarOpResultOk, resp.(*structs.VarApplyStateResponse).Result)

	resp = applyEntry(t, f, 11, structs.VarApplyStateRequestType, &structs.VarApplyStateRequest{Op: structs.VarOpCAS, Var: v})
	got := resp.(*structs.VarApplyStateResponse)
	must.Eq(t, structs.VarOpResultConflict, got.Result)
	must.Eq(t, uint64(10), got.Conflict.ModifyIndex)

	err := mustFail(t, f, 12, structs.VarApplyStateRequestType, &structs.VarApplyStateRequest{Op: "rename", Var: v})
	must.ErrorIs(t, err, structs.ErrInvalid)

	list, err := f.State().Variables(nil, "*", "")
	must.NoError(t, err)
	var buf bytes.Buffer
	must.NoError(t, f.State().Snapshot().Persist(&buf))
	restored, err := state.Restore(&buf, nil)
	must.NoError(t, err)
	back, err := restored.Variables(nil, "*", "")
	must.NoError(t, err)
	must.Eq(t, list, back)
	must.Eq(t, []byte("sealed"), back[0].Data)
}
