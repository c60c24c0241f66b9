package taskrunner

import (
	"fmt"
	"path/filepath"

	"github.com/opennomad/nomad/client/driver"
	"github.com/opennomad/nomad/structs"
)

// hostVolumeMounts resolves the task's volume_mount blocks against the
// node's host volumes: which host path, where in the task directory, and
// whether read-only (the mount, the group's request or the node's volume
// may each ask for it). A volume the node does not offer is an error:
// the scheduler placed the alloc here because it did.
func hostVolumeMounts(a *structs.Allocation, t *structs.Task, node *structs.Node, taskDir string) ([]driver.Mount, error) {
	if len(t.VolumeMounts) == 0 {
		return nil, nil
	}
	var tg *structs.TaskGroup
	if a.Job != nil {
		tg = a.Job.LookupTaskGroup(a.TaskGroup)
	}
	if tg == nil {
		return nil, fmt.Errorf("volume_mount: group %q not found in the alloc's job", a.TaskGroup)
	}
	var mounts []driver.Mount
	for _, m := range t.VolumeMounts {
		if m == nil {
			continue
		}
		req := tg.Volumes[m.Volume]
		if req == nil {
			return nil, fmt.Errorf("volume_mount: volume %q is not one of the group's volumes", m.Volume)
		}
		if req.Type != structs.VolumeTypeHost {
			return nil, fmt.Errorf("volume %q: type %q is not supported", m.Volume, req.Type)
		}
		source := req.SourceFor(uint(max(0, a.Index())))
		var hv *structs.ClientHostVolumeConfig
		if node != nil {
			hv = node.HostVolumes[source]
		}
		if hv == nil {
			return nil, fmt.Errorf("volume %q: host volume %q is not offered by this node", m.Volume, source)
		}
		mounts = append(mounts, driver.Mount{
			HostPath: hv.Path,
			// Cleaning the destination as an absolute path drops any
			// "..": the mount stays inside the task directory.
			TaskPath: filepath.Join(taskDir, filepath.Clean("/"+m.Destination)),
			ReadOnly: m.ReadOnly || req.ReadOnly || hv.ReadOnly,
		})
	}
	return mounts, nil
}
