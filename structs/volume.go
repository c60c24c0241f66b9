package structs

import (
	"fmt"
	"path"
	"slices"
	"strconv"
)

// Volume types a group's `volume` block may ask for.
const (
	VolumeTypeHost = "host"
	VolumeTypeCSI  = "csi"
)

// Access and attachment modes of a volume request (Nomad's names).
const (
	VolumeAccessModeSingleNodeReader       = "single-node-reader-only"
	VolumeAccessModeSingleNodeWriter       = "single-node-writer"
	VolumeAccessModeSingleNodeSingleWriter = "single-node-single-writer"
	VolumeAccessModeSingleNodeMultiWriter  = "single-node-multi-writer"

	VolumeAttachmentModeFilesystem  = "file-system"
	VolumeAttachmentModeBlockDevice = "block-device"
)

// Mount propagation modes of a volume_mount.
const (
	VolumeMountPropagationPrivate       = "private"
	VolumeMountPropagationHostToTask    = "host-to-task"
	VolumeMountPropagationBidirectional = "bidirectional"
)

// VolumeRequest is a group's `volume "<name>"` block: a volume its tasks
// may mount. For a host volume, Source names the node's volume.
type VolumeRequest struct {
	Name           string
	Type           string
	Source         string
	ReadOnly       bool
	Sticky         bool
	AccessMode     string
	AttachmentMode string
	MountOptions   *CSIMountOptions
	// PerAlloc makes each alloc ask for "<source>[<alloc index>]".
	PerAlloc bool
}

// CSIMountOptions tunes how a CSI volume is mounted; kept so a job reads
// back as written, never acted on.
type CSIMountOptions struct {
	FSType     string
	MountFlags []string
}

// VolumeMount is a task's `volume_mount` block: where one of its group's
// volumes appears inside the task.
type VolumeMount struct {
	Volume          string
	Destination     string
	ReadOnly        bool
	PropagationMode string
	SELinuxLabel    string
}

// SourceFor is the name of the node volume the alloc with this index
// needs: the source itself, or "<source>[<index>]" for per_alloc.
func (v *VolumeRequest) SourceFor(allocIndex uint) string {
	if !v.PerAlloc {
		return v.Source
	}
	return v.Source + "[" + strconv.FormatUint(uint64(allocIndex), 10) + "]"
}

// Writes reports whether the request needs to write to the volume: it is
// not read-only and its access mode is not the reader's.
func (v *VolumeRequest) Writes() bool {
	return !v.ReadOnly && v.AccessMode != VolumeAccessModeSingleNodeReader
}

// Copy returns a deep copy.
func (v *VolumeRequest) Copy() *VolumeRequest {
	if v == nil {
		return nil
	}
	c := *v
	if v.MountOptions != nil {
		mo := *v.MountOptions
		mo.MountFlags = slices.Clone(v.MountOptions.MountFlags)
		c.MountOptions = &mo
	}
	return &c
}

// CopyVolumeRequests deep-copies a group's volumes.
func CopyVolumeRequests(in map[string]*VolumeRequest) map[string]*VolumeRequest {
	if in == nil {
		return nil
	}
	out := make(map[string]*VolumeRequest, len(in))
	for k, v := range in {
		out[k] = v.Copy()
	}
	return out
}

// CopyVolumeMounts deep-copies a task's volume mounts.
func CopyVolumeMounts(in []*VolumeMount) []*VolumeMount {
	if in == nil {
		return nil
	}
	out := make([]*VolumeMount, len(in))
	for i, m := range in {
		if m != nil {
			c := *m
			out[i] = &c
		}
	}
	return out
}

// HostVolumes returns the group's host volume requests, sorted by name so
// that checks and their failures are deterministic.
func (tg *TaskGroup) HostVolumes() []*VolumeRequest {
	var out []*VolumeRequest
	for _, name := range sortedKeys(tg.Volumes) {
		if v := tg.Volumes[name]; v != nil && v.Type == VolumeTypeHost {
			out = append(out, v)
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// validateVolumes checks the group's volume blocks and every task's
// volume_mounts against them.
func (tg *TaskGroup) validateVolumes(p *problems, prefix string) {
	for _, name := range sortedKeys(tg.Volumes) {
		v := tg.Volumes[name]
		vprefix := joinPath(prefix, fmt.Sprintf("volume %q", name))
		if v == nil {
			p.add(vprefix, "volume is empty")
			continue
		}
		v.validate(p, vprefix, name, tg)
	}
	for i, t := range tg.Tasks {
		if t == nil {
			continue
		}
		tprefix := joinPath(prefix, taskPathElem(t, i))
		dests := map[string]bool{}
		for k, m := range t.VolumeMounts {
			mprefix := joinPath(tprefix, fmt.Sprintf("volume_mount %d", k+1))
			if m == nil {
				p.add(mprefix, "volume_mount is empty")
				continue
			}
			switch {
			case m.Volume == "":
				p.add(mprefix, "volume is required: the name of one of the group's volume blocks")
			case tg.Volumes[m.Volume] == nil:
				p.add(mprefix, "volume %q is not one of the group's volume blocks", m.Volume)
			}
			switch {
			case m.Destination == "":
				p.add(mprefix, "destination is required")
			case dests[path.Clean(m.Destination)]:
				p.add(mprefix, "destination %q is already mounted by another volume_mount", m.Destination)
			}
			dests[path.Clean(m.Destination)] = true
			switch m.PropagationMode {
			case "", VolumeMountPropagationPrivate, VolumeMountPropagationHostToTask, VolumeMountPropagationBidirectional:
			default:
				p.add(mprefix, "propagation_mode %q must be private, host-to-task or bidirectional", m.PropagationMode)
			}
		}
	}
}

func (v *VolumeRequest) validate(p *problems, prefix, key string, tg *TaskGroup) {
	if v.Name != "" && v.Name != key {
		p.add(prefix, "name %q differs from the block's label", v.Name)
	}
	switch v.Type {
	case VolumeTypeHost:
	case VolumeTypeCSI:
		p.add(prefix, "type %q is not supported by this server (host volumes are)", v.Type)
		return
	case "":
		p.add(prefix, "type is required: \"host\"")
		return
	default:
		p.add(prefix, "type %q must be \"host\" or \"csi\"", v.Type)
		return
	}
	if v.Source == "" {
		p.add(prefix, "source is required: the name of a host volume the node offers")
	}
	if v.MountOptions != nil {
		p.add(prefix, "mount_options are only for csi volumes")
	}
	switch v.AccessMode {
	case "", VolumeAccessModeSingleNodeReader, VolumeAccessModeSingleNodeWriter,
		VolumeAccessModeSingleNodeSingleWriter, VolumeAccessModeSingleNodeMultiWriter:
	default:
		p.add(prefix, "access_mode %q must be one of %s, %s, %s or %s", v.AccessMode,
			VolumeAccessModeSingleNodeReader, VolumeAccessModeSingleNodeWriter,
			VolumeAccessModeSingleNodeSingleWriter, VolumeAccessModeSingleNodeMultiWriter)
	}
	switch v.AttachmentMode {
	case "", VolumeAttachmentModeFilesystem, VolumeAttachmentModeBlockDevice:
	default:
		p.add(prefix, "attachment_mode %q must be %s or %s", v.AttachmentMode,
			VolumeAttachmentModeFilesystem, VolumeAttachmentModeBlockDevice)
	}
	if v.ReadOnly && v.AccessMode != "" && v.AccessMode != VolumeAccessModeSingleNodeReader {
		p.add(prefix, "read_only conflicts with access_mode %q, a writer's", v.AccessMode)
	}
	if v.PerAlloc && tg.Update != nil && tg.Update.Canary > 0 {
		// A canary shares its index with the alloc it may replace, so
		// both would claim the same per-alloc volume.
		p.add(prefix, "per_alloc volumes cannot be used with canaries")
	}
}
