package command

import (
	"crypto/x509"
	"fmt"
	"os"
	"strings"

	"github.com/opennomad/nomad/tlsconf/certgen"
)

// TLSCAInfoCommand shows what a CA certificate file holds.
type TLSCAInfoCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *TLSCAInfoCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad tls ca info <CA file>

  Show the serial number, issuer, subject, expiry and permitted DNS domains
  (name constraints) of a CA certificate file.

      $ nomad tls ca info nomad-agent-ca.pem
`)
}

// Synopsis implements cli.Command.
func (c *TLSCAInfoCommand) Synopsis() string { return "Show the information of a CA certificate" }

// Run implements cli.Command.
func (c *TLSCAInfoCommand) Run(args []string) int {
	cert, code, ok := c.readCertArg(args, "tls ca info", "<CA file>")
	if !ok {
		return code
	}
	c.Ui.Output(formatKV(append(certBasics(cert),
		fmt.Sprintf("Permitted DNS Domains|%v", cert.PermittedDNSDomains))))
	return 0
}

// TLSCertInfoCommand shows what a certificate file holds.
type TLSCertInfoCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *TLSCertInfoCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad tls cert info <certificate file>

  Show the serial number, issuer, subject, expiry and subject alternative
  names of a certificate file.

      $ nomad tls cert info global-server-nomad.pem
`)
}

// Synopsis implements cli.Command.
func (c *TLSCertInfoCommand) Synopsis() string { return "Show the information of a certificate" }

// Run implements cli.Command.
func (c *TLSCertInfoCommand) Run(args []string) int {
	cert, code, ok := c.readCertArg(args, "tls cert info", "<certificate file>")
	if !ok {
		return code
	}
	c.Ui.Output(formatKV(append(certBasics(cert),
		fmt.Sprintf("DNS Names|%v", cert.DNSNames),
		fmt.Sprintf("IP Addresses|%v", cert.IPAddresses))))
	return 0
}

// readCertArg parses the one certificate file the info commands take.
func (m *Meta) readCertArg(args []string, name, argName string) (*x509.Certificate, int, bool) {
	flags := m.flagSet(name, flagsNone)
	if !m.parseFlags(flags, args, name) {
		return nil, 1, false
	}
	if flags.NArg() != 1 {
		return nil, m.usageError(name, "This command takes one argument: "+argName), false
	}
	path := flags.Arg(0)
	data, err := os.ReadFile(path)
	if err != nil {
		m.Ui.Error(fmt.Sprintf("Error reading %s: %s", path, err))
		return nil, 1, false
	}
	cert, err := certgen.ParseCertificate(data)
	if err != nil {
		m.Ui.Error(fmt.Sprintf("Error parsing %s: %s", path, err))
		return nil, 1, false
	}
	return cert, 0, true
}

// certBasics are the rows both info commands start with.
func certBasics(cert *x509.Certificate) []string {
	return []string{
		"Serial Number|" + cert.SerialNumber.String(),
		"Issuer CN|" + cert.Issuer.CommonName,
		"Common Name|" + cert.Subject.String(),
		"Expiry Date|" + cert.NotAfter.UTC().String(),
	}
}
