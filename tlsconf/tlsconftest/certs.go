// Package tlsconftest makes certificate authorities and certificates for
// tests, named as Nomad's tooling names them (server.<region>.nomad,
// client.<region>.nomad, with localhost and 127.0.0.1), written to PEM
// files a tls block can point at.
package tlsconftest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// CA is a test certificate authority.
type CA struct {
	Cert *x509.Certificate
	key  *ecdsa.PrivateKey
	// File is the CA certificate's PEM file.
	File string
	dir  string
}

var serial atomic.Int64

// NewCA makes a CA and writes its certificate into a temporary
// directory of t.
func NewCA(t testing.TB) *CA {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(serial.Add(1)),
		Subject:               pkix.Name{CommonName: "Nomad Agent CA"},
		NotBefore:             time.Now().Add(-time.Minute),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatalf("creating CA: %v", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatalf("parsing CA: %v", err)
	}
	dir := t.TempDir()
	ca := &CA{Cert: cert, key: key, File: filepath.Join(dir, "nomad-agent-ca.pem"), dir: dir}
	writePEM(t, ca.File, "CERTIFICATE", der)
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

// Issue signs a certificate for name (also valid for localhost and
// 127.0.0.1, for both server and client authentication) and writes it
// and its key to new files.
func (ca *CA) Issue(t testing.TB, name string) Pair {
	t.Helper()
	key := newKey(t)
	n := serial.Add(1)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(n),
		Subject:      pkix.Name{CommonName: name},
		DNSNames:     []string{name, "localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    time.Now().Add(-time.Minute),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatalf("issuing %s: %v", name, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatalf("parsing %s: %v", name, err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatalf("encoding key: %v", err)
	}
	base := filepath.Join(ca.dir, name+"-"+big.NewInt(n).String())
	p := Pair{CertFile: base + ".pem", KeyFile: base + "-key.pem", Cert: cert}
	writePEM(t, p.CertFile, "CERTIFICATE", der)
	writePEM(t, p.KeyFile, "EC PRIVATE KEY", keyDER)
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
		if err := os.WriteFile(f[1], b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatalf("generating key: %v", err)
	}
	return key
}

func writePEM(t testing.TB, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatalf("writing %s: %v", path, err)
	}
}
