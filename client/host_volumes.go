package client

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"time"

	"github.com/opennomad/nomad/structs"
)

// Dynamic host volumes on the client side. The client follows its node's
// volumes on the servers (HostVolume.ListForNode, a blocking query). For
// each one it makes the volume real — the built-in mkdir plugin creates
// <host_volumes_dir>/<volume ID>; a registered volume must already exist
// at its path — and offers it in Node.HostVolumes with the volume's ID,
// registering the node again; the servers then mark the volume ready. A
// volume deleted on the servers leaves the node, and a directory the
// plugin made is removed.

// hostVolumeWatchWait bounds one blocking read of the node's volumes.
const hostVolumeWatchWait = 5 * time.Minute

// watchHostVolumes keeps the node's dynamic volumes in step with the
// servers until shutdown. Like the alloc watch it is started once the node
// registered and is not waited for by Shutdown: it may sit in a blocking
// query that cannot be cancelled.
func (c *Client) watchHostVolumes() {
	var index uint64
	failures := 0
	for !c.stopping() {
		node := c.Node()
		req := &structs.HostVolumeNodeRequest{
			NodeID: node.ID, SecretID: node.SecretID,
			QueryOptions: structs.QueryOptions{Region: c.cfg.Region, MinQueryIndex: index,
				MaxQueryTime: hostVolumeWatchWait, AllowStale: index > 0},
		}
		var resp structs.HostVolumeNodeResponse
		err := c.servers.call("HostVolume.ListForNode", req, &resp)
		if err == nil && resp.Index > index {
			c.applyHostVolumes(resp.Volumes)
			index = resp.Index
		}
		if err != nil {
			failures++
			wait := c.retryWait(failures)
			c.logger.Error("watching the node's host volumes failed", "error", err, "retry_in", wait)
			if !c.sleep(wait) {
				return
			}
			continue
		}
		failures = 0
	}
}

// applyHostVolumes makes the node offer exactly the given volumes (those
// it can make real) besides its static ones, and registers the node again
// when that changed what it offers.
func (c *Client) applyHostVolumes(vols []*structs.HostVolume) {
	want := map[string]*structs.ClientHostVolumeConfig{}
	keep := map[string]bool{}
	for _, v := range vols {
		if _, static := c.cfg.HostVolumes[v.Name]; static {
			c.logger.Warn("a dynamic host volume has the name of a static one; the static one is offered", "volume", v.Name, "id", v.ID)
			continue
		}
		path, err := c.realizeHostVolume(v)
		if err != nil {
			c.logger.Error("host volume not available on this node", "volume", v.Name, "id", v.ID, "error", err)
			continue
		}
		keep[v.ID] = true
		want[v.Name] = &structs.ClientHostVolumeConfig{Name: v.Name, Path: path, ID: v.ID, ReadOnly: readerOnly(v)}
	}

	c.nodeMu.Lock()
	old := c.dynamicVolumes
	c.dynamicVolumes = want
	changed := !structs.SameHostVolumes(old, want)
	if changed {
		node := c.node.Copy()
		c.applyDynamicVolumes(node)
		c.node = node
	}
	c.nodeMu.Unlock()

	for _, v := range old {
		if !keep[v.ID] {
			c.removeMadeVolume(v)
		}
	}
	if changed {
		c.markNodeChanged()
	}
}

// realizeHostVolume returns the volume's path on this host, making it
// first for the mkdir plugin.
func (c *Client) realizeHostVolume(v *structs.HostVolume) (string, error) {
	switch v.PluginID {
	case structs.HostVolumePluginMkdir:
		path := c.madeVolumePath(v.ID)
		if err := os.MkdirAll(path, 0o755); err != nil {
			return "", fmt.Errorf("mkdir plugin: %w", err)
		}
		return path, nil
	case "":
		if _, err := os.Stat(v.HostPath); err != nil {
			return "", fmt.Errorf("registered path: %w", err)
		}
		return v.HostPath, nil
	}
	return "", fmt.Errorf("plugin %q is not available on this client", v.PluginID)
}

// madeVolumePath is where the mkdir plugin makes a volume.
func (c *Client) madeVolumePath(id string) string {
	return filepath.Join(c.cfg.HostVolumesDir, id)
}

// removeMadeVolume removes what the mkdir plugin made for a volume that
// is gone; a registered volume's directory is the operator's and stays.
func (c *Client) removeMadeVolume(v *structs.ClientHostVolumeConfig) {
	if v.ID == "" || v.Path != c.madeVolumePath(v.ID) {
		return
	}
	if err := os.RemoveAll(v.Path); err != nil && !errors.Is(err, os.ErrNotExist) {
		c.logger.Error("removing a deleted host volume", "volume", v.Name, "id", v.ID, "error", err)
	}
}

// readerOnly reports a volume whose every capability reads only.
func readerOnly(v *structs.HostVolume) bool {
	if len(v.RequestedCapabilities) == 0 {
		return false
	}
	for _, c := range v.RequestedCapabilities {
		if c != nil && c.AccessMode != structs.VolumeAccessModeSingleNodeReader {
			return false
		}
	}
	return true
}

// applyDynamicVolumes sets a freshly built node's host volumes: the static
// ones and the dynamic ones; guarded by nodeMu.
func (c *Client) applyDynamicVolumes(n *structs.Node) {
	vols := structs.CopyHostVolumes(c.cfg.HostVolumes)
	if len(c.dynamicVolumes) > 0 && vols == nil {
		vols = map[string]*structs.ClientHostVolumeConfig{}
	}
	maps.Copy(vols, structs.CopyHostVolumes(c.dynamicVolumes))
	n.HostVolumes = vols
}
