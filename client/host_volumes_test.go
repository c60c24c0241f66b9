package client

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

// The node a client registers offers its static host volumes.
func TestClient_RegistersHostVolumes(t *testing.T) {
	srv := testServer(t, nil)
	cfg := testClientConfig(t, local(srv))
	dir := t.TempDir()
	cfg.HostVolumes = map[string]*structs.ClientHostVolumeConfig{
		"data": {Path: dir, ReadOnly: true},
	}
	c := testClient(t, cfg)
	eventually(t, "node ready", func() bool { return nodeStatus(t, srv, c.NodeID()) == structs.NodeStatusReady })
	n, err := srv.State().NodeByID(nil, c.NodeID())
	must.NoError(t, err)
	must.Eq(t, map[string]*structs.ClientHostVolumeConfig{"data": {Name: "data", Path: dir, ReadOnly: true}}, n.HostVolumes)
}

func TestClient_HostVolumeConfigErrors(t *testing.T) {
	cfg := testClientConfig(t, local(&answer{}))
	missing := filepath.Join(t.TempDir(), "missing")
	cfg.HostVolumes = map[string]*structs.ClientHostVolumeConfig{
		"gone":     {Path: missing},
		"relative": {Path: "srv/data"},
		"nopath":   {},
	}
	_, err := NewClient(cfg)
	must.Error(t, err)
	for _, want := range []string{`host_volume "gone": stat ` + missing, `host_volume "nopath": path is required`,
		`host_volume "relative": path "srv/data" must be absolute`} {
		must.StrContains(t, err.Error(), want)
	}
}

// A volume created on the servers for this node is made by the mkdir
// plugin under host_volumes_dir, offered by the node (so the servers mark
// it ready), and removed with its directory when deleted; a registered
// volume is offered at its own path, which its deletion leaves alone.
func TestClient_DynamicHostVolumes(t *testing.T) {
	srv := testServer(t, nil)
	cfg := testClientConfig(t, local(srv))
	c := testClient(t, cfg)
	eventually(t, "node ready", func() bool { return nodeStatus(t, srv, c.NodeID()) == structs.NodeStatusReady })

	var created structs.HostVolumeCreateResponse
	must.NoError(t, srv.RPC("HostVolume.Create", &structs.HostVolumeCreateRequest{
		Volume: &structs.HostVolume{Name: "data", NodeID: c.NodeID()}}, &created))
	id := created.Volume.ID
	dir := filepath.Join(cfg.DataDir, "host_volumes", id)
	existing := t.TempDir()
	var registered structs.HostVolumeCreateResponse
	must.NoError(t, srv.RPC("HostVolume.Register", &structs.HostVolumeCreateRequest{
		Volume: &structs.HostVolume{Name: "logs", NodeID: c.NodeID(), HostPath: existing}}, &registered))

	volumeState := func(id string) string {
		v, err := srv.State().HostVolumeByID(nil, id)
		must.NoError(t, err)
		if v == nil {
			return ""
		}
		return v.State
	}
	eventually(t, "both volumes ready", func() bool {
		return volumeState(id) == structs.HostVolumeStateReady && volumeState(registered.Volume.ID) == structs.HostVolumeStateReady
	})
	fi, err := os.Stat(dir)
	must.NoError(t, err)
	must.True(t, fi.IsDir())
	n, err := srv.State().NodeByID(nil, c.NodeID())
	must.NoError(t, err)
	must.Eq(t, &structs.ClientHostVolumeConfig{Name: "data", Path: dir, ID: id}, n.HostVolumes["data"])
	must.Eq(t, existing, n.HostVolumes["logs"].Path)
	v, _ := srv.State().HostVolumeByID(nil, id)
	must.Eq(t, dir, v.HostPath)

	var del structs.HostVolumeDeleteResponse
	must.NoError(t, srv.RPC("HostVolume.Delete", &structs.HostVolumeDeleteRequest{VolumeID: id}, &del))
	must.NoError(t, srv.RPC("HostVolume.Delete", &structs.HostVolumeDeleteRequest{VolumeID: registered.Volume.ID}, &del))
	eventually(t, "the node no longer offers them", func() bool {
		n, _ := srv.State().NodeByID(nil, c.NodeID())
		return len(n.HostVolumes) == 0
	})
	eventually(t, "the made directory removed", func() bool {
		_, err := os.Stat(dir)
		return os.IsNotExist(err)
	})
	_, err = os.Stat(existing)
	must.NoError(t, err)
}
