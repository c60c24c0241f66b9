package command

import (
	"fmt"
	"strings"

	"github.com/opennomad/nomad/tlsconf/certgen"
)

// TLSCACreateCommand creates a self-signed CA for the cluster's TLS.
type TLSCACreateCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *TLSCACreateCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad tls ca create [options]

  Create a self-signed certificate authority (an ECDSA P-256 key) and write
  it to <domain>-agent-ca.pem, with its key in <domain>-agent-ca-key.pem,
  in the current directory. Existing files are never overwritten. Keep the
  key safe: whoever has it can make server certificates.

      $ nomad tls ca create
      ==> CA Certificate saved to: nomad-agent-ca.pem
      ==> CA Certificate key saved to: nomad-agent-ca-key.pem

CA Create Options:

  -domain=<domain>
    The cluster's DNS domain. It names the files and, with -name-constraint,
    is the domain the CA may sign for. Default = nomad

  -days=<n>
    How many days the CA is valid from now. Default = 1825 (five years)

  -common-name=<name>
    The CA's common name. Default = "Nomad Agent CA <serial number>"

  -name-constraint
    Restrict the CA to signing certificates for -domain, localhost and each
    -additional-domain only (an X.509 name constraint). If the web UI is
    served over HTTPS under another name, add it with -additional-domain:
    it cannot be added later.

  -additional-domain=<domain>
    Another domain the CA may sign for; only with -name-constraint. May be
    given more than once.
`)
}

// Synopsis implements cli.Command.
func (c *TLSCACreateCommand) Synopsis() string { return "Create a certificate authority" }

// Run implements cli.Command.
func (c *TLSCACreateCommand) Run(args []string) int {
	const name = "tls ca create"
	var opts certgen.CAOptions
	var additional stringSlice
	flags := c.flagSet(name, flagsNone)
	flags.StringVar(&opts.Domain, "domain", certgen.DefaultDomain, "")
	flags.IntVar(&opts.Days, "days", certgen.DefaultCADays, "")
	flags.StringVar(&opts.CommonName, "common-name", "", "")
	flags.BoolVar(&opts.NameConstraint, "name-constraint", false, "")
	flags.Var(&additional, "additional-domain", "")
	if !c.parseFlags(flags, args, name) {
		return 1
	}
	if flags.NArg() != 0 {
		return c.usageError(name, "This command takes no arguments")
	}
	if err := checkFileNamePart("-domain", opts.Domain); err != nil {
		return c.usageError(name, err.Error())
	}
	if opts.Days <= 0 {
		return c.usageError(name, fmt.Sprintf("-days must be a positive number of days, got %d", opts.Days))
	}
	if len(additional) > 0 && !opts.NameConstraint {
		return c.usageError(name, "-additional-domain is a name constraint: it needs -name-constraint")
	}
	opts.AdditionalDomains = additional

	pair, err := certgen.CreateCA(opts)
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error creating the CA: %s", err))
		return 1
	}
	base := certgen.CAFileBase(opts.Domain)
	certFile, keyFile := base+".pem", base+"-key.pem"
	if err := writeNewPair(certFile, keyFile, pair); err != nil {
		c.Ui.Error(fmt.Sprintf("Error writing the CA: %s", err))
		return 1
	}
	c.Ui.Output("==> CA Certificate saved to: " + certFile)
	c.Ui.Output("==> CA Certificate key saved to: " + keyFile)
	return 0
}

// checkFileNamePart refuses a flag value that would not stay one part of
// a file name in the current directory.
func checkFileNamePart(flag, v string) error {
	if v == "" {
		return fmt.Errorf("%s must not be empty", flag)
	}
	if strings.ContainsAny(v, `/\`) || v == "." || v == ".." {
		return fmt.Errorf("%s %q must not contain a path separator", flag, v)
	}
	return nil
}
