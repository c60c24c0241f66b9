package command

import (
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/opennomad/nomad/tlsconf/certgen"
)

// TLSCertCreateCommand creates a server, client or CLI certificate signed
// by the CA of `nomad tls ca create`.
type TLSCertCreateCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *TLSCertCreateCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad tls cert create [options]

  Create a certificate for a server, a client or the CLI, signed by the CA
  in the current directory, and write it to <region>-<role>-<domain>.pem
  with its key in <region>-<role>-<domain>-key.pem. Existing files are never
  overwritten; agents' configurations are not changed.

  The certificate's common name is <role>.<region>.<domain> (for example
  server.global.nomad, the name servers prove to each other); its subject
  alternative names are that name, localhost and, for servers and clients,
  127.0.0.1. It serves both to accept and to make connections.

      $ nomad tls cert create -server
      $ nomad tls cert create -client -region eu
      $ nomad tls cert create -cli

Cert Create Options:

  -server, -client, -cli
    The certificate's role; exactly one is required. A server certificate
    gives full control of the cluster: keep it on servers only.

  -region=<region>
    The region of the agents that use the certificate. Default = global

  -domain=<domain>
    The cluster's DNS domain. Default = nomad

  -days=<n>
    How many days the certificate is valid from now. Default = 365

  -ca=<path>
    The CA certificate to sign with. Default = <domain>-agent-ca.pem

  -key=<path>
    The CA's private key. Default = <domain>-agent-ca-key.pem

  -additional-dnsname=<name>
    Another DNS name the certificate is valid for. May be given more than
    once.

  -additional-ipaddress=<ip>
    Another IP address the certificate is valid for. May be given more than
    once.
`)
}

// Synopsis implements cli.Command.
func (c *TLSCertCreateCommand) Synopsis() string { return "Create a server, client or CLI certificate" }

// roleLabels name each role in the command's output.
var roleLabels = map[certgen.Role]string{
	certgen.RoleServer: "Server",
	certgen.RoleClient: "Client",
	certgen.RoleCLI:    "CLI",
}

// Run implements cli.Command.
func (c *TLSCertCreateCommand) Run(args []string) int {
	const name = "tls cert create"
	var (
		server, client, cliRole bool
		opts                    certgen.CertOptions
		caFile, keyFile         string
		dnsNames, ips           stringSlice
	)
	flags := c.flagSet(name, flagsNone)
	flags.BoolVar(&server, "server", false, "")
	flags.BoolVar(&client, "client", false, "")
	flags.BoolVar(&cliRole, "cli", false, "")
	flags.StringVar(&opts.Region, "region", certgen.DefaultRegion, "")
	flags.StringVar(&opts.Domain, "domain", certgen.DefaultDomain, "")
	flags.IntVar(&opts.Days, "days", certgen.DefaultCertDays, "")
	flags.StringVar(&caFile, "ca", "", "")
	flags.StringVar(&keyFile, "key", "", "")
	flags.Var(&dnsNames, "additional-dnsname", "")
	flags.Var(&ips, "additional-ipaddress", "")
	if !c.parseFlags(flags, args, name) {
		return 1
	}
	if flags.NArg() != 0 {
		return c.usageError(name, "This command takes no arguments")
	}

	roles := 0
	for role, set := range map[certgen.Role]bool{certgen.RoleServer: server, certgen.RoleClient: client, certgen.RoleCLI: cliRole} {
		if set {
			roles++
			opts.Role = role
		}
	}
	if roles != 1 {
		return c.usageError(name, "Please provide either -server, -client, or -cli")
	}
	for flag, v := range map[string]string{"-region": opts.Region, "-domain": opts.Domain} {
		if err := checkFileNamePart(flag, v); err != nil {
			return c.usageError(name, err.Error())
		}
	}
	if opts.Days <= 0 {
		return c.usageError(name, fmt.Sprintf("-days must be a positive number of days, got %d", opts.Days))
	}
	opts.DNSNames = dnsNames
	for _, s := range ips {
		ip := net.ParseIP(s)
		if ip == nil {
			return c.usageError(name, fmt.Sprintf("-additional-ipaddress %q is not an IP address", s))
		}
		opts.IPAddresses = append(opts.IPAddresses, ip)
	}

	caBase := certgen.CAFileBase(opts.Domain)
	if caFile == "" {
		caFile = caBase + ".pem"
	}
	if keyFile == "" {
		keyFile = caBase + "-key.pem"
	}
	var err error
	if opts.CA.Cert, err = os.ReadFile(caFile); err != nil {
		c.Ui.Error(fmt.Sprintf("Error reading the CA certificate: %s (create a CA with 'nomad tls ca create', or name it with -ca)", err))
		return 1
	}
	if opts.CA.Key, err = os.ReadFile(keyFile); err != nil {
		c.Ui.Error(fmt.Sprintf("Error reading the CA key: %s (name it with -key)", err))
		return 1
	}

	pair, err := certgen.CreateCert(opts)
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error creating the certificate: %s", err))
		return 1
	}
	base := certgen.FileBase(opts.Role, opts.Region, opts.Domain)
	certOut, keyOut := base+".pem", base+"-key.pem"
	if err := writeNewPair(certOut, keyOut, pair); err != nil {
		c.Ui.Error(fmt.Sprintf("Error writing the certificate: %s", err))
		return 1
	}
	if opts.Role == certgen.RoleServer {
		c.Ui.Warn(strings.TrimSpace(`
==> WARNING: A server certificate lets its holder act as a server: join
    Raft and read the whole cluster state, root keys and ACL tokens
    included. Put it on server hosts only and guard it like the CA key.`))
	}
	label := roleLabels[opts.Role]
	c.Ui.Output(fmt.Sprintf("==> Using CA file %s and CA key %s", caFile, keyFile))
	c.Ui.Output(fmt.Sprintf("==> %s Certificate saved to %s", label, certOut))
	c.Ui.Output(fmt.Sprintf("==> %s Certificate key saved to %s", label, keyOut))
	return 0
}
