package fsm

import (
	"bytes"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// TestFSM_HostVolumes applies host volumes through Raft entries: written,
// a refused one (its node is unknown; state unchanged), deleted; then
// through a snapshot and back.
func TestFSM_HostVolumes(t *testing.T) {
	f, _ := newTestFSM(t)
	node := mock.Node()
	mustApply(t, f, 10, structs.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: node})
	vol := func(name, nodeID string) *structs.HostVolume {
		return &structs.HostVolume{Namespace: "default", ID: structs.GenerateUUID(), Name: name, NodeID: nodeID,
			PluginID: structs.HostVolumePluginMkdir}
	}
	a, b := vol("a", node.ID), vol("b", node.ID)
	mustApply(t, f, 11, structs.HostVolumeApplyRequestType, &structs.HostVolumeApplyRequest{
		Op: structs.HostVolumeOpUpsert, Volumes: []*structs.HostVolume{a, b}})
	err := mustFail(t, f, 12, structs.HostVolumeApplyRequestType, &structs.HostVolumeApplyRequest{
		Op: structs.HostVolumeOpUpsert, Volumes: []*structs.HostVolume{vol("c", "no-such-node")}})
	must.ErrorIs(t, err, structs.ErrInvalid)
	err = mustFail(t, f, 13, structs.HostVolumeApplyRequestType, &structs.HostVolumeApplyRequest{Op: "rename"})
	must.ErrorIs(t, err, structs.ErrInvalid)
	mustApply(t, f, 14, structs.HostVolumeApplyRequestType, &structs.HostVolumeApplyRequest{
		Op: structs.HostVolumeOpDelete, VolumeID: b.ID})

	list, err := f.State().HostVolumes(nil)
	must.NoError(t, err)
	must.Len(t, 1, list)
	must.Eq(t, a.ID, list[0].ID)
	must.Eq(t, structs.HostVolumeStatePending, list[0].State)

	var buf bytes.Buffer
	must.NoError(t, f.State().Snapshot().Persist(&buf))
	restored, err := state.Restore(&buf, nil)
	must.NoError(t, err)
	back, err := restored.HostVolumes(nil)
	must.NoError(t, err)
	must.Eq(t, list, back)
}
