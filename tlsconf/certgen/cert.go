package certgen

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"net"
	"slices"
	"time"
)

// Role is what an agent certificate lets its holder be.
type Role string

// The roles of Nomad's certificates. A server certificate is the key to
// the cluster (servers accept Raft and every RPC from it); a client
// certificate lets a node talk to servers of its region; a CLI
// certificate is for operators' HTTPS calls.
const (
	RoleServer Role = "server"
	RoleClient Role = "client"
	RoleCLI    Role = "cli"
)

// DefaultRegion is the region of a certificate when none is given.
const DefaultRegion = "global"

// DefaultCertDays is how long a certificate is valid when no lifetime is
// given (one year).
const DefaultCertDays = 365

// CertOptions describe an agent certificate to create. Zero fields take
// the defaults.
type CertOptions struct {
	Role Role
	// Region and Domain make the common name <role>.<region>.<domain>.
	// Defaults "global" and "nomad".
	Region string
	Domain string
	// Days is the certificate's lifetime. Default DefaultCertDays.
	Days int
	// DNSNames and IPAddresses are added to the subject alternative names
	// every certificate has (its common name and localhost, and 127.0.0.1
	// for servers and clients).
	DNSNames    []string
	IPAddresses []net.IP
	// CA is the signing CA's certificate and key, PEM encoded.
	CA PEMPair
	// Now is the issuing time; zero means time.Now. Tests fix it.
	Now time.Time
}

// CommonName is the name a certificate of role in region proves, e.g.
// "server.global.nomad": what agents verify with verify_server_hostname.
func CommonName(role Role, region, domain string) string {
	return fmt.Sprintf("%s.%s.%s", role, region, domain)
}

// FileBase is the file name prefix Nomad gives such a certificate:
// "<region>-<role>-<domain>", written as FileBase+".pem" and
// FileBase+"-key.pem".
func FileBase(role Role, region, domain string) string {
	return fmt.Sprintf("%s-%s-%s", region, role, domain)
}

// CAFileBase is the file name prefix of a domain's CA:
// "<domain>-agent-ca", written as CAFileBase+".pem" and
// CAFileBase+"-key.pem".
func CAFileBase(domain string) string {
	return domain + "-agent-ca"
}

// CreateCert makes a certificate for opts.Role signed by opts.CA, and its
// key. It is usable both to serve and to connect (server and client
// extended key usages), since agents do both with one certificate.
func CreateCert(opts CertOptions) (PEMPair, error) {
	switch opts.Role {
	case RoleServer, RoleClient, RoleCLI:
	default:
		return PEMPair{}, fmt.Errorf("unknown certificate role %q: must be server, client or cli", opts.Role)
	}
	if opts.Region == "" {
		opts.Region = DefaultRegion
	}
	if opts.Domain == "" {
		opts.Domain = DefaultDomain
	}
	if opts.Days == 0 {
		opts.Days = DefaultCertDays
	}
	if opts.Days < 0 {
		return PEMPair{}, fmt.Errorf("certificate lifetime must be positive, got %d days", opts.Days)
	}
	caCert, err := ParseCertificate(opts.CA.Cert)
	if err != nil {
		return PEMPair{}, fmt.Errorf("reading CA certificate: %w", err)
	}
	if !caCert.IsCA {
		return PEMPair{}, fmt.Errorf("CA certificate %q is not a CA", caCert.Subject.CommonName)
	}
	caKey, err := parseSigner(opts.CA.Key)
	if err != nil {
		return PEMPair{}, fmt.Errorf("reading CA key: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return PEMPair{}, fmt.Errorf("generating key: %w", err)
	}
	serial, err := newSerial()
	if err != nil {
		return PEMPair{}, err
	}
	cn := CommonName(opts.Role, opts.Region, opts.Domain)
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             now.Add(-clockSkew),
		NotAfter:              now.AddDate(0, 0, opts.Days),
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		DNSNames:              sans(cn, opts.DNSNames),
		IPAddresses:           ipSANs(opts.Role, opts.IPAddresses),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, key.Public(), caKey)
	if err != nil {
		return PEMPair{}, fmt.Errorf("signing %s certificate: %w", cn, err)
	}
	return encodePair(der, key)
}

// sans lists the certificate's DNS names: its common name, localhost (the
// CLI on the agent's own machine), then the extra ones, each once.
func sans(cn string, extra []string) []string {
	out := []string{cn, "localhost"}
	for _, n := range extra {
		if n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// ipSANs lists the certificate's IP addresses: 127.0.0.1 for agents
// (servers and clients are reached on loopback by the local CLI), then
// the extra ones, each once.
func ipSANs(role Role, extra []net.IP) []net.IP {
	var out []net.IP
	if role != RoleCLI {
		out = append(out, net.IPv4(127, 0, 0, 1))
	}
	for _, ip := range extra {
		if ip != nil && !slices.ContainsFunc(out, ip.Equal) {
			out = append(out, ip)
		}
	}
	return out
}
