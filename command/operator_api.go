package command

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"

	"github.com/opennomad/nomad/api"
)

// OperatorAPICommand sends one request to the HTTP API with the CLI's
// address, TLS and token settings, as a curl that knows the cluster.
type OperatorAPICommand struct {
	Meta
}

// Help implements cli.Command.
func (c *OperatorAPICommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad operator api [options] <path>

  Send an authenticated request to the HTTP API and print the answer's
  body. The address, region, namespace, token and TLS settings are the
  CLI's own (flags or NOMAD_* variables). <path> is an API path such as
  /v1/jobs, or a full URL whose scheme and host replace the address.
  Exits 1 when the answer is an error (4xx or 5xx).

      $ nomad operator api /v1/jobs
      $ nomad operator api -filter 'Status == "running"' /v1/jobs
      $ nomad operator api -X PUT -d @job.json /v1/jobs
      $ nomad operator api -dryrun /v1/nodes

` + generalOptionsUsage() + `

Operator API Options:

  -X <method>
    HTTP method of the request: GET unless a body is given, then POST.

  -H <Header: value>
    A header to add to the request; may be repeated.

  -d <body>
    The request's body; @file reads it from a file and @- from standard
    input. Without -d, a body piped to standard input is sent.

  -filter <expression>
    A filter expression, sent as ?filter=.

  -dryrun
    Print the equivalent curl command instead of sending the request.
    The token is shown as ${NOMAD_TOKEN}.

  -show-token
    With -dryrun, show the token's value instead.

  -verbose
    Print the request line and the answer's status and headers to
    standard error.
`)
}

// Synopsis implements cli.Command.
func (c *OperatorAPICommand) Synopsis() string {
	return "Query the HTTP API with the CLI's address, TLS and token settings"
}

// Run implements cli.Command.
func (c *OperatorAPICommand) Run(args []string) int {
	const name = "operator api"
	var method, data, filter string
	var headers stringSlice
	var dryrun, showToken, verbose bool
	fs := c.flagSet(name, flagsClient)
	fs.StringVar(&method, "X", "", "")
	fs.Var(&headers, "H", "")
	fs.StringVar(&data, "d", "", "")
	fs.StringVar(&filter, "filter", "", "")
	fs.BoolVar(&dryrun, "dryrun", false, "")
	fs.BoolVar(&showToken, "show-token", false, "")
	fs.BoolVar(&verbose, "verbose", false, "")
	if !c.parseArgs(fs, args, "<path>") {
		return 1
	}
	cfg := c.clientConfig()
	target, err := apiRequestURL(cfg, fs.Arg(0), filter)
	if err != nil {
		return c.usageError(name, "Error: "+err.Error())
	}
	body, hasBody, err := c.requestBody(data)
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error reading the request body: %s", err))
		return 1
	}
	if method == "" {
		method = http.MethodGet
		if hasBody {
			method = http.MethodPost
		}
	}
	method = strings.ToUpper(method)
	header := http.Header{}
	for _, h := range headers {
		k, v, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(k) == "" {
			return c.usageError(name, fmt.Sprintf("Error: header %q must be given as \"Name: value\"", h))
		}
		header.Add(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	if cfg.SecretID != "" && header.Get(api.HeaderToken) == "" {
		header.Set(api.HeaderToken, cfg.SecretID)
	}

	if dryrun {
		c.Ui.Output(curlCommand(method, target, header, body, hasBody, cfg.TLSConfig, showToken))
		return 0
	}
	return c.send(method, target, header, body, hasBody, cfg.TLSConfig, verbose)
}

// requestBody is -d's body (@file, @- for stdin), or what is piped to
// standard input without -d.
func (c *OperatorAPICommand) requestBody(data string) ([]byte, bool, error) {
	switch {
	case data == "@-":
		b, err := io.ReadAll(c.stdin())
		return b, true, err
	case strings.HasPrefix(data, "@"):
		b, err := os.ReadFile(data[1:])
		return b, true, err
	case data != "":
		return []byte(data), true, nil
	}
	in := c.stdin()
	if f, ok := in.(*os.File); ok {
		// A terminal is not a body: only read what is piped in.
		if fi, err := f.Stat(); err != nil || fi.Mode()&os.ModeCharDevice != 0 {
			return nil, false, nil
		}
	}
	b, err := io.ReadAll(in)
	return b, len(b) > 0, err
}

// apiRequestURL is the URL of path (an API path or a full URL) with the
// CLI's region and namespace, and -filter, in its query string unless it
// names them itself.
func apiRequestURL(cfg *api.Config, path, filter string) (*url.URL, error) {
	var u *url.URL
	if strings.HasPrefix(path, "http://") || strings.HasPrefix(path, "https://") {
		parsed, err := url.Parse(path)
		if err != nil {
			return nil, fmt.Errorf("invalid URL %q: %w", path, err)
		}
		u = parsed
	} else {
		if !strings.HasPrefix(path, "/") {
			return nil, fmt.Errorf("path %q must start with / (or be a full URL)", path)
		}
		addr := cfg.Address
		if !strings.Contains(addr, "://") {
			addr = "http://" + addr
		}
		base, err := url.Parse(strings.TrimRight(addr, "/"))
		if err != nil {
			return nil, fmt.Errorf("invalid address %q: %w", cfg.Address, err)
		}
		ref, err := url.Parse(path)
		if err != nil {
			return nil, fmt.Errorf("invalid path %q: %w", path, err)
		}
		u = base.JoinPath(ref.Path)
		u.RawQuery = ref.RawQuery
	}
	q := u.Query()
	for k, v := range map[string]string{"region": cfg.Region, "namespace": cfg.Namespace, "filter": filter} {
		if v != "" && !q.Has(k) {
			q.Set(k, v)
		}
	}
	u.RawQuery = q.Encode()
	return u, nil
}

// send makes the request and prints the answer's body: to standard
// output, and to standard error with exit code 1 for an error status.
func (c *OperatorAPICommand) send(method string, target *url.URL, header http.Header, body []byte, hasBody bool, tlsCfg *api.TLSConfig, verbose bool) int {
	hc := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	if err := api.ConfigureTLS(hc, tlsCfg); err != nil {
		c.Ui.Error(fmt.Sprintf("Error configuring TLS: %s", err))
		return 1
	}
	var reader io.Reader
	if hasBody {
		reader = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(c.ctx(), method, target.String(), reader)
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error building the request: %s", err))
		return 1
	}
	req.Header = header
	if verbose {
		c.Ui.Error(fmt.Sprintf("> %s %s", method, target.Redacted()))
	}
	resp, err := hc.Do(req)
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error performing request: %s", c.describe(err)))
		return 1
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error reading the answer: %s", err))
		return 1
	}
	if verbose {
		c.Ui.Error("< " + resp.Proto + " " + resp.Status)
		names := make([]string, 0, len(resp.Header))
		for k := range resp.Header {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			c.Ui.Error(fmt.Sprintf("< %s: %s", k, strings.Join(resp.Header[k], ", ")))
		}
	}
	text := strings.TrimRight(string(out), "\n")
	if resp.StatusCode >= 400 {
		c.Ui.Error(fmt.Sprintf("Error: %s %s answered %s: %s", method, target.Path, resp.Status, text))
		return 1
	}
	if text != "" {
		c.Ui.Output(text)
	}
	return 0
}

// curlCommand is the curl invocation that makes the same request. The
// token is left to the shell (${NOMAD_TOKEN}) unless showToken.
func curlCommand(method string, target *url.URL, header http.Header, body []byte, hasBody bool, tlsCfg *api.TLSConfig, showToken bool) string {
	parts := []string{"curl", "-X " + method}
	names := make([]string, 0, len(header))
	for k := range header {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		for _, v := range header[k] {
			if k == api.HeaderToken && !showToken {
				parts = append(parts, `-H "`+api.HeaderToken+`: ${NOMAD_TOKEN}"`)
				continue
			}
			parts = append(parts, "-H "+shellQuote(k+": "+v))
		}
	}
	if tlsCfg != nil {
		for _, f := range []struct{ flag, value string }{
			{"--cacert", tlsCfg.CACert}, {"--capath", tlsCfg.CAPath}, {"--cert", tlsCfg.ClientCert}, {"--key", tlsCfg.ClientKey},
		} {
			if f.value != "" {
				parts = append(parts, f.flag+" "+shellQuote(f.value))
			}
		}
		if tlsCfg.Insecure {
			parts = append(parts, "--insecure")
		}
	}
	if hasBody {
		parts = append(parts, "--data-binary "+shellQuote(string(body)))
	}
	parts = append(parts, shellQuote(target.String()))
	return strings.Join(parts, " \\\n  ")
}

// shellQuote single-quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
