package agent

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/tlsconf"
	"github.com/opennomad/nomad/tlsconf/tlsconftest"
)

// The tls block loads from HCL and JSON with every key Nomad's files use.
func TestConfig_TLSBlock(t *testing.T) {
	ca := tlsconftest.NewCA(t)
	srv := ca.Server(t, "global")
	want := tlsconf.Config{
		HTTP: true, RPC: true,
		CAFile: ca.File, CertFile: srv.CertFile, KeyFile: srv.KeyFile,
		VerifyServerHostname: true, VerifyHTTPSClient: true, RPCUpgradeMode: true,
		TLSMinVersion: "tls13",
	}
	hcl := fmt.Sprintf(`
tls {
  http                   = true
  rpc                    = true
  ca_file                = %q
  cert_file              = %q
  key_file               = %q
  verify_server_hostname = true
  verify_https_client    = true
  rpc_upgrade_mode       = true
  tls_min_version        = "tls13"
}
`, ca.File, srv.CertFile, srv.KeyFile)
	json := fmt.Sprintf(`{"tls": {"http": true, "rpc": true, "ca_file": %q, "cert_file": %q, "key_file": %q,
  "verify_server_hostname": true, "verify_https_client": true, "rpc_upgrade_mode": true, "tls_min_version": "tls13"}}`,
		ca.File, srv.CertFile, srv.KeyFile)
	dir := writeFiles(t, map[string]string{"agent.hcl": hcl, "agent.json": json})
	for _, name := range []string{"agent.hcl", "agent.json"} {
		c, err := LoadConfig([]string{"-dev", "-config", filepath.Join(dir, name)}, io.Discard)
		must.NoError(t, err, must.Sprint(name))
		must.Eq(t, want, c.TLS, must.Sprint(name))
	}

	plain, err := LoadConfig([]string{"-dev"}, io.Discard)
	must.NoError(t, err)
	must.False(t, plain.TLS.Enabled(), must.Sprint("TLS is off by default"))
}

// A tls block that cannot work is refused at load, naming the key.
func TestConfig_TLSValidation(t *testing.T) {
	ca := tlsconftest.NewCA(t)
	srv := ca.Server(t, "global")
	missing := filepath.Join(t.TempDir(), "missing.pem")
	cases := []struct {
		name    string
		content string
		want    []string
	}{
		{
			name:    "rpc without certificate and key",
			content: fmt.Sprintf("tls {\n  rpc = true\n  ca_file = %q\n}\n", ca.File),
			want: []string{
				"tls.cert_file: required when tls.rpc is on",
				"tls.key_file: required when tls.rpc is on",
			},
		},
		{
			name:    "http without certificate",
			content: fmt.Sprintf("tls {\n  http = true\n  key_file = %q\n}\n", srv.KeyFile),
			want:    []string{"tls.cert_file: required when tls.http is on"},
		},
		{
			name:    "missing file",
			content: fmt.Sprintf("tls {\n  http = true\n  cert_file = %q\n  key_file = %q\n}\n", missing, srv.KeyFile),
			want:    []string{"FILE:3:3: tls.cert_file: stat " + missing},
		},
		{
			name:    "bad min version",
			content: "tls {\n  tls_min_version = \"tls9\"\n}\n",
			want:    []string{`FILE:2:3: tls.tls_min_version: "tls9" is not one of tls10, tls11, tls12, tls13`},
		},
		{
			name:    "bad cipher suite",
			content: "tls {\n  tls_cipher_suites = \"TLS_NULL\"\n}\n",
			want:    []string{`FILE:2:3: tls.tls_cipher_suites: unsupported cipher suites ["TLS_NULL"]`},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(writeFiles(t, map[string]string{"a.hcl": tc.content}), "a.hcl")
			_, err := LoadConfig([]string{"-dev", "-config", file}, io.Discard)
			var cerr *ConfigError
			must.True(t, errors.As(err, &cerr), must.Sprint(err))
			must.Len(t, len(tc.want), cerr.Problems, must.Sprint(cerr.Problems))
			for i, w := range tc.want {
				must.StrHasPrefix(t, strings.ReplaceAll(w, "FILE", file), cerr.Problems[i])
			}
		})
	}
}
