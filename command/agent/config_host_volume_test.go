package agent

import (
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

// A client's host_volume blocks read the same from HCL and from JSON (as
// an object of labels or as Nomad's list of them), and reach the client's
// configuration with their names.
func TestConfig_HostVolumes(t *testing.T) {
	want := map[string]*HostVolumeConfig{
		"certs": {Path: "/etc/ssl/certs", ReadOnly: true},
		"data":  {Path: "/srv/data"},
	}
	files := map[string]string{
		"a.hcl": `
client {
  host_volume "certs" {
    path      = "/etc/ssl/certs"
    read_only = true
  }
  host_volume "data" {
    path = "/srv/data"
  }
}`,
		"b.json": `{"client": {"host_volume": {
  "certs": {"path": "/etc/ssl/certs", "read_only": true},
  "data": {"path": "/srv/data"}}}}`,
		"c.json": `{"client": [{"host_volume": [
  {"certs": [{"path": "/etc/ssl/certs", "read_only": true}]},
  {"data": [{"path": "/srv/data"}]}]}]}`,
	}
	for name, src := range files {
		t.Run(name, func(t *testing.T) {
			c := DefaultConfig()
			must.NoError(t, ParseConfig(c, name, []byte(src)))
			must.Eq(t, want, c.Client.HostVolumes)

			cc := clientConfig(c, "/tmp/data")
			must.Eq(t, map[string]*structs.ClientHostVolumeConfig{
				"certs": {Name: "certs", Path: "/etc/ssl/certs", ReadOnly: true},
				"data":  {Name: "data", Path: "/srv/data"},
			}, cc.HostVolumes)
		})
	}
}

func TestConfig_HostVolumeErrors(t *testing.T) {
	cases := []struct {
		name    string
		content string
		want    string
	}{
		{"no path", "client {\n  host_volume \"data\" {}\n}", `client.host_volume.data.path: required`},
		{"relative path", "client {\n  host_volume \"data\" { path = \"srv\" }\n}", `client.host_volume.data.path: "srv" must be an absolute path`},
		{"bad name", "client {\n  host_volume \"a b\" { path = \"/srv\" }\n}", `client.host_volume.a b: "a b" is not a valid host volume name`},
		{"relative dir", `client { host_volumes_dir = "hv" }`, `client.host_volumes_dir: "hv" must be an absolute path`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeFiles(t, map[string]string{"a.hcl": tc.content})
			_, err := LoadConfig([]string{"-dev", "-config", filepath.Join(dir, "a.hcl")}, io.Discard)
			var cerr *ConfigError
			must.True(t, errors.As(err, &cerr), must.Sprint(err))
			must.Len(t, 1, cerr.Problems, must.Sprint(cerr.Problems))
			must.True(t, strings.Contains(cerr.Problems[0], tc.want), must.Sprint(cerr.Problems[0]))
		})
	}
}
