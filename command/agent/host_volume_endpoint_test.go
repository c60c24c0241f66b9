package agent

import (
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"

	"github.com/opennomad/nomad/api"
)

// TestHostVolumes_HTTP runs the volume API on a dev agent through the api
// package: a created volume turns ready once the agent's client made its
// directory, lists and reads back, and goes with its directory when
// deleted; CSI paths answer 501 and a bad request 400.
func TestHostVolumes_HTTP(t *testing.T) {
	ra := startDevAgent(t)
	c, err := api.NewClient(&api.Config{Address: ra.base})
	must.NoError(t, err)
	var nodeID string
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		nodes, _, err := c.Nodes().List(nil)
		if err != nil || len(nodes) != 1 || nodes[0].Status != "ready" {
			return false
		}
		nodeID = nodes[0].ID
		return true
	}), wait.Timeout(20*time.Second), wait.Gap(20*time.Millisecond)))

	out, wm, err := c.HostVolumes().Create(&api.HostVolumeCreateRequest{Volume: &api.HostVolume{Name: "data",
		RequestedCapabilities: []*api.HostVolumeCapability{{AttachmentMode: api.HostVolumeAttachmentModeFilesystem,
			AccessMode: api.HostVolumeAccessModeSingleNodeWriter}}}}, nil)
	must.NoError(t, err)
	must.Positive(t, wm.LastIndex)
	id := out.Volume.ID
	must.Eq(t, nodeID, out.Volume.NodeID)
	must.Eq(t, "mkdir", out.Volume.PluginID)

	var vol *api.HostVolume
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		vol, _, err = c.HostVolumes().Get(id, nil)
		return err == nil && vol.State == api.HostVolumeStateReady
	}), wait.Timeout(20*time.Second), wait.Gap(20*time.Millisecond)))
	fi, err := os.Stat(vol.HostPath)
	must.NoError(t, err)
	must.True(t, fi.IsDir())
	node, _, err := c.Nodes().Info(nodeID, nil)
	must.NoError(t, err)
	must.Eq(t, id, node.HostVolumes["data"].ID)

	list, _, err := c.HostVolumes().List(&api.HostVolumeListRequest{NodeID: nodeID}, nil)
	must.NoError(t, err)
	must.Len(t, 1, list)
	must.Eq(t, "data", list[0].Name)
	list, _, err = c.HostVolumes().List(&api.HostVolumeListRequest{NodePool: "gpu"}, nil)
	must.NoError(t, err)
	must.Len(t, 0, list)

	_, _, err = c.HostVolumes().Delete(&api.HostVolumeDeleteRequest{ID: id}, nil)
	must.NoError(t, err)
	_, _, err = c.HostVolumes().Get(id, nil)
	must.ErrorContains(t, err, "volume not found")
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		_, err := os.Stat(vol.HostPath)
		return os.IsNotExist(err)
	}), wait.Timeout(20*time.Second), wait.Gap(20*time.Millisecond)))

	for _, c := range []struct {
		method, path, body string
		code               int
		msg                string
	}{
		{"GET", "/v1/volumes?type=csi", "", http.StatusNotImplemented, "/v1/volumes is not supported by this server (CSI feature)"},
		{"GET", "/v1/volume/csi/x", "", http.StatusNotImplemented, "/v1/volume/csi/x is not supported by this server (CSI feature)"},
		{"GET", "/v1/volumes", "", http.StatusBadRequest, "Invalid volume type"},
		{"GET", "/v1/volumes/claims", "", http.StatusNotImplemented, "claims are not supported"},
		{"PUT", "/v1/volume/host/create", `{}`, http.StatusBadRequest, "missing volume definition"},
		{"PUT", "/v1/volume/host/create", `{"Volume":{"Name":"a b"}}`, http.StatusBadRequest, `host volume "a b": name "a b" must be`},
		{"PUT", "/v1/volume/host/register", `{"Volume":{"Name":"x","NodeID":"` + nodeID + `"}}`, http.StatusBadRequest, "host_path is required"},
		{"DELETE", "/v1/volume/host/nosuch", "", http.StatusNotFound, `host volume "nosuch"`},
	} {
		resp, body := ra.do(c.method, c.path, c.body)
		must.Eq(t, c.code, resp.StatusCode, must.Sprintf("%s %s: %s", c.method, c.path, body))
		must.StrContains(t, body, c.msg)
	}
}
