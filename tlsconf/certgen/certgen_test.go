package certgen

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/tls"
	"crypto/x509"
	"net"
	"slices"
	"strings"
	"testing"
	"time"
)

var testNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func mustCA(t *testing.T, opts CAOptions) (PEMPair, *x509.Certificate) {
	t.Helper()
	ca, err := CreateCA(opts)
	if err != nil {
		t.Fatalf("CreateCA: %v", err)
	}
	cert, err := ParseCertificate(ca.Cert)
	if err != nil {
		t.Fatalf("parse CA: %v", err)
	}
	return ca, cert
}

func TestCreateCA(t *testing.T) {
	cases := []struct {
		name        string
		opts        CAOptions
		wantCN      string // prefix
		wantDays    int
		wantDomains []string
	}{
		{name: "defaults", opts: CAOptions{Now: testNow},
			wantCN: "Nomad Agent CA ", wantDays: 1825},
		{name: "common name and lifetime", opts: CAOptions{Now: testNow, CommonName: "Acme CA", Days: 30},
			wantCN: "Acme CA", wantDays: 30},
		{name: "name constraint", opts: CAOptions{Now: testNow, Domain: "example.com", NameConstraint: true, AdditionalDomains: []string{"ui.example.org"}},
			wantCN: "Nomad Agent CA ", wantDays: 1825, wantDomains: []string{"example.com", "localhost", "ui.example.org"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ca, cert := mustCA(t, tc.opts)
			if !strings.HasPrefix(cert.Subject.CommonName, tc.wantCN) {
				t.Errorf("CN = %q, want prefix %q", cert.Subject.CommonName, tc.wantCN)
			}
			if !cert.IsCA || !cert.BasicConstraintsValid {
				t.Error("not a CA")
			}
			if cert.KeyUsage&x509.KeyUsageCertSign == 0 {
				t.Error("CA cannot sign certificates")
			}
			if want := testNow.AddDate(0, 0, tc.wantDays); !cert.NotAfter.Equal(want) {
				t.Errorf("NotAfter = %v, want %v", cert.NotAfter, want)
			}
			if !cert.NotBefore.Before(testNow) {
				t.Errorf("NotBefore = %v, want before %v", cert.NotBefore, testNow)
			}
			if !slices.Equal(cert.PermittedDNSDomains, tc.wantDomains) {
				t.Errorf("permitted domains = %v, want %v", cert.PermittedDNSDomains, tc.wantDomains)
			}
			if pub, ok := cert.PublicKey.(*ecdsa.PublicKey); !ok || pub.Curve != elliptic.P256() {
				t.Errorf("public key %T is not ECDSA P-256", cert.PublicKey)
			}
			if err := cert.CheckSignatureFrom(cert); err != nil {
				t.Errorf("not self-signed: %v", err)
			}
			if _, err := tls.X509KeyPair(ca.Cert, ca.Key); err != nil {
				t.Errorf("key does not match certificate: %v", err)
			}
		})
	}
}

func TestCreateCA_Refusals(t *testing.T) {
	cases := []struct {
		name    string
		opts    CAOptions
		wantErr string
	}{
		{name: "negative days", opts: CAOptions{Days: -1}, wantErr: "must be positive"},
		{name: "additional domain without constraint", opts: CAOptions{AdditionalDomains: []string{"x.org"}}, wantErr: "need NameConstraint"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := CreateCA(tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestCreateCert(t *testing.T) {
	ca, caCert := mustCA(t, CAOptions{Now: testNow})
	roots := x509.NewCertPool()
	roots.AddCert(caCert)
	loopback := net.IPv4(127, 0, 0, 1)
	cases := []struct {
		name     string
		opts     CertOptions
		wantCN   string
		wantDNS  []string
		wantIPs  []net.IP
		wantDays int
	}{
		{name: "server defaults", opts: CertOptions{Role: RoleServer},
			wantCN: "server.global.nomad", wantDNS: []string{"server.global.nomad", "localhost"}, wantIPs: []net.IP{loopback}, wantDays: 365},
		{name: "client in a region", opts: CertOptions{Role: RoleClient, Region: "eu", Days: 10},
			wantCN: "client.eu.nomad", wantDNS: []string{"client.eu.nomad", "localhost"}, wantIPs: []net.IP{loopback}, wantDays: 10},
		{name: "cli has no IP", opts: CertOptions{Role: RoleCLI},
			wantCN: "cli.global.nomad", wantDNS: []string{"cli.global.nomad", "localhost"}, wantDays: 365},
		{name: "extra names, duplicates once", opts: CertOptions{Role: RoleServer, Domain: "corp",
			DNSNames: []string{"nomad.service", "localhost"}, IPAddresses: []net.IP{net.ParseIP("10.0.0.5"), loopback}},
			wantCN: "server.global.corp", wantDNS: []string{"server.global.corp", "localhost", "nomad.service"},
			wantIPs: []net.IP{loopback, net.ParseIP("10.0.0.5")}, wantDays: 365},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.CA = ca
			tc.opts.Now = testNow
			pair, err := CreateCert(tc.opts)
			if err != nil {
				t.Fatalf("CreateCert: %v", err)
			}
			cert, err := ParseCertificate(pair.Cert)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			if cert.Subject.CommonName != tc.wantCN {
				t.Errorf("CN = %q, want %q", cert.Subject.CommonName, tc.wantCN)
			}
			if !slices.Equal(cert.DNSNames, tc.wantDNS) {
				t.Errorf("DNS SANs = %v, want %v", cert.DNSNames, tc.wantDNS)
			}
			if !slices.EqualFunc(cert.IPAddresses, tc.wantIPs, net.IP.Equal) {
				t.Errorf("IP SANs = %v, want %v", cert.IPAddresses, tc.wantIPs)
			}
			if !slices.Equal(cert.ExtKeyUsage, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}) {
				t.Errorf("ext key usage = %v", cert.ExtKeyUsage)
			}
			if cert.KeyUsage&x509.KeyUsageDigitalSignature == 0 {
				t.Error("missing digital signature key usage")
			}
			if cert.IsCA {
				t.Error("leaf is a CA")
			}
			if want := testNow.AddDate(0, 0, tc.wantDays); !cert.NotAfter.Equal(want) {
				t.Errorf("NotAfter = %v, want %v", cert.NotAfter, want)
			}
			if _, err := tls.X509KeyPair(pair.Cert, pair.Key); err != nil {
				t.Errorf("key does not match certificate: %v", err)
			}
			// It verifies against the CA for its name, both as a server and
			// as a client.
			for _, usage := range []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth} {
				_, err := cert.Verify(x509.VerifyOptions{
					Roots: roots, DNSName: tc.wantCN, CurrentTime: testNow,
					KeyUsages: []x509.ExtKeyUsage{usage},
				})
				if err != nil {
					t.Errorf("verify for %v: %v", usage, err)
				}
			}
		})
	}
}

// A name-constrained CA's certificates verify only inside its domains:
// the constraint is what keeps a stolen CA key of one cluster from
// minting names of another.
func TestCreateCert_NameConstraint(t *testing.T) {
	ca, caCert := mustCA(t, CAOptions{Now: testNow, Domain: "example.com", NameConstraint: true})
	roots := x509.NewCertPool()
	roots.AddCert(caCert)
	verify := func(domain string) error {
		pair, err := CreateCert(CertOptions{Role: RoleServer, Domain: domain, CA: ca, Now: testNow})
		if err != nil {
			t.Fatalf("CreateCert: %v", err)
		}
		cert, _ := ParseCertificate(pair.Cert)
		_, err = cert.Verify(x509.VerifyOptions{Roots: roots, DNSName: "localhost", CurrentTime: testNow})
		return err
	}
	if err := verify("example.com"); err != nil {
		t.Errorf("certificate inside the domain: %v", err)
	}
	if err := verify("nomad"); err == nil {
		t.Error("certificate outside the permitted domains verified")
	}
}

func TestCreateCert_Refusals(t *testing.T) {
	ca, _ := mustCA(t, CAOptions{Now: testNow})
	leaf, err := CreateCert(CertOptions{Role: RoleCLI, CA: ca})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		opts    CertOptions
		wantErr string
	}{
		{name: "no role", opts: CertOptions{CA: ca}, wantErr: `unknown certificate role ""`},
		{name: "negative days", opts: CertOptions{Role: RoleServer, CA: ca, Days: -3}, wantErr: "must be positive"},
		{name: "no CA", opts: CertOptions{Role: RoleServer}, wantErr: "reading CA certificate: no PEM certificate found"},
		{name: "CA key missing", opts: CertOptions{Role: RoleServer, CA: PEMPair{Cert: ca.Cert}}, wantErr: "reading CA key: no PEM private key found"},
		{name: "leaf as CA", opts: CertOptions{Role: RoleServer, CA: leaf}, wantErr: `"cli.global.nomad" is not a CA`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := CreateCert(tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestNames(t *testing.T) {
	if got := CommonName(RoleClient, "eu", "nomad"); got != "client.eu.nomad" {
		t.Errorf("CommonName = %q", got)
	}
	if got := FileBase(RoleServer, "global", "nomad"); got != "global-server-nomad" {
		t.Errorf("FileBase = %q", got)
	}
	if got := CAFileBase("nomad"); got != "nomad-agent-ca" {
		t.Errorf("CAFileBase = %q", got)
	}
}
