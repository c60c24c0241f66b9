package api

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opennomad/nomad/tlsconf/certgen"
)

// tlsEnv are the TLS variables DefaultConfig reads; tests clear them all
// so the machine's environment cannot leak in.
var tlsEnv = []string{EnvCACert, EnvCAPath, EnvClientCert, EnvClientKey, EnvTLSServerName, EnvSkipVerify}

func TestDefaultConfigReadsTLSEnvironment(t *testing.T) {
	cases := []struct {
		name string
		env  map[string]string
		want TLSConfig
	}{
		{name: "nothing set", want: TLSConfig{}},
		{name: "everything set", env: map[string]string{
			EnvCACert: "/ca.pem", EnvCAPath: "/cas", EnvClientCert: "/cli.pem", EnvClientKey: "/cli-key.pem",
			EnvTLSServerName: "server.global.nomad", EnvSkipVerify: "true",
		}, want: TLSConfig{CACert: "/ca.pem", CAPath: "/cas", ClientCert: "/cli.pem", ClientKey: "/cli-key.pem",
			TLSServerName: "server.global.nomad", Insecure: true}},
		{name: "skip verify as 1", env: map[string]string{EnvSkipVerify: "1"}, want: TLSConfig{Insecure: true}},
		{name: "skip verify not a boolean is ignored", env: map[string]string{EnvSkipVerify: "sure"}, want: TLSConfig{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range tlsEnv {
				t.Setenv(k, tc.env[k])
			}
			got := DefaultConfig().TLSConfig
			if got == nil || got.CACert != tc.want.CACert || got.CAPath != tc.want.CAPath ||
				got.ClientCert != tc.want.ClientCert || got.ClientKey != tc.want.ClientKey ||
				got.TLSServerName != tc.want.TLSServerName || got.Insecure != tc.want.Insecure {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// tlsFiles are PEM files of a test PKI in a temp dir.
type tlsFiles struct {
	dir                string
	caCert, caDir      string
	cliCert, cliKey    string
	rogueCert, rogueKy string
	server             tls.Certificate
	caPool             *x509.CertPool
}

func writePEM(t *testing.T, path string, data []byte) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// newTLSFiles makes a CA with a server certificate (served by the test
// agent) and a CLI certificate, plus a CLI certificate of another CA.
func newTLSFiles(t *testing.T) tlsFiles {
	t.Helper()
	dir := t.TempDir()
	ca, err := certgen.CreateCA(certgen.CAOptions{})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := certgen.CreateCert(certgen.CertOptions{Role: certgen.RoleServer, CA: ca})
	if err != nil {
		t.Fatal(err)
	}
	cli, err := certgen.CreateCert(certgen.CertOptions{Role: certgen.RoleCLI, CA: ca})
	if err != nil {
		t.Fatal(err)
	}
	otherCA, err := certgen.CreateCA(certgen.CAOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rogue, err := certgen.CreateCert(certgen.CertOptions{Role: certgen.RoleCLI, CA: otherCA})
	if err != nil {
		t.Fatal(err)
	}
	serverCert, err := tls.X509KeyPair(srv.Cert, srv.Key)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca.Cert)
	return tlsFiles{
		dir:       dir,
		caCert:    writePEM(t, filepath.Join(dir, "nomad-agent-ca.pem"), ca.Cert),
		caDir:     filepath.Dir(writePEM(t, filepath.Join(dir, "cas", "nomad-agent-ca.pem"), ca.Cert)),
		cliCert:   writePEM(t, filepath.Join(dir, "global-cli-nomad.pem"), cli.Cert),
		cliKey:    writePEM(t, filepath.Join(dir, "global-cli-nomad-key.pem"), cli.Key),
		rogueCert: writePEM(t, filepath.Join(dir, "rogue.pem"), rogue.Cert),
		rogueKy:   writePEM(t, filepath.Join(dir, "rogue-key.pem"), rogue.Key),
		server:    serverCert,
		caPool:    pool,
	}
}

// newMTLSAgent serves /v1/status/leader over HTTPS with the server
// certificate and requires a client certificate signed by the CA, as an
// agent with verify_https_client does.
func newMTLSAgent(t *testing.T, f tlsFiles) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`"127.0.0.1:4647"`))
	}))
	srv.TLS = &tls.Config{
		Certificates: []tls.Certificate{f.server},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    f.caPool,
		MinVersion:   tls.VersionTLS12,
	}
	// The handshake failures the refusal cases provoke are expected; keep
	// them out of the test log.
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

func TestClientTLSFromEnvironment(t *testing.T) {
	f := newTLSFiles(t)
	agent := newMTLSAgent(t, f)
	// The test server listens on 127.0.0.1, which the server certificate
	// names; "localhost" in the URL exercises the DNS SAN instead.
	localhostURL := strings.Replace(agent.URL, "127.0.0.1", "localhost", 1)

	cases := []struct {
		name       string
		addr       string
		env        map[string]string
		wantNewErr string // NewClient fails
		wantErr    string // the request fails
	}{
		{name: "CA and client certificate", env: map[string]string{
			EnvCACert: f.caCert, EnvClientCert: f.cliCert, EnvClientKey: f.cliKey}},
		{name: "CA by directory", env: map[string]string{
			EnvCAPath: f.caDir, EnvClientCert: f.cliCert, EnvClientKey: f.cliKey}},
		{name: "by DNS name", addr: localhostURL, env: map[string]string{
			EnvCACert: f.caCert, EnvClientCert: f.cliCert, EnvClientKey: f.cliKey}},
		{name: "server name that the certificate proves", env: map[string]string{
			EnvCACert: f.caCert, EnvClientCert: f.cliCert, EnvClientKey: f.cliKey, EnvTLSServerName: "server.global.nomad"}},
		{name: "server name that the certificate does not prove", env: map[string]string{
			EnvCACert: f.caCert, EnvClientCert: f.cliCert, EnvClientKey: f.cliKey, EnvTLSServerName: "server.eu.nomad"},
			wantErr: "server.eu.nomad"},
		{name: "no client certificate", env: map[string]string{EnvCACert: f.caCert},
			wantErr: "certificate required"},
		{name: "client certificate of another CA", env: map[string]string{
			EnvCACert: f.caCert, EnvClientCert: f.rogueCert, EnvClientKey: f.rogueKy},
			// The agent names the CAs it accepts, so Go's client does not
			// even send a certificate of another one.
			wantErr: "certificate required"},
		{name: "no CA: the agent's certificate is unknown", env: map[string]string{
			EnvClientCert: f.cliCert, EnvClientKey: f.cliKey},
			wantErr: "certificate signed by unknown authority"},
		{name: "skip verify without a CA", env: map[string]string{
			EnvClientCert: f.cliCert, EnvClientKey: f.cliKey, EnvSkipVerify: "true"}},
		{name: "skip verify false still verifies", env: map[string]string{
			EnvClientCert: f.cliCert, EnvClientKey: f.cliKey, EnvSkipVerify: "false"},
			wantErr: "certificate signed by unknown authority"},
		{name: "certificate without its key", env: map[string]string{
			EnvCACert: f.caCert, EnvClientCert: f.cliCert},
			wantNewErr: "both client cert and client key must be provided"},
		{name: "missing CA file", env: map[string]string{
			EnvCACert: filepath.Join(f.dir, "nope.pem")},
			wantNewErr: "loading CA file"},
		{name: "CA file that is not PEM", env: map[string]string{
			EnvCACert: writePEM(t, filepath.Join(f.dir, "junk.pem"), []byte("junk"))},
			wantNewErr: "no PEM certificate found"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range tlsEnv {
				t.Setenv(k, tc.env[k])
			}
			t.Setenv(EnvAddress, agent.URL)
			if tc.addr != "" {
				t.Setenv(EnvAddress, tc.addr)
			}
			c, err := NewClient(DefaultConfig())
			if tc.wantNewErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantNewErr) {
					t.Fatalf("NewClient err = %v, want %q", err, tc.wantNewErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("NewClient: %v", err)
			}
			leader, err := c.Status().Leader()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || leader != "127.0.0.1:4647" {
				t.Fatalf("Leader = %q, %v", leader, err)
			}
		})
	}
}

// A client given its own HTTP client uses it as is, as Nomad's does.
func TestClientTLSIgnoredWithOwnHTTPClient(t *testing.T) {
	hc := &http.Client{}
	c, err := NewClient(&Config{HTTPClient: hc, TLSConfig: &TLSConfig{ClientCert: "/nowhere.pem"}})
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	if c.http != hc || hc.Transport != nil {
		t.Fatal("own HTTP client was replaced or changed")
	}
}
