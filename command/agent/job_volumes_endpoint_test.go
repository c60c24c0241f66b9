package agent

import (
	"net/http"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

// A job's host volumes and volume mounts reach the server as written,
// mounts canonicalized.
func TestJobs_RegisterWithHostVolume(t *testing.T) {
	h := newTestHTTP(t)
	resp, body := h.do("PUT", "/v1/jobs", `{"Job": {
	  "ID": "db",
	  "TaskGroups": [{"Name": "g",
	    "Volumes": {"data": {"Type": "host", "Source": "pg", "ReadOnly": true, "PerAlloc": true,
	      "AccessMode": "single-node-reader-only", "AttachmentMode": "file-system"}},
	    "Tasks": [{"Name": "t", "Driver": "raw_exec", "Config": {"command": "/bin/true"},
	      "VolumeMounts": [{"Volume": "data", "Destination": "/srv"}]}]}]
	}}`)
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	args := h.rpc.lastCall(t, "Job.Register").(*structs.JobRegisterRequest)
	tg := args.Job.TaskGroups[0]
	must.Eq(t, &structs.VolumeRequest{Name: "data", Type: "host", Source: "pg", ReadOnly: true, PerAlloc: true,
		AccessMode: "single-node-reader-only", AttachmentMode: "file-system"}, tg.Volumes["data"])
	must.Eq(t, []*structs.VolumeMount{{Volume: "data", Destination: "/srv", PropagationMode: "private"}}, tg.Tasks[0].VolumeMounts)
}

// Bad volume blocks are a 400 naming each field (the server refuses the
// job before anything reaches Raft).
func TestJobs_RegisterBadVolumesIs400(t *testing.T) {
	h := newTestHTTP(t)
	resp, body := h.do("PUT", "/v1/jobs", `{"Job": {
	  "ID": "db",
	  "TaskGroups": [{"Name": "g",
	    "Volumes": {"data": {"Type": "host"}, "ceph": {"Type": "csi", "Source": "c"}},
	    "Tasks": [{"Name": "t", "Driver": "raw_exec", "Config": {"command": "/bin/true"},
	      "VolumeMounts": [{"Volume": "logs", "Destination": "/logs"}]}]}]
	}}`)
	must.Eq(t, http.StatusBadRequest, resp.StatusCode)
	must.StrContains(t, body, `group "g": volume "data": source is required`)
	must.StrContains(t, body, `group "g": volume "ceph": type "csi" is not supported by this server`)
	must.StrContains(t, body, `group "g": task "t": volume_mount 1: volume "logs" is not one of the group's volume blocks`)
}
