package tlsconf

import (
	"crypto/tls"
	"os"
	"path/filepath"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/tlsconf/tlsconftest"
)

func TestConfig_Problems(t *testing.T) {
	ca := tlsconftest.NewCA(t)
	srv := ca.Server(t, "global")
	other := ca.Client(t, "global")
	garbage := filepath.Join(t.TempDir(), "garbage.pem")
	must.NoError(t, os.WriteFile(garbage, []byte("not a certificate"), 0o600))
	missing := filepath.Join(t.TempDir(), "missing.pem")
	good := Config{RPC: true, HTTP: true, CAFile: ca.File, CertFile: srv.CertFile, KeyFile: srv.KeyFile}

	cases := []struct {
		name string
		mod  func(*Config)
		// want maps each key with a problem to a fragment of its text.
		want map[string]string
	}{
		{"off and empty", func(c *Config) { *c = Config{} }, nil},
		{"rpc and http", nil, nil},
		{"http only, no CA", func(c *Config) { c.RPC, c.CAFile = false, "" }, nil},
		{"tls10", func(c *Config) { c.TLSMinVersion = "tls10" }, nil},
		{"tls13", func(c *Config) { c.TLSMinVersion = "tls13" }, nil},
		{"cipher suites", func(c *Config) {
			c.TLSCipherSuites = "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"
		}, nil},
		{"rpc without cert and key", func(c *Config) { c.CertFile, c.KeyFile = "", "" },
			map[string]string{"cert_file": "required when tls.rpc is on", "key_file": "required when tls.rpc is on"}},
		{"http without key", func(c *Config) { c.RPC, c.KeyFile = false, "" },
			map[string]string{"key_file": "required when tls.http is on"}},
		{"rpc without CA", func(c *Config) { c.CAFile = "" }, map[string]string{"ca_file": "required when tls.rpc is on"}},
		{"verify_https_client without CA", func(c *Config) { c.RPC, c.CAFile, c.VerifyHTTPSClient = false, "", true },
			map[string]string{"ca_file": "required when verify_https_client is on"}},
		{"missing files", func(c *Config) { c.CAFile, c.KeyFile = missing, missing },
			map[string]string{"ca_file": "no such file", "key_file": "no such file"}},
		{"CA not PEM", func(c *Config) { c.CAFile = garbage }, map[string]string{"ca_file": "garbage.pem"}},
		{"key of another certificate", func(c *Config) { c.KeyFile = other.KeyFile },
			map[string]string{"cert_file": "does not match"}},
		{"bad min version", func(c *Config) { c.TLSMinVersion = "ssl3" },
			map[string]string{"tls_min_version": `"ssl3" is not one of tls10, tls11, tls12, tls13`}},
		{"unknown cipher suite", func(c *Config) { c.TLSCipherSuites = "TLS_RSA_WITH_RC4_128_SHA,NOPE" },
			map[string]string{"tls_cipher_suites": "NOPE"}},
		{"cipher suites with tls13", func(c *Config) {
			c.TLSMinVersion, c.TLSCipherSuites = "tls13", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"
		}, map[string]string{"tls_cipher_suites": "not configurable"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := good
			if tc.mod != nil {
				tc.mod(&c)
			}
			got := map[string]string{}
			for _, p := range c.Problems() {
				got[p.Key] = p.Problem
			}
			must.MapLen(t, len(tc.want), got, must.Sprintf("%v", got))
			for key, frag := range tc.want {
				must.StrContains(t, got[key], frag)
			}
		})
	}
}

func TestConfig_Settings(t *testing.T) {
	ca := tlsconftest.NewCA(t)
	srv := ca.Server(t, "global")
	tl, err := New(Config{
		RPC: true, HTTP: true, CAFile: ca.File, CertFile: srv.CertFile, KeyFile: srv.KeyFile,
		TLSMinVersion: "tls11", TLSCipherSuites: "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
	}, "global")
	must.NoError(t, err)
	l := tl.cur.Load()
	for _, c := range []*tls.Config{l.rpcServer, l.rpcClient, l.httpServer} {
		must.Eq(t, uint16(tls.VersionTLS11), c.MinVersion)
		must.Eq(t, []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256}, c.CipherSuites)
	}
	must.Eq(t, tls.RequireAndVerifyClientCert, l.rpcServer.ClientAuth)
	must.Eq(t, tls.NoClientCert, l.httpServer.ClientAuth)
	// Without verify_server_hostname the client checks the chain only.
	must.True(t, l.rpcClient.InsecureSkipVerify)
	must.NotNil(t, l.rpcClient.VerifyConnection)

	must.NoError(t, tl.Reload(Config{
		RPC: true, HTTP: true, CAFile: ca.File, CertFile: srv.CertFile, KeyFile: srv.KeyFile,
		VerifyServerHostname: true, VerifyHTTPSClient: true,
	}))
	l = tl.cur.Load()
	must.Eq(t, uint16(tls.VersionTLS12), l.rpcClient.MinVersion, must.Sprint("tls12 by default"))
	must.Eq(t, "server.global.nomad", l.rpcClient.ServerName)
	must.False(t, l.rpcClient.InsecureSkipVerify)
	must.Eq(t, tls.RequireAndVerifyClientCert, l.httpServer.ClientAuth)
}
