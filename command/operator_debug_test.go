package command

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/opennomad/nomad/api"
)

// TestOperatorDebug captures a real dev agent into a directory and into
// an archive, and checks what the capture holds.
func TestOperatorDebug(t *testing.T) {
	c := newRealAgent(t)
	c.AddNode(t, &api.Node{Name: "n1"})
	out := t.TempDir()
	base := []string{"operator", "debug", "-duration", "300ms", "-interval", "100ms", "-pprof-duration", "100ms", "-node-id", "all"}
	res := runCommand(t, c.Addr(), runOpts{}, append(base, "-output", out)...)
	if res.code != 0 {
		t.Fatalf("exit %d\nstdout:%s\nstderr:%s", res.code, res.stdout, res.stderr)
	}
	for _, want := range []string{"Starting debugger...", "Servers           = (1/1) [server-1.global]", "Clients           = (1/1)",
		"Capturing cluster data...", "Capturing pprof data for server server-1.global", "Capture interval 0000", "Capture interval 0001",
		"Created debug directory: " + out} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, res.stdout)
		}
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "nomad-debug-*"))
	if len(dirs) != 1 {
		t.Fatalf("capture directories: %v", dirs)
	}
	dir := dirs[0]
	for _, f := range []string{"cluster/agent-self.json", "cluster/members.json", "cluster/raft-configuration.json",
		"interval/0000/metrics.json", "interval/0000/jobs.json", "interval/0001/allocations.json",
		"server/server-1.global/profile.prof", "server/server-1.global/heap.prof", "server/server-1.global/goroutine-debug2.txt",
		"server/server-1.global/monitor.log"} {
		if info, err := os.Stat(filepath.Join(dir, f)); err != nil || (info.Size() == 0 && !strings.HasSuffix(f, ".log")) {
			t.Errorf("%s: %v", f, err)
		}
	}
	// The client's profiles are refused by this agent (it profiles only
	// itself): the capture says so instead of failing.
	errs, err := os.ReadFile(filepath.Join(dir, "errors.txt"))
	if err != nil || !strings.Contains(string(errs), "client/") {
		t.Errorf("errors.txt: %v %s", err, errs)
	}
	if !strings.Contains(res.stderr, "could not be captured") {
		t.Errorf("stderr lacks the warning:\n%s", res.stderr)
	}

	// Without -output: a tar.gz in the current directory.
	t.Chdir(t.TempDir())
	res = runCommand(t, c.Addr(), runOpts{}, append(base[:len(base)-2], "-server-id", "leader")...)
	if res.code != 0 || !strings.Contains(res.stdout, "Created debug archive: nomad-debug-") {
		t.Fatalf("exit %d\nstdout:%s\nstderr:%s", res.code, res.stdout, res.stderr)
	}
	archives, _ := filepath.Glob("nomad-debug-*.tar.gz")
	if len(archives) != 1 {
		t.Fatalf("archives: %v", archives)
	}
	names := tarNames(t, archives[0])
	for _, want := range []string{"/cluster/agent-self.json", "/interval/0000/nodes.json", "/server/server-1.global/heap.prof"} {
		found := false
		for _, n := range names {
			found = found || strings.HasSuffix(n, want)
		}
		if !found {
			t.Errorf("archive lacks %s: %v", want, names)
		}
	}
}

func tarNames(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var names []string
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return names
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, hdr.Name)
	}
}

func TestOperatorDebugFlags(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		errHas string
	}{
		{[]string{"-interval", "1m", "-duration", "10s"}, "-interval must not be longer"},
		{[]string{"-duration", "0s"}, "must be positive"},
		{[]string{"-pprof-duration", "0s"}, "-pprof-duration must be positive"},
		{[]string{"-max-nodes", "-1"}, "-max-nodes must not be negative"},
		{[]string{"extra"}, "no arguments"},
	} {
		res := runCommand(t, "http://127.0.0.1:1", runOpts{}, append([]string{"operator", "debug"}, tc.args...)...)
		if res.code != 1 || !strings.Contains(res.stderr, tc.errHas) {
			t.Errorf("%v: exit %d, stderr %q", tc.args, res.code, res.stderr)
		}
	}
}

func TestRedactSecrets(t *testing.T) {
	var in any
	if err := json.Unmarshal([]byte(`{"ACL":{"Enabled":true,"ReplicationToken":"s3cr3t"},
		"Server":{"EncryptKey":"k3y","Encrypt":"k3y2","BootstrapExpect":1},
		"Vault":{"Token":""},"List":[{"SecretID":"x","Name":"n"}],"TLS":{"KeyFile":"/etc/k.pem"}}`), &in); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"ACL":    map[string]any{"Enabled": true, "ReplicationToken": redacted},
		"Server": map[string]any{"EncryptKey": redacted, "Encrypt": redacted, "BootstrapExpect": float64(1)},
		"Vault":  map[string]any{"Token": ""},
		"List":   []any{map[string]any{"SecretID": redacted, "Name": "n"}},
		"TLS":    map[string]any{"KeyFile": "/etc/k.pem"},
	}
	if got := redactSecrets(in); !reflect.DeepEqual(got, want) {
		t.Errorf("redactSecrets = %v\nwant %v", got, want)
	}
}
