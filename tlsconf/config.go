package tlsconf

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/hashicorp/go-rootcerts"
)

// Config is the agent's `tls` block. The `hcl` tags name the keys of
// agent configuration files.
type Config struct {
	// HTTP serves the HTTP API over HTTPS.
	HTTP bool `hcl:"http"`
	// RPC makes the RPC port (RPC, streaming calls and Raft) speak
	// mutual TLS, in and out.
	RPC bool `hcl:"rpc"`
	// CAFile, CertFile and KeyFile are PEM files: the CA every peer's
	// certificate must chain to, and this agent's certificate and key.
	CAFile   string `hcl:"ca_file"`
	CertFile string `hcl:"cert_file"`
	KeyFile  string `hcl:"key_file"`
	// VerifyServerHostname makes outgoing RPC check that the server
	// proves server.<region>.nomad, and incoming connections check their
	// peer's role: Raft only from servers of the region, RPC from servers
	// of any region or clients of this one. Without it any certificate
	// the CA signed is accepted.
	VerifyServerHostname bool `hcl:"verify_server_hostname"`
	// VerifyHTTPSClient requires HTTPS clients to present a certificate
	// the CA signed.
	VerifyHTTPSClient bool `hcl:"verify_https_client"`
	// RPCUpgradeMode accepts plaintext RPC next to TLS, while a cluster
	// moves to TLS one agent at a time.
	RPCUpgradeMode bool `hcl:"rpc_upgrade_mode"`
	// TLSMinVersion is tls10, tls11, tls12 or tls13; "" means tls12.
	TLSMinVersion string `hcl:"tls_min_version"`
	// TLSCipherSuites is a comma-separated list of Go's cipher suite
	// names for TLS 1.2 and older; "" keeps Go's defaults.
	TLSCipherSuites string `hcl:"tls_cipher_suites"`
}

// Enabled reports whether the block turns TLS on anywhere.
func (c Config) Enabled() bool { return c.HTTP || c.RPC }

// DefaultMinVersion is the oldest TLS version accepted unless
// tls_min_version says otherwise.
const DefaultMinVersion = "tls12"

var minVersions = map[string]uint16{
	"tls10": tls.VersionTLS10,
	"tls11": tls.VersionTLS11,
	"tls12": tls.VersionTLS12,
	"tls13": tls.VersionTLS13,
}

// Problem is one setting of the block that cannot work; Key is its name
// inside the block ("cert_file").
type Problem struct {
	Key     string
	Problem string
}

// Problems checks the block, reading the files it names, and returns
// every problem found.
func (c Config) Problems() []Problem {
	var p []Problem
	add := func(key, format string, args ...any) {
		p = append(p, Problem{Key: key, Problem: fmt.Sprintf(format, args...)})
	}
	if c.Enabled() {
		on := "tls.rpc"
		if !c.RPC {
			on = "tls.http"
		}
		if c.CertFile == "" {
			add("cert_file", "required when %s is on", on)
		}
		if c.KeyFile == "" {
			add("key_file", "required when %s is on", on)
		}
	}
	if c.CAFile == "" {
		switch {
		case c.RPC:
			add("ca_file", "required when tls.rpc is on: both ends of an RPC connection check the other's certificate")
		case c.HTTP && c.VerifyHTTPSClient:
			add("ca_file", "required when verify_https_client is on")
		}
	}
	for _, f := range []struct{ key, path string }{{"ca_file", c.CAFile}, {"cert_file", c.CertFile}, {"key_file", c.KeyFile}} {
		if f.path == "" {
			continue
		}
		if _, err := os.Stat(f.path); err != nil {
			add(f.key, "%v", err)
		}
	}
	if len(p) == 0 {
		// The files exist: check that they parse.
		if c.CAFile != "" {
			if _, err := loadCA(c.CAFile); err != nil {
				add("ca_file", "%v", err)
			}
		}
		if c.CertFile != "" && c.KeyFile != "" {
			if _, err := loadKeyPair(c.CertFile, c.KeyFile); err != nil {
				add("cert_file", "%v", err)
			}
		}
	}
	if _, err := c.minVersion(); err != nil {
		add("tls_min_version", "%v", err)
	}
	if _, err := c.cipherSuites(); err != nil {
		add("tls_cipher_suites", "%v", err)
	}
	return p
}

// minVersion is tls_min_version as crypto/tls's constant.
func (c Config) minVersion() (uint16, error) {
	name := c.TLSMinVersion
	if name == "" {
		name = DefaultMinVersion
	}
	v, ok := minVersions[name]
	if !ok {
		return 0, fmt.Errorf("%q is not one of tls10, tls11, tls12, tls13", c.TLSMinVersion)
	}
	return v, nil
}

// cipherSuites parses tls_cipher_suites; nil keeps Go's defaults. Only
// the suites Go deems secure are accepted, and none with TLS 1.3 as the
// minimum, whose suites Go does not let anyone choose.
func (c Config) cipherSuites() ([]uint16, error) {
	if strings.TrimSpace(c.TLSCipherSuites) == "" {
		return nil, nil
	}
	if c.TLSMinVersion == "tls13" {
		return nil, fmt.Errorf("cannot be set with tls_min_version = \"tls13\": TLS 1.3 cipher suites are not configurable")
	}
	known := map[string]uint16{}
	for _, s := range tls.CipherSuites() {
		known[s.Name] = s.ID
	}
	var out []uint16
	var bad []string
	for _, name := range strings.Split(c.TLSCipherSuites, ",") {
		name = strings.TrimSpace(name)
		id, ok := known[name]
		if !ok {
			bad = append(bad, name)
			continue
		}
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("unsupported cipher suites %q (use names such as TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256)", bad)
	}
	return out, nil
}

// loadCA reads the CA bundle (one or more PEM certificates) with
// go-rootcerts, the reader Nomad's api client uses for its CA files, so
// that a bundle one side accepts the other does too.
func loadCA(path string) (*x509.CertPool, error) {
	pool, err := rootcerts.LoadCAFile(path)
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", path, err)
	}
	return pool, nil
}

// loadKeyPair reads this agent's certificate and key.
func loadKeyPair(certFile, keyFile string) (*tls.Certificate, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("loading %s and %s: %w", certFile, keyFile, err)
	}
	return &cert, nil
}
