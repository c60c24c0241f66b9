package command

import (
	"encoding/base64"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/opennomad/nomad/command/agent"
	"github.com/opennomad/nomad/structs"
)

// newGossipAgent starts a server agent that gossips (not -dev), on its
// own data dir, with server.encrypt = key.
func newGossipAgent(t *testing.T, key string) string {
	t.Helper()
	cfg, err := agent.LoadConfig([]string{"-server", "-bootstrap-expect", "1", "-data-dir", t.TempDir(),
		"-bind", "127.0.0.1", "-node", "s1"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Ports.HTTP, cfg.Ports.RPC, cfg.Ports.Serf = 0, 0, 0
	cfg.Server.EncryptKey = key
	cfg.LogLevel = "ERROR"
	a, err := agent.NewAgent(cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Shutdown() })
	deadline := time.Now().Add(10 * time.Second)
	for {
		var leader string
		if err := a.RPC("Status.Leader", &structs.GenericRequest{}, &leader); err == nil && leader != "" {
			return "http://" + a.HTTPAddr()
		}
		if time.Now().After(deadline) {
			t.Fatal("the server never elected itself")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func generatedKey(t *testing.T, args ...string) string {
	t.Helper()
	res := runCommand(t, "http://127.0.0.1:1", runOpts{}, args...)
	if res.code != 0 {
		t.Fatalf("%v: exit %d: %s", args, res.code, res.stderr)
	}
	key := strings.TrimSpace(res.stdout)
	raw, err := base64.StdEncoding.DecodeString(key)
	if len(key) != 44 || err != nil || len(raw) != 32 {
		t.Fatalf("%v printed %q: want base64 of 32 bytes (%v)", args, key, err)
	}
	return key
}

// generate (and Nomad's older keygen) print a new AES-256 key in base64,
// without asking any agent.
func TestOperatorGossipKeyringGenerate(t *testing.T) {
	a := generatedKey(t, "operator", "gossip", "keyring", "generate")
	b := generatedKey(t, "operator", "keygen")
	if a == b {
		t.Fatal("two keys are the same")
	}
	res := runCommand(t, "http://127.0.0.1:1", runOpts{}, "operator", "keygen", "extra")
	if res.code != 1 || !strings.Contains(res.stderr, "This command takes no arguments") {
		t.Fatalf("an argument: exit %d, %q", res.code, res.stderr)
	}
}

// A key is rotated on a real server with the subcommands, the flag form
// and Nomad's older "operator keyring" alike.
func TestOperatorGossipKeyring_Rotate(t *testing.T) {
	oldKey := generatedKey(t, "operator", "gossip", "keyring", "generate")
	newKey := generatedKey(t, "operator", "gossip", "keyring", "generate")
	addr := newGossipAgent(t, oldKey)
	run := func(args ...string) cmdResult {
		t.Helper()
		return runCommand(t, addr, runOpts{}, args...)
	}
	steps := []struct {
		args    []string
		code    int
		out     string
		errHas  string
		listOut string
	}{
		{args: []string{"operator", "gossip", "keyring", "list"},
			out: "Gathering installed encryption keys...\nKey\n" + oldKey},
		{args: []string{"operator", "gossip", "keyring", "install", newKey},
			out: "Installing new gossip encryption key..."},
		{args: []string{"operator", "gossip", "keyring", "-remove", oldKey}, code: 1,
			out: "Removing gossip encryption key...", errHas: "error: Unexpected response code: 500 (1/1 nodes reported failure: s1.global: removing the primary key is not allowed"},
		{args: []string{"operator", "gossip", "keyring", "-use", newKey},
			out: "Changing primary gossip encryption key..."},
		{args: []string{"operator", "keyring", "-remove", oldKey},
			out: "Removing gossip encryption key..."},
		{args: []string{"operator", "keyring", "-list"},
			out: "Gathering installed encryption keys...\nKey\n" + newKey},
	}
	for _, s := range steps {
		res := run(s.args...)
		if res.code != s.code {
			t.Fatalf("%v: exit %d, want %d\n%s%s", s.args, res.code, s.code, res.stdout, res.stderr)
		}
		if got := strings.TrimSpace(res.stdout); got != s.out {
			t.Errorf("%v printed\n%s\nwant\n%s", s.args, got, s.out)
		}
		if !strings.Contains(res.stderr, s.errHas) {
			t.Errorf("%v: stderr %q lacks %q", s.args, res.stderr, s.errHas)
		}
	}
}

func TestOperatorGossipKeyring_UsageErrors(t *testing.T) {
	addr := newRealAgent(t).Addr()
	cases := []struct {
		args   []string
		errHas string
		outHas string
	}{
		{args: []string{"operator", "gossip", "keyring", "install"}, errHas: "This command takes one argument: <key>"},
		{args: []string{"operator", "gossip", "keyring", "list", "x"}, errHas: "This command takes no arguments"},
		{args: []string{"operator", "keyring"}, errHas: "No actionable argument was passed"},
		{args: []string{"operator", "keyring", "-list", "-use", "k"}, errHas: "Only a single action is allowed"},
		{args: []string{"operator", "gossip", "keyring", "-list", "x"}, errHas: "This command takes no arguments"},
		// A -dev agent runs no gossip.
		{args: []string{"operator", "gossip", "keyring", "list"}, errHas: "runs no gossip", outHas: "Gathering"},
	}
	for _, tc := range cases {
		res := runCommand(t, addr, runOpts{}, tc.args...)
		if res.code != 1 || !strings.Contains(res.stderr, tc.errHas) || !strings.Contains(res.stdout, tc.outHas) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 1 and %q", tc.args, res.code, res.stdout, res.stderr, tc.errHas)
		}
	}

	// The bare command is a group: its help lists the subcommands.
	res := runCommand(t, addr, runOpts{}, "operator", "gossip", "keyring")
	if res.code != 1 || !strings.Contains(res.stdout+res.stderr, "generate") || !strings.Contains(res.stdout+res.stderr, "-install=<key>") {
		t.Errorf("bare keyring: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
}
