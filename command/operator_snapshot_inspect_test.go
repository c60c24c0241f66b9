package command

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opennomad/nomad/api"
)

func TestOperatorSnapshotInspectAndState(t *testing.T) {
	c := newRealAgent(t)
	nodeID := c.AddNode(t, &api.Node{Name: "n1"})
	registerJob(t, c, testJob("web", 1, 64))
	c.Settle(t)
	dir := t.TempDir()
	snap := filepath.Join(dir, "a.snap")
	if res := runCommand(t, c.Addr(), runOpts{}, "operator", "snapshot", "save", snap); res.code != 0 {
		t.Fatalf("save: %d %s", res.code, res.stderr)
	}
	damaged := filepath.Join(dir, "bad.snap")
	buf, _ := os.ReadFile(snap)
	writeFile(t, damaged, string(buf[:len(buf)/2]))

	cases := []struct {
		args     []string
		wantCode int
		outHas   []string
		errHas   string
	}{
		{args: []string{snap}, outHas: []string{"ID      = ", "Size    = ", "Index   = ", "Term    = ", "Version = 1"}},
		{args: []string{"-json", snap}, outHas: []string{`"Index": `, `"Term": `}},
		{args: []string{damaged}, wantCode: 1, errHas: "Error reading snapshot"},
		{args: []string{filepath.Join(dir, "nope")}, wantCode: 1, errHas: "Error opening snapshot file"},
		{args: nil, wantCode: 1, errHas: "one argument: <file>"},
	}
	for _, tc := range cases {
		res := runCommand(t, c.Addr(), runOpts{}, append([]string{"operator", "snapshot", "inspect"}, tc.args...)...)
		if res.code != tc.wantCode || !strings.Contains(res.stderr, tc.errHas) {
			t.Errorf("%v: exit %d, stderr %q", tc.args, res.code, res.stderr)
		}
		for _, want := range tc.outHas {
			if !strings.Contains(res.stdout, want) {
				t.Errorf("%v: stdout lacks %q:\n%s", tc.args, want, res.stdout)
			}
		}
	}

	res := runCommand(t, c.Addr(), runOpts{}, "operator", "snapshot", "state", snap)
	if res.code != 0 {
		t.Fatalf("state: exit %d: %s", res.code, res.stderr)
	}
	var st struct {
		Namespaces []struct{ Name string }
		Nodes      []struct{ ID, SecretID string }
		Jobs       []struct{ ID string }
		Evals      []struct{ ID string }
		Allocs     []struct{ ID, JobID string }
	}
	if err := json.Unmarshal([]byte(res.stdout), &st); err != nil {
		t.Fatalf("state: %v\n%s", err, res.stdout)
	}
	if len(st.Nodes) != 1 || st.Nodes[0].ID != nodeID || st.Nodes[0].SecretID != "" {
		t.Errorf("nodes: %+v", st.Nodes)
	}
	if len(st.Jobs) != 1 || len(st.Evals) == 0 || len(st.Allocs) != 1 || st.Allocs[0].JobID != "web" || len(st.Namespaces) == 0 {
		t.Errorf("state: %+v", st)
	}
	if res := runCommand(t, c.Addr(), runOpts{}, "operator", "snapshot", "state", damaged); res.code != 1 {
		t.Errorf("state of a damaged file: exit %d", res.code)
	}
}
