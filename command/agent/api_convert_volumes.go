package agent

import (
	"slices"

	"github.com/opennomad/nomad/api"
	"github.com/opennomad/nomad/structs"
)

// convertVolumes converts a group's volume blocks. The map key is the
// block's label; a block that leaves its Name out takes it. Nil entries
// stay nil so that validation can name them.
func convertVolumes(in map[string]*api.VolumeRequest) map[string]*structs.VolumeRequest {
	if in == nil {
		return nil
	}
	out := make(map[string]*structs.VolumeRequest, len(in))
	for key, v := range in {
		if v == nil {
			out[key] = nil
			continue
		}
		r := &structs.VolumeRequest{
			Name:           v.Name,
			Type:           v.Type,
			Source:         v.Source,
			ReadOnly:       v.ReadOnly,
			Sticky:         v.Sticky,
			AccessMode:     v.AccessMode,
			AttachmentMode: v.AttachmentMode,
			PerAlloc:       v.PerAlloc,
		}
		if r.Name == "" {
			r.Name = key
		}
		if mo := v.MountOptions; mo != nil {
			r.MountOptions = &structs.CSIMountOptions{FSType: mo.FSType, MountFlags: slices.Clone(mo.MountFlags)}
		}
		out[key] = r
	}
	return out
}

// convertVolumeMounts converts a task's volume_mount blocks, canonicalized
// (private propagation, read-write unless asked).
func convertVolumeMounts(in []*api.VolumeMount) []*structs.VolumeMount {
	if in == nil {
		return nil
	}
	out := make([]*structs.VolumeMount, len(in))
	for i, m := range in {
		if m == nil {
			continue
		}
		m.Canonicalize()
		out[i] = &structs.VolumeMount{
			Volume:          deref(m.Volume),
			Destination:     deref(m.Destination),
			ReadOnly:        deref(m.ReadOnly),
			PropagationMode: deref(m.PropagationMode),
			SELinuxLabel:    deref(m.SELinuxLabel),
		}
	}
	return out
}
