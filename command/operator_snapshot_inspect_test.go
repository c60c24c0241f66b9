package command

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOperatorSnapshotInspect(t *testing.T) {
	c := newRealAgent(t)
	registerJob(t, c, testJob("web", 1, 64))
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
}
