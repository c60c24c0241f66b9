package agent

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shoenig/test/must"
)

// server.encrypt takes base64 of an AES key (16, 24 or 32 bytes), from
// HCL and JSON files alike; anything else stops the agent with an error
// naming server.encrypt and the line that set it.
func TestConfig_ServerEncrypt(t *testing.T) {
	key := func(n int) string { return base64.StdEncoding.EncodeToString([]byte(strings.Repeat("k", n))) }
	cases := []struct {
		name string
		key  string
		json bool
		err  string
	}{
		{name: "AES-128", key: key(16)},
		{name: "AES-192", key: key(24)},
		{name: "AES-256", key: key(32)},
		{name: "AES-256 in JSON", key: key(32), json: true},
		{name: "not base64", key: "not base64!", err: "FILE:3:3: server.encrypt: not base64"},
		{name: "too short", key: key(8), err: "FILE:3:3: server.encrypt: must decode to 16, 24 or 32 bytes, got 8"},
		{name: "between sizes", key: key(20), err: "server.encrypt: must decode to 16, 24 or 32 bytes, got 20"},
		{name: "bad in JSON", key: key(31), json: true, err: "server.encrypt: must decode to 16, 24 or 32 bytes, got 31"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			name, content := "a.hcl", "data_dir = \"/x\"\nserver {\n  encrypt = \""+tc.key+"\"\n  enabled = true\n}\n"
			if tc.json {
				b, err := json.Marshal(map[string]any{"data_dir": "/x", "server": map[string]any{"enabled": true, "encrypt": tc.key}})
				must.NoError(t, err)
				name, content = "a.json", string(b)
			}
			dir := writeFiles(t, map[string]string{name: content})
			file := filepath.Join(dir, name)
			c, err := LoadConfig([]string{"-config", file}, io.Discard)
			if tc.err == "" {
				must.NoError(t, err)
				must.Eq(t, tc.key, c.Server.EncryptKey)
				must.Eq(t, tc.key, serverConfig(c).Cluster.GossipKey)
				return
			}
			var cerr *ConfigError
			must.True(t, errors.As(err, &cerr), must.Sprint(err))
			must.Len(t, 1, cerr.Problems, must.Sprint(cerr.Problems))
			must.StrContains(t, cerr.Problems[0], strings.ReplaceAll(tc.err, "FILE", file))
			must.StrContains(t, cerr.Problems[0], "nomad operator gossip keyring generate")
		})
	}
}

// The key is a secret: /v1/agent/self's configuration leaves it out.
func TestConfig_ServerEncryptNotShown(t *testing.T) {
	c := DefaultConfig()
	c.Server.EncryptKey = base64.StdEncoding.EncodeToString([]byte(strings.Repeat("k", 32)))
	b, err := json.Marshal(c)
	must.NoError(t, err)
	must.StrNotContains(t, string(b), c.Server.EncryptKey)
	must.StrNotContains(t, string(b), "EncryptKey")
}
