package fsm

import (
	"bytes"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// TestFSM_NodePools applies node pools through Raft entries: written,
// changed, refused changes and removals of built-in pools (state
// unchanged), a node registration creating its pool, a removal; then
// through a snapshot and back.
func TestFSM_NodePools(t *testing.T) {
	f, _ := newTestFSM(t)
	mustApply(t, f, 10, structs.NodePoolUpsertRequestType, &structs.NodePoolUpsertRequest{
		NodePools: append(structs.BuiltInNodePools(), &structs.NodePool{Name: "a"}, &structs.NodePool{Name: "b"})})
	mustApply(t, f, 11, structs.NodePoolUpsertRequestType, &structs.NodePoolUpsertRequest{
		NodePools: []*structs.NodePool{{Name: "a", Description: "changed", NodeIdentityTTL: time.Hour}}})

	err := mustFail(t, f, 12, structs.NodePoolDeleteRequestType, &structs.NodePoolDeleteRequest{Names: []string{"b", "all"}})
	must.ErrorContains(t, err, `deleting node pool "all" is not allowed`)
	err = mustFail(t, f, 13, structs.NodePoolUpsertRequestType, &structs.NodePoolUpsertRequest{
		NodePools: []*structs.NodePool{{Name: "default", Description: "mine"}}})
	must.ErrorIs(t, err, structs.ErrInvalid)
	mustApply(t, f, 14, structs.NodePoolDeleteRequestType, &structs.NodePoolDeleteRequest{Names: []string{"b"}})

	node := &structs.Node{ID: structs.GenerateUUID(), SecretID: structs.GenerateUUID(), Name: "n", Datacenter: "dc1",
		NodePool: "gpu", Status: structs.NodeStatusInit}
	mustApply(t, f, 15, structs.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: node})

	list, err := f.State().NodePools(nil, "")
	must.NoError(t, err)
	must.Len(t, 4, list)
	must.Eq(t, "a", list[0].Name)
	must.Eq(t, "changed", list[0].Description)
	must.Eq(t, time.Hour, list[0].NodeIdentityTTL)
	must.Eq(t, uint64(10), list[0].CreateIndex)
	must.Eq(t, uint64(11), list[0].ModifyIndex)
	must.Eq(t, "default", list[2].Name)
	must.Eq(t, structs.NodePoolDefaultDescription, list[2].Description)
	must.Eq(t, "gpu", list[3].Name)
	must.Eq(t, uint64(15), list[3].CreateIndex)

	var buf bytes.Buffer
	must.NoError(t, f.State().Snapshot().Persist(&buf))
	restored, err := state.Restore(&buf, nil)
	must.NoError(t, err)
	back, err := restored.NodePools(nil, "")
	must.NoError(t, err)
	must.Eq(t, list, back)
}
