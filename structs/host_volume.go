package structs

import (
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
)

// Dynamic host volumes: volumes of one node made (`create`, by the
// client's built-in mkdir plugin) or recorded (`register`, a directory
// that already exists) through the API, rather than written in the
// client's configuration. The node reports each one it has in
// Node.HostVolumes, with the volume's ID; the volume is ready once it
// does, so the scheduler places on it exactly as on a static volume.

// Host volume states.
const (
	HostVolumeStatePending     = "pending"
	HostVolumeStateReady       = "ready"
	HostVolumeStateUnavailable = "unavailable"
)

// HostVolumePluginMkdir is the client's built-in plugin: a directory
// under the client's host_volumes_dir named by the volume's ID.
const HostVolumePluginMkdir = "mkdir"

var validHostVolumeName = regexp.MustCompile(`^[a-zA-Z0-9-_]{1,128}$`)

// HostVolume is a dynamic host volume. Its JSON is Nomad's.
type HostVolume struct {
	Namespace string
	ID        string
	Name      string
	// PluginID is "mkdir" for a created volume, "" for a registered one.
	PluginID string
	NodePool string
	NodeID   string
	// Constraints pick (or check) the node.
	Constraints []*Constraint

	RequestedCapacityMinBytes int64
	RequestedCapacityMaxBytes int64
	CapacityBytes             int64
	RequestedCapabilities     []*HostVolumeCapability
	Parameters                map[string]string

	// HostPath is where the volume lives on its node.
	HostPath string
	State    string

	CreateIndex uint64
	CreateTime  int64
	ModifyIndex uint64
	ModifyTime  int64

	// Allocations are the non-terminal allocs of the volume's node that
	// mount it, filled on read and never written.
	Allocations []*AllocListStub `json:",omitempty"`
}

// HostVolumeCapability is one attachment and access mode a volume offers.
type HostVolumeCapability struct {
	AttachmentMode string
	AccessMode     string
}

// HostVolumeStub is the list view of a volume.
type HostVolumeStub struct {
	Namespace     string
	ID            string
	Name          string
	PluginID      string
	NodePool      string
	NodeID        string
	CapacityBytes int64
	State         string
	CreateIndex   uint64
	CreateTime    int64
	ModifyIndex   uint64
	ModifyTime    int64
}

// Copy returns a deep copy.
func (v *HostVolume) Copy() *HostVolume {
	if v == nil {
		return nil
	}
	c := *v
	c.Constraints = CopyConstraints(v.Constraints)
	if v.RequestedCapabilities != nil {
		c.RequestedCapabilities = make([]*HostVolumeCapability, len(v.RequestedCapabilities))
		for i, rc := range v.RequestedCapabilities {
			if rc != nil {
				cc := *rc
				c.RequestedCapabilities[i] = &cc
			}
		}
	}
	c.Parameters = maps.Clone(v.Parameters)
	c.Allocations = slices.Clone(v.Allocations)
	return &c
}

// Stub returns the list view.
func (v *HostVolume) Stub() *HostVolumeStub {
	return &HostVolumeStub{
		Namespace: v.Namespace, ID: v.ID, Name: v.Name, PluginID: v.PluginID, NodePool: v.NodePool,
		NodeID: v.NodeID, CapacityBytes: v.CapacityBytes, State: v.State,
		CreateIndex: v.CreateIndex, CreateTime: v.CreateTime, ModifyIndex: v.ModifyIndex, ModifyTime: v.ModifyTime,
	}
}

// Validate checks what a user writes; registered says whether the volume
// must name its existing path.
func (v *HostVolume) Validate(registered bool) error {
	var p problems
	if !validHostVolumeName.MatchString(v.Name) {
		p.add("", "name %q must be 1-128 letters, digits, - or _", v.Name)
	}
	if v.RequestedCapacityMinBytes < 0 || v.RequestedCapacityMaxBytes < 0 {
		p.add("", "capacity_min and capacity_max must be >= 0")
	}
	if v.RequestedCapacityMaxBytes > 0 && v.RequestedCapacityMinBytes > v.RequestedCapacityMaxBytes {
		p.add("", "capacity_min (%d) must not exceed capacity_max (%d)", v.RequestedCapacityMinBytes, v.RequestedCapacityMaxBytes)
	}
	for i, c := range v.RequestedCapabilities {
		prefix := fmt.Sprintf("capability %d", i+1)
		if c == nil {
			p.add(prefix, "capability is empty")
			continue
		}
		switch c.AttachmentMode {
		case VolumeAttachmentModeFilesystem, VolumeAttachmentModeBlockDevice:
		default:
			p.add(prefix, "attachment_mode %q must be %s or %s", c.AttachmentMode, VolumeAttachmentModeFilesystem, VolumeAttachmentModeBlockDevice)
		}
		switch c.AccessMode {
		case VolumeAccessModeSingleNodeReader, VolumeAccessModeSingleNodeWriter,
			VolumeAccessModeSingleNodeSingleWriter, VolumeAccessModeSingleNodeMultiWriter:
		default:
			p.add(prefix, "access_mode %q is not a host volume access mode", c.AccessMode)
		}
	}
	validateConstraints(&p, "", v.Constraints, false)
	switch {
	case registered && v.NodeID == "":
		p.add("", "node_id is required: a registered volume already exists on one node")
	case registered && v.HostPath == "":
		p.add("", "host_path is required: where the volume already exists on its node")
	case registered && !filepath.IsAbs(v.HostPath):
		p.add("", "host_path %q must be absolute", v.HostPath)
	case !registered && v.PluginID != "" && v.PluginID != HostVolumePluginMkdir:
		p.add("", "plugin_id %q is not supported: this server's clients have the built-in %q plugin only", v.PluginID, HostVolumePluginMkdir)
	case !registered && v.HostPath != "":
		p.add("", "host_path is chosen by the plugin when a volume is created; register an existing path instead")
	}
	return p.err()
}

// HostVolumeCreateRequest creates (Create) or registers (Register) a
// volume: the HostVolume.Create and HostVolume.Register RPCs.
type HostVolumeCreateRequest struct {
	Volume         *HostVolume
	PolicyOverride bool
	WriteRequest
}

// HostVolumeCreateResponse answers both.
type HostVolumeCreateResponse struct {
	Volume   *HostVolume
	Warnings string
	WriteMeta
}

// Ops of a HostVolumeApplyRequest.
const (
	HostVolumeOpUpsert = "upsert"
	HostVolumeOpDelete = "delete"
)

// HostVolumeApplyRequest is the Raft entry of every write to host
// volumes: Op upsert writes Volumes, Op delete removes VolumeID.
type HostVolumeApplyRequest struct {
	Op       string
	Volumes  []*HostVolume
	VolumeID string
	WriteRequest
}

// HostVolumeDeleteRequest deletes one volume: HostVolume.Delete.
type HostVolumeDeleteRequest struct {
	VolumeID string
	Force    bool
	WriteRequest
}

// HostVolumeDeleteResponse answers HostVolume.Delete.
type HostVolumeDeleteResponse struct {
	WriteMeta
}

// HostVolumeGetRequest reads one volume.
type HostVolumeGetRequest struct {
	ID string
	QueryOptions
}

// HostVolumeGetResponse answers HostVolume.Get; Volume is nil when none.
type HostVolumeGetResponse struct {
	Volume *HostVolume
	QueryMeta
}

// HostVolumeListRequest lists volumes, by node or node pool when set.
type HostVolumeListRequest struct {
	NodeID   string
	NodePool string
	QueryOptions
}

// HostVolumeListResponse answers HostVolume.List.
type HostVolumeListResponse struct {
	Volumes []*HostVolumeStub
	QueryMeta
}

// HostVolumeNodeRequest is a client's blocking read of its node's
// volumes (HostVolume.ListForNode).
type HostVolumeNodeRequest struct {
	NodeID   string
	SecretID string
	QueryOptions
}

// HostVolumeNodeResponse answers it with full volumes.
type HostVolumeNodeResponse struct {
	Volumes []*HostVolume
	QueryMeta
}
