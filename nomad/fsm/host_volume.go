package fsm

import (
	"github.com/opennomad/nomad/structs"
)

// Host volume entries: dynamic host volumes written or removed, one
// entry type whose Op says which. The state store sets each volume's
// state from its node's report.

func (f *FSM) applyHostVolume(body []byte, index uint64) interface{} {
	var req structs.HostVolumeApplyRequest
	if err := decode(body, structs.HostVolumeApplyRequestType, &req); err != nil {
		return err
	}
	switch req.Op {
	case structs.HostVolumeOpUpsert:
		return f.State().UpsertHostVolumes(index, req.Volumes)
	case structs.HostVolumeOpDelete:
		return f.State().DeleteHostVolume(index, req.VolumeID)
	}
	return structs.KindErrorf(structs.ErrInvalid, "host volume entry: unknown op %q", req.Op)
}
