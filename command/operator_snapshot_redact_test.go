package command

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/api"
	"github.com/opennomad/nomad/nomad/snapshot"
	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// TestOperatorSnapshotRedact: the redacted file is a valid archive with
// the same state but the root keys' material, and a cluster restores it.
func TestOperatorSnapshotRedact(t *testing.T) {
	c := newRealAgent(t)
	registerJob(t, c, testJob("web", 1, 64))
	c.Settle(t)
	// The leader makes the first root key on its own goroutine.
	client, err := api.NewClient(&api.Config{Address: c.Addr()})
	must.NoError(t, err)
	deadline := time.Now().Add(10 * time.Second)
	for {
		keys, _, err := client.Keyring().List(nil)
		if err == nil && len(keys) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no root key: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	dir := t.TempDir()
	snap := filepath.Join(dir, "a.snap")
	res := runCommand(t, c.Addr(), runOpts{}, "operator", "snapshot", "save", snap)
	must.Eq(t, 0, res.code, must.Sprint(res.stderr))
	before := runCommand(t, c.Addr(), runOpts{}, "operator", "snapshot", "state", snap)
	must.Eq(t, 0, before.code, must.Sprint(before.stderr))
	keysBefore := snapshotRootKeys(t, snap)
	must.SliceNotEmpty(t, keysBefore)
	must.SliceNotEmpty(t, keysBefore[0].KEK)

	res = runCommand(t, c.Addr(), runOpts{}, "operator", "snapshot", "redact", snap)
	must.Eq(t, 0, res.code, must.Sprint(res.stderr))
	must.Eq(t, "Snapshot redacted\n", res.stdout)

	keys := snapshotRootKeys(t, snap)
	must.Len(t, len(keysBefore), keys)
	for i, k := range keys {
		must.Eq(t, keysBefore[i].Meta, k.Meta)
		must.SliceEmpty(t, k.KEK)
		must.SliceEmpty(t, k.SigningKey)
		must.SliceEmpty(t, k.DataKey)
	}
	after := runCommand(t, c.Addr(), runOpts{}, "operator", "snapshot", "state", snap)
	must.Eq(t, before.stdout, after.stdout, must.Sprint("everything else is kept"))
	entries, err := os.ReadDir(dir)
	must.NoError(t, err)
	must.Len(t, 1, entries, must.Sprint("no temporary file is left"))

	res = runCommand(t, c.Addr(), runOpts{}, "operator", "snapshot", "restore", snap)
	must.Eq(t, 0, res.code, must.Sprint(res.stderr))

	damaged := filepath.Join(dir, "bad.snap")
	buf, _ := os.ReadFile(snap)
	writeFile(t, damaged, string(buf[:len(buf)/2]))
	for _, tc := range []struct {
		args   []string
		errHas string
	}{
		{args: []string{damaged}, errHas: "Error reading snapshot"},
		{args: []string{filepath.Join(dir, "nope")}, errHas: "Error opening snapshot file"},
		{args: nil, errHas: "<file>"},
	} {
		res := runCommand(t, c.Addr(), runOpts{}, append([]string{"operator", "snapshot", "redact"}, tc.args...)...)
		must.Eq(t, 1, res.code)
		must.StrContains(t, res.stderr, tc.errHas)
	}
	left, _ := os.ReadFile(damaged)
	must.Eq(t, buf[:len(buf)/2], left, must.Sprint("a file that cannot be redacted is left as it was"))
}

// snapshotRootKeys reads the root keys of the archive at path.
func snapshotRootKeys(t *testing.T, path string) []*structs.RootKey {
	t.Helper()
	f, err := os.Open(path)
	must.NoError(t, err)
	defer f.Close()
	_, data, err := snapshot.Read(f, "")
	must.NoError(t, err)
	defer data.Close()
	store, err := state.Restore(data, &state.Config{})
	must.NoError(t, err)
	keys, err := store.RootKeys(nil)
	must.NoError(t, err)
	return keys
}
