package api

import (
	"path"
	"time"
)

// Volume mount propagation modes.
const (
	VolumeMountPropagationPrivate       = "private"
	VolumeMountPropagationHostToTask    = "host-to-task"
	VolumeMountPropagationBidirectional = "bidirectional"
)

// VolumeRequest asks for a host or CSI volume for a group (the
// `volume "name"` block).
type VolumeRequest struct {
	Name           string           `hcl:"name,label"`
	Type           string           `hcl:"type,optional"`
	Source         string           `hcl:"source,optional"`
	ReadOnly       bool             `hcl:"read_only,optional"`
	Sticky         bool             `hcl:"sticky,optional"`
	AccessMode     string           `hcl:"access_mode,optional"`
	AttachmentMode string           `hcl:"attachment_mode,optional"`
	MountOptions   *CSIMountOptions `hcl:"mount_options,block"`
	PerAlloc       bool             `hcl:"per_alloc,optional"`
}

// CSIMountOptions tunes how a CSI volume is mounted (the `mount_options`
// block).
type CSIMountOptions struct {
	FSType     string   `hcl:"fs_type,optional"`
	MountFlags []string `hcl:"mount_flags,optional"`
}

// VolumeMount mounts one of the group's volumes into a task (the
// `volume_mount` block).
type VolumeMount struct {
	Volume          *string `hcl:"volume,optional"`
	Destination     *string `hcl:"destination,optional"`
	ReadOnly        *bool   `hcl:"read_only,optional"`
	PropagationMode *string `hcl:"propagation_mode,optional"`
	SELinuxLabel    *string `hcl:"selinux_label,optional"`
}

// Canonicalize fills private propagation and a read-write mount.
func (m *VolumeMount) Canonicalize() {
	if m == nil {
		return
	}
	if m.PropagationMode == nil {
		m.PropagationMode = new(VolumeMountPropagationPrivate)
	}
	if m.ReadOnly == nil {
		m.ReadOnly = new(false)
	}
	if m.SELinuxLabel == nil {
		m.SELinuxLabel = new("")
	}
}

// TaskCSIPluginConfig makes a task a CSI plugin (the `csi_plugin` block).
type TaskCSIPluginConfig struct {
	ID                  string        `hcl:"id,optional"`
	Type                string        `hcl:"type,optional"`
	MountDir            string        `hcl:"mount_dir,optional"`
	StagePublishBaseDir string        `hcl:"stage_publish_base_dir,optional"`
	HealthTimeout       time.Duration `hcl:"health_timeout,optional"`
}

// Canonicalize fills /csi, /local/csi and a 30s health timeout.
func (c *TaskCSIPluginConfig) Canonicalize() {
	if c.MountDir == "" {
		c.MountDir = "/csi"
	}
	if c.StagePublishBaseDir == "" {
		c.StagePublishBaseDir = path.Join("/local", "csi")
	}
	if c.HealthTimeout == 0 {
		c.HealthTimeout = 30 * time.Second
	}
}
