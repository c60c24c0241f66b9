package client

import (
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
