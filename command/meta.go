package command

import (
	"context"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/cli"

	"github.com/opennomad/nomad/api"
	"github.com/opennomad/nomad/structs"
)

// Meta is what every command shares: where it writes, the clock and
// environment it reads, and the flags common to all commands that talk to
// an agent. Each command gets its own copy, so flag parsing in one never
// leaks into another.
type Meta struct {
	// Ui receives all output: Output and Info go to stdout, Error and Warn
	// to stderr.
	Ui cli.Ui

	// Ctx is cancelled when the user interrupts the command; long waits
	// (monitors, blocking queries) stop when it is done.
	Ctx context.Context

	// Now is the clock of monitor lines and deadlines; nil means time.Now.
	Now func() time.Time

	// Environ returns the process environment, read for NOMAD_VAR_*; nil
	// means os.Environ.
	Environ func() []string

	// Stdin is read when a job file is given as "-"; nil means os.Stdin.
	Stdin io.Reader

	// waitBound bounds each blocking query of a monitor; zero means
	// defaultMonitorWait. Tests shorten it.
	waitBound time.Duration

	// Common flags; empty means "take it from the environment".
	address   string
	region    string
	namespace string
	token     string
	noColor   bool

	// TLS flags; empty (or false) means "take it from the environment".
	caCert        string
	caPath        string
	clientCert    string
	clientKey     string
	tlsServerName string
	tlsSkipVerify bool
}

// flagSetOpts chooses which common flags a command accepts.
type flagSetOpts int

const (
	// flagsNone: the command does not talk to an agent.
	flagsNone flagSetOpts = iota
	// flagsClient: -address, -region, -namespace, -token, -no-color and
	// the TLS flags (-ca-cert, -ca-path, -client-cert, -client-key,
	// -tls-server-name, -tls-skip-verify).
	flagsClient
)

// flagSet returns a flag set for the named command with the common flags
// registered. Parse errors are reported by the caller through the Ui, so
// the flag package itself prints nothing.
func (m *Meta) flagSet(name string, opts flagSetOpts) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if opts == flagsClient {
		fs.StringVar(&m.address, "address", "", "")
		fs.StringVar(&m.region, "region", "", "")
		fs.StringVar(&m.namespace, "namespace", "", "")
		fs.StringVar(&m.token, "token", "", "")
		fs.BoolVar(&m.noColor, "no-color", false, "")
		fs.StringVar(&m.caCert, "ca-cert", "", "")
		fs.StringVar(&m.caPath, "ca-path", "", "")
		fs.StringVar(&m.clientCert, "client-cert", "", "")
		fs.StringVar(&m.clientKey, "client-key", "", "")
		fs.StringVar(&m.tlsServerName, "tls-server-name", "", "")
		fs.BoolVar(&m.tlsSkipVerify, "tls-skip-verify", false, "")
	}
	return fs
}

// parseFlags parses args and reports a bad flag through the Ui. It
// returns false when the command must stop with exit code 1.
func (m *Meta) parseFlags(fs *flag.FlagSet, args []string, name string) bool {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			m.Ui.Error(fmt.Sprintf("For usage, run 'nomad %s -help'", name))
			return false
		}
		m.Ui.Error(fmt.Sprintf("Error parsing flags: %s", err))
		m.Ui.Error(commandErrorText(name))
		return false
	}
	return true
}

// commandErrorText is the hint printed after a usage error.
func commandErrorText(name string) string {
	return fmt.Sprintf("For additional help try 'nomad %s -help'", name)
}

// usageError reports a wrong number or kind of arguments.
func (m *Meta) usageError(name, problem string) int {
	m.Ui.Error(problem)
	m.Ui.Error(commandErrorText(name))
	return 1
}

// clientConfig merges the environment (NOMAD_ADDR, NOMAD_TOKEN,
// NOMAD_REGION, NOMAD_NAMESPACE and the TLS variables read by
// api.DefaultConfig) with the common flags; flags win.
func (m *Meta) clientConfig() *api.Config {
	c := api.DefaultConfig()
	if m.address != "" {
		c.Address = m.address
	}
	if m.region != "" {
		c.Region = m.region
	}
	if m.namespace != "" {
		c.Namespace = m.namespace
	}
	if m.token != "" {
		c.SecretID = m.token
	}
	m.applyTLSFlags(c.TLSConfig)
	return c
}

// applyTLSFlags lays the TLS flags over the environment's settings. A
// CA file given by flag replaces a CA directory from the environment and
// the other way round, since the api client takes the first one set.
func (m *Meta) applyTLSFlags(t *api.TLSConfig) {
	switch {
	case m.caCert != "":
		t.CACert, t.CAPath = m.caCert, ""
	case m.caPath != "":
		t.CACert, t.CAPath = "", m.caPath
	}
	if m.clientCert != "" {
		t.ClientCert = m.clientCert
	}
	if m.clientKey != "" {
		t.ClientKey = m.clientKey
	}
	if m.tlsServerName != "" {
		t.TLSServerName = m.tlsServerName
	}
	// Only "skip" can be said by flag: verifying is the default.
	if m.tlsSkipVerify {
		t.Insecure = true
	}
}

// Client returns an API client for the agent the flags and environment
// name.
func (m *Meta) Client() (*api.Client, error) {
	return api.NewClient(m.clientConfig())
}

// clientOrError builds the client and reports a failure through the Ui.
func (m *Meta) clientOrError() (*api.Client, bool) {
	c, err := m.Client()
	if err != nil {
		m.Ui.Error(fmt.Sprintf("Error initializing client: %s", err))
		return nil, false
	}
	return c, true
}

// namespaceOrDefault is the namespace requests go to, for display.
func (m *Meta) namespaceOrDefault() string {
	if ns := m.clientConfig().Namespace; ns != "" {
		return ns
	}
	return api.DefaultNamespace
}

// allNamespaces reports whether the user asked to list every namespace.
func (m *Meta) allNamespaces() bool {
	return m.clientConfig().Namespace == api.AllNamespaces
}

func (m *Meta) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

// monitorWait is the bound of one blocking query of a monitor.
func (m *Meta) monitorWait() time.Duration {
	if m.waitBound > 0 {
		return m.waitBound
	}
	return defaultMonitorWait
}

func (m *Meta) ctx() context.Context {
	if m.Ctx != nil {
		return m.Ctx
	}
	return context.Background()
}

func (m *Meta) environ() []string {
	if m.Environ != nil {
		return m.Environ()
	}
	return os.Environ()
}

// stdin is the command's standard input: Stdin when set, else os.Stdin.
func (m *Meta) stdin() io.Reader {
	if m.Stdin != nil {
		return m.Stdin
	}
	return os.Stdin
}

// query returns read options bound to the command's context.
func (m *Meta) query() *api.QueryOptions {
	return (&api.QueryOptions{}).WithContext(m.ctx())
}

// write returns write options bound to the command's context.
func (m *Meta) write() *api.WriteOptions {
	return (&api.WriteOptions{}).WithContext(m.ctx())
}

// describe explains an API error for a person: an unreachable agent is
// named with the address and how to point the CLI elsewhere, instead of a
// bare "connection refused".
func (m *Meta) describe(err error) string {
	var uerr *url.Error
	var operr *net.OpError
	switch {
	case errors.Is(err, context.Canceled):
		return "interrupted"
	case errors.Is(err, syscall.ECONNREFUSED), errors.As(err, &operr) && operr.Op == "dial":
		return fmt.Sprintf("cannot reach the agent at %s (is it running? set -address or %s): %v",
			m.clientConfig().Address, api.EnvAddress, rootCause(err))
	case errors.As(err, &uerr):
		return fmt.Sprintf("request to %s failed: %v%s", m.clientConfig().Address, uerr.Err, tlsHint(err))
	}
	return err.Error()
}

// tlsHint says which setting fixes a failed check of the agent's
// certificate, or "" for any other error.
func tlsHint(err error) string {
	var unknownCA x509.UnknownAuthorityError
	var hostname x509.HostnameError
	switch {
	case errors.As(err, &unknownCA):
		return fmt.Sprintf(" (give the CA that signs the agent's certificate with -ca-cert or %s)", api.EnvCACert)
	case errors.As(err, &hostname):
		return fmt.Sprintf(" (the name checked is the address's host, or -tls-server-name / %s)", api.EnvTLSServerName)
	}
	return ""
}

// agentErrorKind is the structs error kind of an error the agent
// answered with (nil when it names none): the answer's text is read by
// structs.RecoverError, the one reader of error text.
func agentErrorKind(err error) error {
	var resp *api.UnexpectedResponseError
	if errors.As(err, &resp) {
		kind, _, _ := structs.RecoverError(resp.Body)
		return kind
	}
	return structs.KindOf(err)
}

// rootCause unwraps to the innermost error, whose text is the useful part
// of a dial failure.
func rootCause(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}

// generalOptionsUsage documents the common flags in every help text.
func generalOptionsUsage() string {
	return strings.TrimSpace(`
General Options:

  -address=<addr>
    The address of the agent's HTTP API.
    Overrides the NOMAD_ADDR environment variable if set.
    Default = http://127.0.0.1:4646

  -region=<region>
    The region of the servers to forward commands to.
    Overrides the NOMAD_REGION environment variable if set.
    Defaults to the agent's local region.

  -namespace=<namespace>
    The target namespace for queries and actions bound to a namespace.
    Overrides the NOMAD_NAMESPACE environment variable if set.
    If set to '*', job and alloc listings cover every namespace.
    Default = default

  -token=<secret-id>
    The ACL token's secret ID to send with every request.
    Overrides the NOMAD_TOKEN environment variable if set.

  -no-color
    Accepted for compatibility; output is never colored.

  -ca-cert=<path>
    Path to a PEM file of the CA certificate that signs the agent's HTTPS
    certificate. Overrides the NOMAD_CACERT environment variable if set.

  -ca-path=<path>
    Path to a directory of PEM CA certificate files, used instead of
    -ca-cert. Overrides the NOMAD_CAPATH environment variable if set.

  -client-cert=<path>
    Path to a PEM client certificate to present to the agent (needed when
    the agent sets verify_https_client); requires -client-key.
    Overrides the NOMAD_CLIENT_CERT environment variable if set.

  -client-key=<path>
    Path to the PEM private key of -client-cert.
    Overrides the NOMAD_CLIENT_KEY environment variable if set.

  -tls-server-name=<name>
    The name the agent's certificate must prove instead of the address's
    host, e.g. server.global.nomad when the address is an IP.
    Overrides the NOMAD_TLS_SERVER_NAME environment variable if set.

  -tls-skip-verify
    Do not verify the agent's certificate. Anyone between the CLI and the
    agent can then read the token; use it only for testing. Also set by
    NOMAD_SKIP_VERIFY=true.
`)
}
