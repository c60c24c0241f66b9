package command

import (
	"strings"
	"testing"

	"github.com/opennomad/nomad/api"
)

const hostVolumeSpec = `
name      = "data"
type      = "host"
node_pool = "default"

capacity_min = "1MiB"

capability {
  access_mode     = "single-node-writer"
  attachment_mode = "file-system"
}

constraint {
  attribute = "${attr.kernel.name}"
  value     = "linux"
}

parameters {
  mode = "0755"
}
`

const registeredVolumeSpec = `
name      = "logs"
type      = "host"
node_id   = "NODE"
host_path = "/srv/logs"
`

func volumeCLIList(t *testing.T, c testCluster) []*api.HostVolumeStub {
	t.Helper()
	client, _ := api.NewClient(&api.Config{Address: c.Addr()})
	vols, _, err := client.HostVolumes().List(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return vols
}

func TestVolumeCommands(t *testing.T) {
	withNode := func(t *testing.T, c testCluster) { c.AddNode(t, &api.Node{Name: "node-1"}) }
	created := func(t *testing.T, c testCluster) {
		withNode(t, c)
		if res := runCommand(t, c.Addr(), runOpts{stdin: hostVolumeSpec}, "volume", "create", "-detach", "-"); res.code != 0 {
			t.Fatalf("create: %+v", res)
		}
	}
	// The volume API has no fake: the real agent alone.
	runCasesOn(t, realOnly, []cmdCase{
		{
			name:   "create detached",
			setup:  withNode,
			args:   []string{"volume", "create", "-detach", "{dir}/data.volume.hcl"},
			files:  map[string]string{"data.volume.hcl": hostVolumeSpec},
			outHas: []string{"==> Created host volume data with ID <id>"},
			check: func(t *testing.T, c testCluster, res cmdResult) {
				vols := volumeCLIList(t, c)
				if len(vols) != 1 || vols[0].PluginID != "mkdir" || vols[0].State != api.HostVolumeStatePending {
					t.Fatalf("volumes %+v", vols)
				}
			},
		},
		{
			name:  "status lists and shows",
			setup: created,
			args:  []string{"volume", "status"},
			wantOut: `ID        Name  Namespace  Plugin ID  Node ID   Node Pool  State
<id>  data  default    mkdir      <id>  default    pending`,
		},
		{name: "csi spec refused", setup: withNode, args: []string{"volume", "create", "-"}, wantCode: 1,
			stdin:  "name = \"c\"\ntype = \"csi\"\nplugin_id = \"ebs\"\n",
			errHas: []string{"CSI volumes are not supported by this server"}},
		{name: "csi status refused", args: []string{"volume", "status", "-type", "csi"}, wantCode: 1,
			errHas: []string{"CSI volumes are not supported by this server"}},
		{name: "a bad spec names the field", setup: withNode, args: []string{"volume", "create", "{dir}/v.hcl"},
			files: map[string]string{"v.hcl": "name = \"a b\"\ntype = \"host\"\n"}, wantCode: 1,
			errHas: []string{`name "a b" must be 1-128 letters`}},
		{name: "no volumes", args: []string{"volume", "status"}, wantOut: "No host volumes"},
		{name: "unknown volume", args: []string{"volume", "status", "ffff"}, wantCode: 1,
			errHas: []string{`No host volume with prefix or ID "ffff" found`}},
		{name: "claims are not built", args: []string{"volume", "claim", "list"}, wantCode: 1,
			errHas: []string{"not supported by this server (sticky host volume claims feature)"}},
	})
}

// TestVolumeLifecycle registers a volume at a path, shows it by ID
// prefix, and deletes it.
func TestVolumeLifecycle(t *testing.T) {
	c := newRealAgent(t)
	nodeID := c.AddNode(t, &api.Node{Name: "node-1"})
	spec := strings.ReplaceAll(registeredVolumeSpec, "NODE", nodeID)
	res := runCommand(t, c.Addr(), runOpts{stdin: spec}, "volume", "register", "-detach", "-")
	if res.code != 0 || !strings.Contains(res.stdout, "==> Registered host volume logs with ID ") {
		t.Fatalf("register: %+v", res)
	}
	vols := volumeCLIList(t, c)
	if len(vols) != 1 {
		t.Fatalf("volumes %+v", vols)
	}
	id := vols[0].ID
	res = runCommand(t, c.Addr(), runOpts{}, "volume", "status", "-verbose", id[:6])
	for _, want := range []string{"ID        = " + id, "Name      = logs", "Plugin ID = <none>", "Node ID   = " + nodeID,
		"State     = pending", "Host Path = /srv/logs", "Allocations\nNo allocations placed"} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("status lacks %q:\n%s", want, res.stdout)
		}
	}
	res = runCommand(t, c.Addr(), runOpts{}, "volume", "delete", id[:6])
	if res.code != 0 || !strings.Contains(res.stdout, "Successfully deleted volume \""+id+"\"!") {
		t.Fatalf("delete: %+v", res)
	}
	if vols := volumeCLIList(t, c); len(vols) != 0 {
		t.Fatalf("left %+v", vols)
	}
}

func TestParseVolumeSpec(t *testing.T) {
	v, err := parseVolumeSpec("v.hcl", []byte(hostVolumeSpec))
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Constraints) != 1 || *v.Constraints[0] != (api.Constraint{LTarget: "${attr.kernel.name}", RTarget: "linux", Operand: "="}) {
		t.Errorf("constraints %+v", v.Constraints[0])
	}
	if v.RequestedCapacityMinBytes != 1<<20 || v.Parameters["mode"] != "0755" || v.NodePool != "default" ||
		len(v.RequestedCapabilities) != 1 || v.RequestedCapabilities[0].AccessMode != api.HostVolumeAccessModeSingleNodeWriter {
		t.Errorf("volume %+v", v)
	}
	if _, err := parseVolumeSpec("v.json", []byte(`{"Name":"x","Type":"csi"}`)); err == nil {
		t.Error("a CSI volume in JSON was accepted")
	}
	j, err := parseVolumeSpec("v.json", []byte(`{"Name":"x","Type":"host","NodeID":"n1","HostPath":"/srv"}`))
	if err != nil || j.Name != "x" || j.HostPath != "/srv" {
		t.Errorf("json: %+v %v", j, err)
	}
}
