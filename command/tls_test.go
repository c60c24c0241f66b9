package command

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"io/fs"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/opennomad/nomad/api"
	"github.com/opennomad/nomad/tlsconf/certgen"
)

// readCert parses a PEM certificate file of the current directory.
func readCert(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := certgen.ParseCertificate(data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return cert
}

// verifiesAgainst checks that cert chains to the CA in caFile for name.
func verifiesAgainst(t *testing.T, cert *x509.Certificate, caFile, name string) {
	t.Helper()
	roots := x509.NewCertPool()
	roots.AddCert(readCert(t, caFile))
	if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, DNSName: name}); err != nil {
		t.Errorf("%s does not verify against %s: %v", cert.Subject.CommonName, caFile, err)
	}
}

// TestTLSCommands walks `nomad tls` in a fresh directory, in order: the
// refusals before a CA exists, the CA, the certificates of each role, and
// the refusals to overwrite.
func TestTLSCommands(t *testing.T) {
	t.Chdir(t.TempDir())
	// A lone key where the client certificate will go: the pair must be
	// refused whole, leaving no certificate without its key.
	writeFile(t, "eu-client-nomad-key.pem", "not mine")

	steps := []struct {
		name     string
		args     []string
		wantCode int
		outHas   []string
		errHas   []string
		files    []string // must exist afterwards
		noFiles  []string // must not exist afterwards
		check    func(t *testing.T)
	}{
		{name: "tls alone prints its subcommands", args: []string{"tls"}, wantCode: 1,
			errHas: []string{"Usage: nomad tls <subcommand>", "Subcommands:", "ca ", "cert "}},
		{name: "tls cert lists create and info", args: []string{"tls", "cert"}, wantCode: 1, errHas: []string{"create ", "info "}},
		{name: "tls ca lists create", args: []string{"tls", "ca"}, wantCode: 1, errHas: []string{"create"}},
		{name: "cert before any CA", args: []string{"tls", "cert", "create", "-server"}, wantCode: 1,
			errHas:  []string{"Error reading the CA certificate", "nomad-agent-ca.pem", "nomad tls ca create"},
			noFiles: []string{"global-server-nomad.pem"}},
		{name: "ca takes no arguments", args: []string{"tls", "ca", "create", "x"}, wantCode: 1,
			errHas: []string{"This command takes no arguments"}},
		{name: "ca with zero days", args: []string{"tls", "ca", "create", "-days", "0"}, wantCode: 1,
			errHas: []string{"-days must be a positive number of days, got 0"}},
		{name: "ca domain with a slash", args: []string{"tls", "ca", "create", "-domain", "../x"}, wantCode: 1,
			errHas: []string{`-domain "../x" must not contain a path separator`}},
		{name: "additional domain needs the constraint", args: []string{"tls", "ca", "create", "-additional-domain", "ui.example"}, wantCode: 1,
			errHas: []string{"-additional-domain is a name constraint: it needs -name-constraint"}},
		{name: "ca", args: []string{"tls", "ca", "create"},
			outHas: []string{"==> CA Certificate saved to: nomad-agent-ca.pem", "==> CA Certificate key saved to: nomad-agent-ca-key.pem"},
			files:  []string{"nomad-agent-ca.pem", "nomad-agent-ca-key.pem"},
			check: func(t *testing.T) {
				ca := readCert(t, "nomad-agent-ca.pem")
				if !ca.IsCA || !strings.HasPrefix(ca.Subject.CommonName, "Nomad Agent CA ") || len(ca.PermittedDNSDomains) != 0 {
					t.Errorf("CA: IsCA %v, CN %q, permitted %v", ca.IsCA, ca.Subject.CommonName, ca.PermittedDNSDomains)
				}
				if fi, err := os.Stat("nomad-agent-ca-key.pem"); err != nil || fi.Mode().Perm() != 0o600 {
					t.Errorf("CA key mode: %v %v", fi, err)
				}
			}},
		{name: "ca again is refused", args: []string{"tls", "ca", "create"}, wantCode: 1,
			errHas: []string{`"nomad-agent-ca.pem" already exists (files are never overwritten)`}},
		{name: "name-constrained ca of another domain",
			args:   []string{"tls", "ca", "create", "-domain", "example.com", "-name-constraint", "-additional-domain", "ui.example.org", "-common-name", "Example CA", "-days", "30"},
			outHas: []string{"example.com-agent-ca.pem", "example.com-agent-ca-key.pem"},
			check: func(t *testing.T) {
				ca := readCert(t, "example.com-agent-ca.pem")
				if ca.Subject.CommonName != "Example CA" || !slices.Equal(ca.PermittedDNSDomains, []string{"example.com", "localhost", "ui.example.org"}) {
					t.Errorf("CA: CN %q, permitted %v", ca.Subject.CommonName, ca.PermittedDNSDomains)
				}
			}},
		{name: "no role", args: []string{"tls", "cert", "create"}, wantCode: 1,
			errHas: []string{"Please provide either -server, -client, or -cli"}},
		{name: "two roles", args: []string{"tls", "cert", "create", "-server", "-cli"}, wantCode: 1,
			errHas:  []string{"Please provide either -server, -client, or -cli"},
			noFiles: []string{"global-server-nomad.pem", "global-cli-nomad.pem"}},
		{name: "bad IP", args: []string{"tls", "cert", "create", "-cli", "-additional-ipaddress", "10.0.0"}, wantCode: 1,
			errHas: []string{`-additional-ipaddress "10.0.0" is not an IP address`}},
		{name: "server", args: []string{"tls", "cert", "create", "-server"},
			outHas: []string{"==> Using CA file nomad-agent-ca.pem and CA key nomad-agent-ca-key.pem",
				"==> Server Certificate saved to global-server-nomad.pem", "==> Server Certificate key saved to global-server-nomad-key.pem"},
			errHas: []string{"WARNING: A server certificate"},
			files:  []string{"global-server-nomad.pem", "global-server-nomad-key.pem"},
			check: func(t *testing.T) {
				cert := readCert(t, "global-server-nomad.pem")
				if cert.Subject.CommonName != "server.global.nomad" ||
					!slices.Equal(cert.DNSNames, []string{"server.global.nomad", "localhost"}) ||
					len(cert.IPAddresses) != 1 || cert.IPAddresses[0].String() != "127.0.0.1" {
					t.Errorf("server cert: CN %q, DNS %v, IP %v", cert.Subject.CommonName, cert.DNSNames, cert.IPAddresses)
				}
				verifiesAgainst(t, cert, "nomad-agent-ca.pem", "server.global.nomad")
			}},
		{name: "server again is refused", args: []string{"tls", "cert", "create", "-server"}, wantCode: 1,
			errHas: []string{`"global-server-nomad.pem" already exists`}},
		{name: "client whose key file exists is refused whole", args: []string{"tls", "cert", "create", "-client", "-region", "eu"}, wantCode: 1,
			errHas: []string{`"eu-client-nomad-key.pem" already exists`}, noFiles: []string{"eu-client-nomad.pem"}},
		{name: "client with extra names",
			args:   []string{"tls", "cert", "create", "-client", "-region", "us", "-days", "10", "-additional-dnsname", "nomad.internal", "-additional-ipaddress", "10.0.0.7"},
			outHas: []string{"==> Client Certificate saved to us-client-nomad.pem", "==> Client Certificate key saved to us-client-nomad-key.pem"},
			check: func(t *testing.T) {
				cert := readCert(t, "us-client-nomad.pem")
				if cert.Subject.CommonName != "client.us.nomad" ||
					!slices.Equal(cert.DNSNames, []string{"client.us.nomad", "localhost", "nomad.internal"}) ||
					len(cert.IPAddresses) != 2 || cert.IPAddresses[1].String() != "10.0.0.7" {
					t.Errorf("client cert: CN %q, DNS %v, IP %v", cert.Subject.CommonName, cert.DNSNames, cert.IPAddresses)
				}
				if days := cert.NotAfter.Sub(cert.NotBefore).Hours() / 24; days < 10 || days > 10.01 {
					t.Errorf("client cert valid %.2f days, want 10", days)
				}
				verifiesAgainst(t, cert, "nomad-agent-ca.pem", "nomad.internal")
			}},
		{name: "cli", args: []string{"tls", "cert", "create", "-cli"},
			outHas: []string{"==> CLI Certificate saved to global-cli-nomad.pem"},
			check: func(t *testing.T) {
				cert := readCert(t, "global-cli-nomad.pem")
				if cert.Subject.CommonName != "cli.global.nomad" || len(cert.IPAddresses) != 0 {
					t.Errorf("cli cert: CN %q, IP %v", cert.Subject.CommonName, cert.IPAddresses)
				}
			}},
		{name: "ca info", args: []string{"tls", "ca", "info", "example.com-agent-ca.pem"},
			outHas: []string{"Issuer CN             = Example CA", "Common Name           = CN=Example CA",
				"Permitted DNS Domains = [example.com localhost ui.example.org]", "Expiry Date           = 20"}},
		{name: "cert info", args: []string{"tls", "cert", "info", "us-client-nomad.pem"},
			outHas: []string{"Issuer CN     = Nomad Agent CA ", "Common Name   = CN=client.us.nomad",
				"DNS Names     = [client.us.nomad localhost nomad.internal]", "IP Addresses  = [127.0.0.1 10.0.0.7]"}},
		{name: "cert info of a key file", args: []string{"tls", "cert", "info", "us-client-nomad-key.pem"}, wantCode: 1,
			errHas: []string{"Error parsing us-client-nomad-key.pem: no PEM certificate found"}},
		{name: "cert info of a missing file", args: []string{"tls", "cert", "info", "nope.pem"}, wantCode: 1,
			errHas: []string{"Error reading nope.pem"}},
		{name: "ca info without a file", args: []string{"tls", "ca", "info"}, wantCode: 1,
			errHas: []string{"This command takes one argument: <CA file>"}},
		{name: "server of another domain uses that domain's CA", args: []string{"tls", "cert", "create", "-server", "-domain", "example.com"},
			outHas: []string{"Using CA file example.com-agent-ca.pem", "global-server-example.com.pem"},
			check: func(t *testing.T) {
				verifiesAgainst(t, readCert(t, "global-server-example.com.pem"), "example.com-agent-ca.pem", "server.global.example.com")
			}},
		{name: "explicit CA files", args: []string{"tls", "cert", "create", "-cli", "-region", "ap", "-ca", "nomad-agent-ca.pem", "-key", "missing-key.pem"}, wantCode: 1,
			errHas: []string{"Error reading the CA key", "missing-key.pem"}, noFiles: []string{"ap-cli-nomad.pem"}},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			res := runCommand(t, "http://127.0.0.1:1", runOpts{}, st.args...)
			if res.code != st.wantCode {
				t.Fatalf("code = %d, want %d\nstdout: %s\nstderr: %s", res.code, st.wantCode, res.stdout, res.stderr)
			}
			for _, s := range st.outHas {
				if !strings.Contains(res.stdout, s) {
					t.Errorf("stdout lacks %q:\n%s", s, res.stdout)
				}
			}
			for _, s := range st.errHas {
				if !strings.Contains(res.stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, res.stderr)
				}
			}
			for _, f := range st.files {
				if _, err := os.Stat(f); err != nil {
					t.Errorf("missing %s: %v", f, err)
				}
			}
			for _, f := range st.noFiles {
				if _, err := os.Stat(f); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("%s exists (or %v)", f, err)
				}
			}
			if st.check != nil {
				st.check(t)
			}
		})
	}
	if data, _ := os.ReadFile("eu-client-nomad-key.pem"); string(data) != "not mine" {
		t.Errorf("existing key file was changed: %q", data)
	}
}

// TestTLSFlagsReachTheAgent runs a command against the fake agent served
// over HTTPS with client certificates required, as an agent with
// verify_https_client is: the TLS flags and variables are what lets the
// CLI in.
func TestTLSFlagsReachTheAgent(t *testing.T) {
	dir := t.TempDir()
	ca, err := certgen.CreateCA(certgen.CAOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mk := func(role certgen.Role) certgen.PEMPair {
		p, err := certgen.CreateCert(certgen.CertOptions{Role: role, CA: ca})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	srvPair, cliPair := mk(certgen.RoleServer), mk(certgen.RoleCLI)
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		writeFile(t, p, string(data))
		return p
	}
	caFile := write("nomad-agent-ca.pem", ca.Cert)
	caDir := filepath.Join(dir, "cas")
	if err := os.Mkdir(caDir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(caDir, "ca.pem"), string(ca.Cert))
	cliCert, cliKey := write("global-cli-nomad.pem", cliPair.Cert), write("global-cli-nomad-key.pem", cliPair.Key)

	serverCert, err := tls.X509KeyPair(srvPair.Cert, srvPair.Key)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca.Cert)
	fake := newFakeAgent(t)
	srv := httptest.NewUnstartedServer(fake.routes())
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{serverCert}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)

	cases := []struct {
		name     string
		args     []string
		env      map[string]string
		wantCode int
		errHas   string
	}{
		{name: "flags", args: []string{"-ca-cert", caFile, "-client-cert", cliCert, "-client-key", cliKey}},
		{name: "environment", env: map[string]string{api.EnvCACert: caFile, api.EnvClientCert: cliCert, api.EnvClientKey: cliKey}},
		{name: "CA directory by flag", args: []string{"-ca-path", caDir, "-client-cert", cliCert, "-client-key", cliKey}},
		{name: "CA file flag wins over a broken CA directory in the environment",
			args: []string{"-ca-cert", caFile}, env: map[string]string{api.EnvCAPath: filepath.Join(dir, "nope"), api.EnvClientCert: cliCert, api.EnvClientKey: cliKey}},
		{name: "server name the certificate proves", args: []string{"-ca-cert", caFile, "-client-cert", cliCert, "-client-key", cliKey, "-tls-server-name", "server.global.nomad"}},
		{name: "server name it does not prove", args: []string{"-ca-cert", caFile, "-client-cert", cliCert, "-client-key", cliKey, "-tls-server-name", "client.global.nomad"},
			wantCode: 1, errHas: "not client.global.nomad (the name checked is the address's host, or -tls-server-name / NOMAD_TLS_SERVER_NAME)"},
		{name: "skip verify by flag", args: []string{"-tls-skip-verify", "-client-cert", cliCert, "-client-key", cliKey}},
		{name: "skip verify by environment", args: []string{"-client-cert", cliCert, "-client-key", cliKey}, env: map[string]string{api.EnvSkipVerify: "true"}},
		{name: "no CA", args: []string{"-client-cert", cliCert, "-client-key", cliKey},
			wantCode: 1, errHas: "certificate signed by unknown authority (give the CA that signs the agent's certificate with -ca-cert or NOMAD_CACERT)"},
		{name: "no client certificate", args: []string{"-ca-cert", caFile},
			wantCode: 1, errHas: "certificate required"},
		{name: "certificate without its key", args: []string{"-ca-cert", caFile, "-client-cert", cliCert},
			wantCode: 1, errHas: "Error initializing client: both client cert and client key must be provided"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"server", "members"}, tc.args...)
			res := runCommand(t, srv.URL, runOpts{env: tc.env}, args...)
			if res.code != tc.wantCode {
				t.Fatalf("code = %d, want %d\nstdout: %s\nstderr: %s", res.code, tc.wantCode, res.stdout, res.stderr)
			}
			if tc.wantCode == 0 && !strings.Contains(res.stdout, "server-1.global") {
				t.Errorf("members not listed:\n%s", res.stdout)
			}
			if !strings.Contains(res.stderr, tc.errHas) {
				t.Errorf("stderr lacks %q:\n%s", tc.errHas, res.stderr)
			}
		})
	}
}
