// Package tlsconftest makes certificate authorities and certificates for
// tests with package certgen (as `nomad tls` makes them: server.<region>.nomad,
// client.<region>.nomad, with localhost and 127.0.0.1), written to PEM
// files a tls block can point at.
package tlsconftest

import (
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/opennomad/nomad/tlsconf/certgen"
)

// CA is a test certificate authority.
type CA struct {
	Cert *x509.Certificate
	pair certgen.PEMPair
	// File is the CA certificate's PEM file.
	File string
	dir  string
}

// issued numbers the files of the certificates a test makes.
var issued atomic.Int64

// NewCA makes a CA and writes its certificate into a temporary
// directory of t.
func NewCA(t testing.TB) *CA {
	t.Helper()
	pair, err := certgen.CreateCA(certgen.CAOptions{Days: 1})
	if err != nil {
		t.Fatalf("creating CA: %v", err)
	}
	cert, err := certgen.ParseCertificate(pair.Cert)
	if err != nil {
		t.Fatalf("parsing CA: %v", err)
	}
	dir := t.TempDir()
	ca := &CA{Cert: cert, pair: pair, File: filepath.Join(dir, "nomad-agent-ca.pem"), dir: dir}
	writeFile(t, ca.File, pair.Cert)
	return ca
}

// Pair is a certificate and its key, as files.
type Pair struct {
	CertFile, KeyFile string
	Cert              *x509.Certificate
}

// Server issues server.<region>.nomad.
func (ca *CA) Server(t testing.TB, region string) Pair {
	return ca.Issue(t, "server."+region+".nomad")
}

// Client issues client.<region>.nomad.
func (ca *CA) Client(t testing.TB, region string) Pair {
	return ca.Issue(t, "client."+region+".nomad")
}

// Issue signs the certificate whose common name is name, one of
// "<role>.<region>.<domain>" (role server, client or cli), valid for
// both server and client authentication, and writes it and its key to
// new files. Every certificate is also valid for 127.0.0.1, as tests dial
// agents there.
func (ca *CA) Issue(t testing.TB, name string) Pair {
	t.Helper()
	parts := strings.SplitN(name, ".", 3)
	if len(parts) != 3 {
		t.Fatalf("certificate name %q is not <role>.<region>.<domain>", name)
	}
	pair, err := certgen.CreateCert(certgen.CertOptions{
		Role: certgen.Role(parts[0]), Region: parts[1], Domain: parts[2], Days: 1,
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, CA: ca.pair,
	})
	if err != nil {
		t.Fatalf("issuing %s: %v", name, err)
	}
	cert, err := certgen.ParseCertificate(pair.Cert)
	if err != nil {
		t.Fatalf("parsing %s: %v", name, err)
	}
	base := filepath.Join(ca.dir, fmt.Sprintf("%s-%d", name, issued.Add(1)))
	p := Pair{CertFile: base + ".pem", KeyFile: base + "-key.pem", Cert: cert}
	writeFile(t, p.CertFile, pair.Cert)
	writeFile(t, p.KeyFile, pair.Key)
	return p
}

// CopyTo writes p's certificate and key over the files of dst, as an
// operator replacing certificates in place before a reload.
func (p Pair) CopyTo(t testing.TB, dst Pair) {
	t.Helper()
	for _, f := range [][2]string{{p.CertFile, dst.CertFile}, {p.KeyFile, dst.KeyFile}} {
		b, err := os.ReadFile(f[0])
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, f[1], b)
	}
}

func writeFile(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatalf("writing %s: %v", path, err)
	}
}
