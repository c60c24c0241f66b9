package state

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

func mockHostVolume(nodeID, name string) *structs.HostVolume {
	return &structs.HostVolume{
		Namespace: structs.DefaultNamespace, ID: structs.GenerateUUID(), Name: name, NodeID: nodeID,
		PluginID: structs.HostVolumePluginMkdir, CreateTime: 1_700_000_000, ModifyTime: 1_700_000_000,
		RequestedCapabilities: []*structs.HostVolumeCapability{{
			AttachmentMode: structs.VolumeAttachmentModeFilesystem, AccessMode: structs.VolumeAccessModeSingleNodeWriter}},
		Parameters: map[string]string{"mode": "0755"},
	}
}

// A volume's state follows its node's report: pending until the node
// reports it, ready (with the node's path) while it does, unavailable
// once it stops.
func TestHostVolumes_StateFollowsTheNode(t *testing.T) {
	s := testStore(t)
	node := mockNode()
	node.NodePool = "gpu"
	must.NoError(t, s.UpsertNode(10, node))
	v := mockHostVolume(node.ID, "data")
	must.NoError(t, s.UpsertHostVolumes(11, []*structs.HostVolume{v}))
	got, err := s.HostVolumeByID(nil, v.ID)
	must.NoError(t, err)
	must.Eq(t, structs.HostVolumeStatePending, got.State)
	must.Eq(t, "gpu", got.NodePool)
	must.Eq(t, uint64(11), got.CreateIndex)
	must.Eq(t, "", v.State, must.Sprint("the caller's object is not written"))

	reporting := node.Copy()
	reporting.HostVolumes = map[string]*structs.ClientHostVolumeConfig{"data": {Name: "data", Path: "/srv/hv/" + v.ID, ID: v.ID}}
	must.NoError(t, s.UpsertNode(12, reporting))
	got, _ = s.HostVolumeByID(nil, v.ID)
	must.Eq(t, structs.HostVolumeStateReady, got.State)
	must.Eq(t, "/srv/hv/"+v.ID, got.HostPath)
	must.Eq(t, uint64(12), got.ModifyIndex)
	idx, _ := s.Index(TableHostVolumes)
	must.Eq(t, uint64(12), idx)

	// The same report again changes nothing.
	must.NoError(t, s.UpsertNode(13, reporting.Copy()))
	got, _ = s.HostVolumeByID(nil, v.ID)
	must.Eq(t, uint64(12), got.ModifyIndex)

	must.NoError(t, s.UpsertNode(14, node.Copy()))
	got, _ = s.HostVolumeByID(nil, v.ID)
	must.Eq(t, structs.HostVolumeStateUnavailable, got.State)

	byNode, err := s.HostVolumesByNodeID(nil, node.ID)
	must.NoError(t, err)
	must.Len(t, 1, byNode)

	must.NoError(t, s.DeleteHostVolume(15, v.ID))
	got, _ = s.HostVolumeByID(nil, v.ID)
	must.Nil(t, got)
	must.ErrorIs(t, s.DeleteHostVolume(16, v.ID), structs.ErrNotFound)
}

func TestHostVolumes_Refusals(t *testing.T) {
	s := testStore(t)
	node, other := mockNode(), mockNode()
	must.NoError(t, s.UpsertNode(10, node))
	must.NoError(t, s.UpsertNode(11, other))
	must.ErrorIs(t, s.UpsertHostVolumes(12, []*structs.HostVolume{mockHostVolume("nope", "x")}), structs.ErrInvalid)
	v := mockHostVolume(node.ID, "x")
	must.NoError(t, s.UpsertHostVolumes(13, []*structs.HostVolume{v}))
	moved := v.Copy()
	moved.NodeID = other.ID
	must.ErrorIs(t, s.UpsertHostVolumes(14, []*structs.HostVolume{moved}), structs.ErrInvalid)
	all, err := s.HostVolumes(nil)
	must.NoError(t, err)
	must.Len(t, 1, all)
	must.Eq(t, node.ID, all[0].NodeID)
}
