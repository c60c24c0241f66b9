package api

import (
	"net/http"
	"net/url"
)

// HostVolume is a dynamic host volume: a volume of one node, made or
// recorded through the API rather than the client's configuration.
type HostVolume struct {
	Namespace string `hcl:"namespace"`
	ID        string `hcl:"id"`
	Name      string `hcl:"name"`
	// PluginID is "mkdir" (the client's built-in plugin) for a created
	// volume; empty for a registered one.
	PluginID string `hcl:"plugin_id"`
	NodePool string `hcl:"node_pool"`
	NodeID   string `hcl:"node_id"`
	// Constraints pick the node when NodeID is empty, and are checked
	// against it otherwise.
	Constraints []*Constraint `json:",omitempty" hcl:"constraint"`

	RequestedCapacityMinBytes int64                   `hcl:"capacity_min"`
	RequestedCapacityMaxBytes int64                   `hcl:"capacity_max"`
	CapacityBytes             int64                   `hcl:"capacity"`
	RequestedCapabilities     []*HostVolumeCapability `hcl:"capability"`
	Parameters                map[string]string       `json:",omitempty"`

	// HostPath is where the volume is on its node.
	HostPath string `hcl:"host_path"`
	State    HostVolumeState

	CreateIndex uint64
	CreateTime  int64
	ModifyIndex uint64
	ModifyTime  int64

	// Allocations mount the volume; filled on read.
	Allocations []*AllocationListStub `json:",omitempty" hcl:"-"`
}

// HostVolumeState is pending, ready or unavailable.
type HostVolumeState string

// Host volume states.
const (
	HostVolumeStatePending     HostVolumeState = "pending"
	HostVolumeStateReady       HostVolumeState = "ready"
	HostVolumeStateUnavailable HostVolumeState = "unavailable"
)

// HostVolumeCapability is an attachment and access mode a volume offers.
type HostVolumeCapability struct {
	AttachmentMode HostVolumeAttachmentMode `hcl:"attachment_mode"`
	AccessMode     HostVolumeAccessMode     `hcl:"access_mode"`
}

// HostVolumeAttachmentMode is file-system or block-device.
type HostVolumeAttachmentMode string

// HostVolumeAccessMode is how allocations may share the volume.
type HostVolumeAccessMode string

// Attachment and access modes.
const (
	HostVolumeAttachmentModeFilesystem  HostVolumeAttachmentMode = "file-system"
	HostVolumeAttachmentModeBlockDevice HostVolumeAttachmentMode = "block-device"

	HostVolumeAccessModeSingleNodeReader       HostVolumeAccessMode = "single-node-reader-only"
	HostVolumeAccessModeSingleNodeWriter       HostVolumeAccessMode = "single-node-writer"
	HostVolumeAccessModeSingleNodeSingleWriter HostVolumeAccessMode = "single-node-single-writer"
	HostVolumeAccessModeSingleNodeMultiWriter  HostVolumeAccessMode = "single-node-multi-writer"
)

// HostVolumeStub is the list view of a volume.
type HostVolumeStub struct {
	Namespace     string
	ID            string
	Name          string
	PluginID      string
	NodePool      string
	NodeID        string
	CapacityBytes int64
	State         HostVolumeState
	CreateIndex   uint64
	CreateTime    int64
	ModifyIndex   uint64
	ModifyTime    int64
}

// HostVolumeCreateRequest is the body of create and register.
type HostVolumeCreateRequest struct {
	Volume         *HostVolume
	PolicyOverride bool
}

// HostVolumeRegisterRequest is the body of register.
type HostVolumeRegisterRequest = HostVolumeCreateRequest

// HostVolumeCreateResponse answers create and register.
type HostVolumeCreateResponse struct {
	Volume   *HostVolume
	Warnings string
}

// HostVolumeRegisterResponse answers register.
type HostVolumeRegisterResponse = HostVolumeCreateResponse

// HostVolumeListRequest narrows a list to a node or a node pool.
type HostVolumeListRequest struct {
	NodeID   string
	NodePool string
}

// HostVolumeDeleteRequest names the volume to delete.
type HostVolumeDeleteRequest struct {
	ID    string
	Force bool
}

// HostVolumeDeleteResponse answers a delete.
type HostVolumeDeleteResponse struct{}

// HostVolumes is the host volumes API.
type HostVolumes struct {
	client *Client
}

// HostVolumes returns a handle on the host volumes API.
func (c *Client) HostVolumes() *HostVolumes { return &HostVolumes{client: c} }

// Create asks the node's client to make the volume (mkdir plugin) and
// records it.
func (h *HostVolumes) Create(req *HostVolumeCreateRequest, w *WriteOptions) (*HostVolumeCreateResponse, *WriteMeta, error) {
	var out HostVolumeCreateResponse
	wm, err := h.client.write(http.MethodPut, "/v1/volume/host/create", req, &out, w)
	if err != nil {
		return nil, wm, err
	}
	return &out, wm, nil
}

// Register records a volume that already exists on its node.
func (h *HostVolumes) Register(req *HostVolumeRegisterRequest, w *WriteOptions) (*HostVolumeRegisterResponse, *WriteMeta, error) {
	var out HostVolumeRegisterResponse
	wm, err := h.client.write(http.MethodPut, "/v1/volume/host/register", req, &out, w)
	if err != nil {
		return nil, wm, err
	}
	return &out, wm, nil
}

// Get reads one volume by ID.
func (h *HostVolumes) Get(id string, q *QueryOptions) (*HostVolume, *QueryMeta, error) {
	var out HostVolume
	qm, err := h.client.query("/v1/volume/host/"+escape(id), &out, q)
	if err != nil {
		return nil, qm, err
	}
	return &out, qm, nil
}

// List lists volumes, of a node or a node pool when req says so.
func (h *HostVolumes) List(req *HostVolumeListRequest, q *QueryOptions) ([]*HostVolumeStub, *QueryMeta, error) {
	v := url.Values{"type": {"host"}}
	if req != nil {
		if req.NodeID != "" {
			v.Set("node_id", req.NodeID)
		}
		if req.NodePool != "" {
			v.Set("node_pool", req.NodePool)
		}
	}
	var out []*HostVolumeStub
	qm, err := h.client.query("/v1/volumes?"+v.Encode(), &out, q)
	if err != nil {
		return nil, qm, err
	}
	return out, qm, nil
}

// Delete deletes a volume; the node's client removes what it made.
func (h *HostVolumes) Delete(req *HostVolumeDeleteRequest, w *WriteOptions) (*HostVolumeDeleteResponse, *WriteMeta, error) {
	path := "/v1/volume/host/" + escape(req.ID)
	if req.Force {
		path += "?force=true"
	}
	wm, err := h.client.write(http.MethodDelete, path, nil, nil, w)
	if err != nil {
		return nil, wm, err
	}
	return &HostVolumeDeleteResponse{}, wm, nil
}
