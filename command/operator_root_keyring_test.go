package command

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/opennomad/nomad/api"
)

// The keyring lives only in a real server: these cases run against a
// real in-process dev agent.
var keyringClusters = map[string]func(t testing.TB) testCluster{"real": newRealAgent}

// rootKeys waits, with blocking queries, until the leader has made the
// first root key, and returns the keyring.
func rootKeys(t *testing.T, c testCluster) []*api.RootKeyMeta {
	t.Helper()
	client, err := api.NewClient(&api.Config{Address: c.Addr()})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	var index uint64
	for {
		keys, meta, err := client.Keyring().List(&api.QueryOptions{WaitIndex: index, WaitTime: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) > 0 {
			return keys
		}
		if time.Now().After(deadline) {
			t.Fatal("the leader never made the first root key")
		}
		index = meta.LastIndex
	}
}

func rotateKey(t *testing.T, c testCluster) *api.RootKeyMeta {
	t.Helper()
	rootKeys(t, c)
	client, _ := api.NewClient(&api.Config{Address: c.Addr()})
	key, _, err := client.Keyring().Rotate(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func statesOf(keys []*api.RootKeyMeta) map[string]api.RootKeyState {
	states := map[string]api.RootKeyState{}
	for _, k := range keys {
		states[k.KeyID] = k.State
	}
	return states
}

func TestOperatorRootKeyring(t *testing.T) {
	var before []*api.RootKeyMeta
	remember := func(t *testing.T, c testCluster) { before = rootKeys(t, c) }
	runCasesOn(t, keyringClusters, []cmdCase{
		{name: "list after start", setup: remember, args: []string{"operator", "root", "keyring", "list"},
			wantOut: "Key       State   Create Time           Publish Time\n<id>  active  <time>  <none>"},
		{name: "list verbose shows full IDs", setup: remember, args: []string{"operator", "root", "keyring", "list", "-verbose"},
			check: func(t *testing.T, c testCluster, res cmdResult) {
				if !strings.Contains(res.stdout, before[0].KeyID) {
					t.Errorf("full ID %s not in\n%s", before[0].KeyID, res.stdout)
				}
			}},
		{name: "list short IDs", setup: remember, args: []string{"operator", "root", "keyring", "list"},
			check: func(t *testing.T, c testCluster, res cmdResult) {
				if strings.Contains(res.stdout, before[0].KeyID) || !strings.Contains(res.stdout, before[0].KeyID[:8]+" ") {
					t.Errorf("want the short ID %s:\n%s", before[0].KeyID[:8], res.stdout)
				}
			}},
		{name: "list as JSON", setup: remember, args: []string{"operator", "root", "keyring", "list", "-json"},
			check: func(t *testing.T, c testCluster, res cmdResult) {
				var keys []*api.RootKeyMeta
				if err := json.Unmarshal([]byte(res.stdout), &keys); err != nil || len(keys) != 1 ||
					keys[0].KeyID != before[0].KeyID || keys[0].State != api.RootKeyStateActive ||
					keys[0].Algorithm != api.EncryptionAlgorithmAES256GCM {
					t.Errorf("json: %v %s", err, res.stdout)
				}
			}},
		{name: "list takes no arguments", args: []string{"operator", "root", "keyring", "list", "x"}, wantCode: 1,
			errHas: []string{"no arguments"}},
		{name: "rotate now", setup: remember, args: []string{"operator", "root", "keyring", "rotate", "-now"},
			wantOut: "Key       State   Create Time           Publish Time\n<id>  active  <time>  <none>",
			check: func(t *testing.T, c testCluster, res cmdResult) {
				after := rootKeys(t, c)
				states := statesOf(after)
				if len(after) != 2 || states[before[0].KeyID] != api.RootKeyStateInactive {
					t.Errorf("keys after rotation = %v", states)
				}
			}},
		{name: "rotate now verbose", setup: remember, args: []string{"operator", "root", "keyring", "rotate", "-now", "-verbose"},
			check: func(t *testing.T, c testCluster, res cmdResult) {
				for id, state := range statesOf(rootKeys(t, c)) {
					if state == api.RootKeyStateActive && !strings.Contains(res.stdout, id) {
						t.Errorf("the new key's full ID %s is not in\n%s", id, res.stdout)
					}
				}
			}},
		{name: "full rotation marks older keys for rekeying", setup: remember,
			args:   []string{"operator", "root", "keyring", "rotate", "-now", "-full"},
			outHas: []string{"active"},
			check: func(t *testing.T, c testCluster, res cmdResult) {
				// The rotation wakes the leader, which finds no variable
				// to seal again and may already have retired the key.
				if s := statesOf(rootKeys(t, c))[before[0].KeyID]; s != api.RootKeyStateRekeying && s != api.RootKeyStateInactive {
					t.Errorf("old key is %q", s)
				}
			}},
		{name: "prepublish", setup: remember, args: []string{"operator", "root", "keyring", "rotate", "-prepublish", "1h"},
			wantOut: "Key       State         Create Time           Publish Time\n<id>  prepublished  <time>  <time>",
			check: func(t *testing.T, c testCluster, res cmdResult) {
				// The active key stays active until the new key's time.
				if s := statesOf(rootKeys(t, c))[before[0].KeyID]; s != api.RootKeyStateActive {
					t.Errorf("old key is %q", s)
				}
			}},
		{name: "full with prepublish", setup: remember, args: []string{"operator", "root", "keyring", "rotate", "-full", "-prepublish", "1h"},
			wantCode: 1, errHas: []string{"-full cannot be used with -prepublish"},
			check: func(t *testing.T, c testCluster, res cmdResult) {
				if n := len(rootKeys(t, c)); n != 1 {
					t.Errorf("%d keys", n)
				}
			}},
		{name: "neither now nor prepublish", args: []string{"operator", "root", "keyring", "rotate"},
			wantCode: 1, errHas: []string{`One of "-now" or "-prepublish <duration>" must be used`}},
		{name: "both now and prepublish", args: []string{"operator", "root", "keyring", "rotate", "-now", "-prepublish", "1h"},
			wantCode: 1, errHas: []string{`One of "-now" or "-prepublish <duration>" must be used`}},
		{name: "prepublish not a duration", args: []string{"operator", "root", "keyring", "rotate", "-prepublish", "soon"},
			wantCode: 1, errHas: []string{"-prepublish"}},
		{name: "remove without an ID", args: []string{"operator", "root", "keyring", "remove"}, wantCode: 1,
			errHas: []string{"one argument"}},
		{name: "remove an unknown key", args: []string{"operator", "root", "keyring", "remove", "00000000-0000-0000-0000-000000000000"},
			wantCode: 1, errHas: []string{"Error removing root key", "404", "root key not found"}},
		{name: "group help", args: []string{"operator", "root"}, wantCode: 1,
			errHas: []string{"Usage: nomad operator root <subcommand>", "keyring"}},
		{name: "keyring group help", args: []string{"operator", "root", "keyring"}, wantCode: 1,
			errHas: []string{"Usage: nomad operator root keyring <subcommand>", "Subcommands:", "list", "rotate", "remove"}},
		{name: "rotate help documents every flag", args: []string{"operator", "root", "keyring", "rotate", "-help"},
			outHas: []string{"-full", "-now", "-prepublish <duration>", "-verbose"}},
	})
}

// Removing keys needs IDs only the agent knows.
func TestOperatorRootKeyringRemove(t *testing.T) {
	c := newRealAgent(t)
	first := rootKeys(t, c)[0]
	res := runCommand(t, c.Addr(), runOpts{}, "operator", "root", "keyring", "remove", first.KeyID)
	if res.code != 1 || !strings.Contains(res.stderr, "active root key cannot be deleted - call rotate first") {
		t.Fatalf("removing the active key: %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	second := rotateKey(t, c)
	res = runCommand(t, c.Addr(), runOpts{}, "operator", "root", "keyring", "remove", "-force", first.KeyID)
	if res.code != 0 || strings.TrimSpace(res.stdout) != "Removed root key "+first.KeyID {
		t.Fatalf("removing the old key: %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	keys := rootKeys(t, c)
	if len(keys) != 1 || keys[0].KeyID != second.KeyID || keys[0].State != api.RootKeyStateActive {
		t.Fatalf("keys = %v", statesOf(keys))
	}
	res = runCommand(t, c.Addr(), runOpts{}, "operator", "root", "keyring", "remove", "-force=maybe", second.KeyID)
	if res.code != 1 {
		t.Fatalf("a bad -force: %d\n%s%s", res.code, res.stdout, res.stderr)
	}
}
