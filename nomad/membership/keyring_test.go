package membership

import (
	"crypto/rand"
	"encoding/base64"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/serf/serf"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

func newKey(t *testing.T) string {
	t.Helper()
	b := make([]byte, 32)
	_, err := rand.Read(b)
	must.NoError(t, err)
	return base64.StdEncoding.EncodeToString(b)
}

// withKeyring encrypts a node's gossip with its keyring file in dir,
// seeded with key.
func withKeyring(t *testing.T, dir, key string) func(*Config) {
	return func(cfg *Config) {
		path := filepath.Join(dir, KeyringFileName)
		keys, _, err := InitKeyring(path, key)
		must.NoError(t, err)
		cfg.Keys = keys
		cfg.KeyringFile = path
		// Fast gossip joins quickly, but its failure detection (25 ms
		// probes) marks members of a loaded machine failed, and a key
		// query then misses them. Members here never fail; key queries
		// get seconds to be answered.
		cfg.Tune = func(sc *serf.Config) {
			fastGossip(sc)
			sc.MemberlistConfig.ProbeInterval = time.Second
			sc.MemberlistConfig.ProbeTimeout = 500 * time.Millisecond
			sc.MemberlistConfig.SuspicionMult = 4
			sc.QueryTimeoutMult = 500
		}
	}
}

func readKeyring(t *testing.T, dir string) []string {
	t.Helper()
	keys, err := LoadKeyringFile(filepath.Join(dir, KeyringFileName))
	must.NoError(t, err)
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = base64.StdEncoding.EncodeToString(k)
	}
	return out
}

// Three servers sharing a key form a cluster; a server with another key,
// or with none, cannot join it. Installing, using and removing a key
// rotates it on every member, and each member's keyring file follows.
func TestKeyring_EncryptedClusterRotates(t *testing.T) {
	c := newTestCluster(t)
	oldKey, newKeyV := newKey(t), newKey(t)
	dirs := []string{t.TempDir(), t.TempDir(), t.TempDir()}
	a := c.start("a", 0, withKeyring(t, dirs[0], oldKey))
	b := c.start("b", 0, withKeyring(t, dirs[1], oldKey))
	cc := c.start("c", 0, withKeyring(t, dirs[2], oldKey))
	for _, n := range []*testNode{b, cc} {
		_, err := n.m.Join([]string{a.serfAddr()})
		must.NoError(t, err)
	}
	// A key operation asks the members its server knows.
	waitFor(t, func() bool { return len(a.m.Servers()) == 3 && len(b.m.Servers()) == 3 && len(cc.m.Servers()) == 3 })

	wrong := c.start("wrong", 0, withKeyring(t, t.TempDir(), newKey(t)))
	_, err := wrong.m.Join([]string{a.serfAddr()})
	must.Error(t, err, must.Sprint("a member with another key joined"))
	plain := c.start("plain", 0, nil)
	_, err = plain.m.Join([]string{a.serfAddr()})
	must.Error(t, err, must.Sprint("a member without encryption joined"))
	wrong.stop()
	plain.stop()
	must.Len(t, 3, a.m.Servers())

	list, err := b.m.ListKeys()
	must.NoError(t, err)
	must.Eq(t, map[string]int{oldKey: 3}, list.Keys)
	must.Eq(t, 3, list.NumNodes)

	_, err = a.m.InstallKey(newKeyV)
	must.NoError(t, err)
	list, err = a.m.ListKeys()
	must.NoError(t, err)
	must.Eq(t, map[string]int{oldKey: 3, newKeyV: 3}, list.Keys)
	must.Eq(t, map[string]int{oldKey: 3}, list.PrimaryKeys)

	// The primary key cannot be removed.
	_, err = a.m.RemoveKey(oldKey)
	must.ErrorContains(t, err, "3/3 nodes reported failure")

	_, err = cc.m.UseKey(newKeyV)
	must.NoError(t, err)
	_, err = cc.m.RemoveKey(oldKey)
	must.NoError(t, err)
	start := time.Now()
	list, err = a.m.ListKeys()
	must.NoError(t, err, must.Sprintf("%+v after %s", list, time.Since(start)))
	must.Eq(t, map[string]int{newKeyV: 3}, list.Keys)
	must.Eq(t, map[string]int{newKeyV: 3}, list.PrimaryKeys)
	for _, dir := range dirs {
		must.Eq(t, []string{newKeyV}, readKeyring(t, dir))
	}

	// A new server with only the new key joins; one with the old key
	// no longer does.
	late := c.start("late", 0, withKeyring(t, t.TempDir(), newKeyV))
	_, err = late.m.Join([]string{b.serfAddr()})
	must.NoError(t, err)
	waitFor(t, func() bool { return len(a.m.Servers()) == 4 })
	stale := c.start("stale", 0, withKeyring(t, t.TempDir(), oldKey))
	_, err = stale.m.Join([]string{b.serfAddr()})
	must.Error(t, err)
}

// Key operations check their key, and need encryption.
func TestKeyring_Refusals(t *testing.T) {
	c := newTestCluster(t)
	enc := c.start("enc", 0, withKeyring(t, t.TempDir(), newKey(t)))
	for _, tc := range []struct {
		name, key, err string
	}{
		{"missing", "", "missing gossip key"},
		{"not base64", "%%%", "invalid gossip key: not base64"},
		{"wrong length", base64.StdEncoding.EncodeToString([]byte("short")), "must decode to 16, 24 or 32 bytes, got 5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := enc.m.InstallKey(tc.key)
			must.ErrorContains(t, err, tc.err)
			must.True(t, structs.IsKind(err, structs.ErrInvalid))
		})
	}

	plain := c.start("plain", 0, nil)
	_, err := plain.m.ListKeys()
	must.ErrorIs(t, err, ErrNotEncrypted)
	must.True(t, structs.IsKind(err, structs.ErrInvalid))
}

func TestInitKeyring(t *testing.T) {
	k1, k2 := newKey(t), newKey(t)
	cases := []struct {
		name     string
		file     string // keyring file content before; "": none
		encrypt  string
		noPath   bool
		want     []string
		conflict bool
		err      string
	}{
		{name: "no key, no file: clear gossip"},
		{name: "the key seeds the file", encrypt: k1, want: []string{k1}},
		{name: "the file wins", file: `["` + k2 + `","` + k1 + `"]`, encrypt: k1, want: []string{k2, k1}, conflict: true},
		{name: "the file alone", file: `["` + k2 + `"]`, want: []string{k2}},
		{name: "same key as the file", file: `["` + k1 + `"]`, encrypt: k1, want: []string{k1}},
		{name: "no data dir: in memory", encrypt: k1, noPath: true, want: []string{k1}},
		{name: "bad key", encrypt: "abc", err: "encrypt: not base64"},
		{name: "bad key in the file", file: `["abc"]`, err: "key 0: not base64"},
		{name: "empty file", file: `[]`, err: "no keys"},
		{name: "not JSON", file: `abc`, err: "invalid character"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "server", KeyringFileName)
			if tc.file != "" {
				must.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
				must.NoError(t, os.WriteFile(path, []byte(tc.file), 0o600))
			}
			p := path
			if tc.noPath {
				p = ""
			}
			keys, conflict, err := InitKeyring(p, tc.encrypt)
			if tc.err != "" {
				must.ErrorContains(t, err, tc.err)
				return
			}
			must.NoError(t, err)
			must.Eq(t, tc.conflict, conflict)
			got := make([]string, 0, len(keys))
			for _, k := range keys {
				got = append(got, base64.StdEncoding.EncodeToString(k))
			}
			must.Eq(t, len(tc.want), len(got))
			if len(got) > 0 {
				must.Eq(t, tc.want, got)
			}
			if tc.noPath || tc.want == nil {
				_, err := os.Stat(path)
				must.True(t, os.IsNotExist(err), must.Sprint("no file is written"))
				return
			}
			must.Eq(t, tc.want, readKeyring(t, filepath.Dir(path)))
			info, err := os.Stat(path)
			must.NoError(t, err)
			must.Eq(t, os.FileMode(0o600), info.Mode().Perm())
		})
	}
}
