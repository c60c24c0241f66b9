package fsm

import (
	"bytes"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// TestFSM_Namespaces applies namespaces through Raft entries: written,
// changed, a refused removal of the default namespace (state unchanged),
// a removal; then through a snapshot and back.
func TestFSM_Namespaces(t *testing.T) {
	f, _ := newTestFSM(t)
	mustApply(t, f, 10, structs.NamespaceUpsertRequestType, &structs.NamespaceUpsertRequest{
		Namespaces: []*structs.Namespace{structs.NewDefaultNamespace(), {Name: "a"}, {Name: "b",
			Capabilities: &structs.NamespaceCapabilities{DisabledTaskDrivers: []string{"raw_exec"}}}}})
	mustApply(t, f, 11, structs.NamespaceUpsertRequestType, &structs.NamespaceUpsertRequest{
		Namespaces: []*structs.Namespace{{Name: "a", Description: "changed"}}})

	err := mustFail(t, f, 12, structs.NamespaceDeleteRequestType, &structs.NamespaceDeleteRequest{Namespaces: []string{"b", "default"}})
	must.ErrorContains(t, err, "can not delete default namespace")
	err = mustFail(t, f, 13, structs.NamespaceUpsertRequestType, &structs.NamespaceUpsertRequest{
		Namespaces: []*structs.Namespace{{Name: "*"}}})
	must.ErrorIs(t, err, structs.ErrInvalid)
	mustApply(t, f, 14, structs.NamespaceDeleteRequestType, &structs.NamespaceDeleteRequest{Namespaces: []string{"b"}})

	list, err := f.State().Namespaces(nil, "")
	must.NoError(t, err)
	must.Len(t, 2, list)
	must.Eq(t, "a", list[0].Name)
	must.Eq(t, "changed", list[0].Description)
	must.Eq(t, uint64(10), list[0].CreateIndex)
	must.Eq(t, uint64(11), list[0].ModifyIndex)

	var buf bytes.Buffer
	must.NoError(t, f.State().Snapshot().Persist(&buf))
	restored, err := state.Restore(&buf, nil)
	must.NoError(t, err)
	back, err := restored.Namespaces(nil, "")
	must.NoError(t, err)
	must.Eq(t, list, back)
}
