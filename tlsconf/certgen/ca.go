package certgen

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"time"
)

// DefaultDomain is the DNS domain of agent certificates when none is given.
const DefaultDomain = "nomad"

// DefaultCADays is how long a CA is valid when no lifetime is given (five
// years).
const DefaultCADays = 1825

// clockSkew back-dates every certificate so that a machine whose clock is
// slightly behind the one that made it does not reject it as not yet valid.
const clockSkew = time.Minute

// CAOptions describe a CA to create. Zero fields take the defaults.
type CAOptions struct {
	// Domain is the cluster's DNS domain; it names the CA files and, with
	// NameConstraint, is the domain the CA may sign for. Default "nomad".
	Domain string
	// Days is the CA's lifetime. Default DefaultCADays.
	Days int
	// CommonName of the CA. Default "Nomad Agent CA <serial>", so two CAs
	// made on the same day are told apart.
	CommonName string
	// NameConstraint restricts the CA to sign only for Domain, localhost
	// and AdditionalDomains (a critical X.509 name constraint).
	NameConstraint bool
	// AdditionalDomains are more permitted domains; only with
	// NameConstraint.
	AdditionalDomains []string
	// Now is the issuing time; zero means time.Now. Tests fix it.
	Now time.Time
}

// PEMPair is a certificate and its private key, both PEM encoded.
type PEMPair struct {
	Cert []byte
	Key  []byte
}

// CreateCA makes a self-signed CA certificate and its key.
func CreateCA(opts CAOptions) (PEMPair, error) {
	if opts.Domain == "" {
		opts.Domain = DefaultDomain
	}
	if opts.Days == 0 {
		opts.Days = DefaultCADays
	}
	if opts.Days < 0 {
		return PEMPair{}, fmt.Errorf("CA lifetime must be positive, got %d days", opts.Days)
	}
	if len(opts.AdditionalDomains) > 0 && !opts.NameConstraint {
		return PEMPair{}, fmt.Errorf("additional domains are name constraints: they need NameConstraint")
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return PEMPair{}, fmt.Errorf("generating CA key: %w", err)
	}
	serial, err := newSerial()
	if err != nil {
		return PEMPair{}, err
	}
	cn := opts.CommonName
	if cn == "" {
		cn = "Nomad Agent CA " + serial.String()
	}
	now := opts.now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             now.Add(-clockSkew),
		NotAfter:              now.AddDate(0, 0, opts.Days),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
	}
	if opts.NameConstraint {
		tmpl.PermittedDNSDomainsCritical = true
		tmpl.PermittedDNSDomains = append([]string{opts.Domain, "localhost"}, opts.AdditionalDomains...)
	}
	// Self-signed: the template is its own parent.
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return PEMPair{}, fmt.Errorf("signing CA certificate: %w", err)
	}
	return encodePair(der, key)
}

func (o CAOptions) now() time.Time {
	if o.Now.IsZero() {
		return time.Now()
	}
	return o.Now
}

// newSerial returns a random 128-bit serial number: serials must be unique
// per CA, and random ones need no counter kept anywhere.
func newSerial() (*big.Int, error) {
	limit := new(big.Int).Lsh(big.NewInt(1), 128)
	n, err := rand.Int(rand.Reader, limit)
	if err != nil {
		return nil, fmt.Errorf("generating serial number: %w", err)
	}
	return n, nil
}
