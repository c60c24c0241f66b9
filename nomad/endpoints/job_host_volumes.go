package endpoints

import (
	"github.com/opennomad/nomad/acl"
	"github.com/opennomad/nomad/structs"
)

// checkHostVolumeMounts asks, beyond Job.Register's namespace rule, what
// Nomad asks of a job that mounts host volumes: mount-readwrite on each
// host volume it may write to, and either mount capability on those it
// only reads. The volume is named by its source (before any per_alloc
// index), as policies name them.
func checkHostVolumeMounts(a *acl.ACL, job *structs.Job) error {
	for _, tg := range job.TaskGroups {
		if tg == nil {
			continue
		}
		for _, v := range tg.HostVolumes() {
			allowed := a.AllowHostVolumeOperation(v.Source, acl.HostVolumeCapabilityMountReadWrite)
			if !allowed && !v.Writes() {
				allowed = a.AllowHostVolumeOperation(v.Source, acl.HostVolumeCapabilityMountReadOnly)
			}
			if !allowed {
				return structs.ErrPermissionDenied
			}
		}
	}
	return nil
}
