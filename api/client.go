package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// Environment variables read by DefaultConfig.
const (
	EnvAddress   = "NOMAD_ADDR"
	EnvToken     = "NOMAD_TOKEN"
	EnvRegion    = "NOMAD_REGION"
	EnvNamespace = "NOMAD_NAMESPACE"
)

// DefaultAddress is the agent's HTTP address when NOMAD_ADDR is unset.
const DefaultAddress = "http://127.0.0.1:4646"

// maxErrorBody bounds how much of an error response is kept in the error.
const maxErrorBody = 64 << 10

// Config configures a Client.
type Config struct {
	// Address is the agent's base URL, e.g. "http://127.0.0.1:4646". A bare
	// "host:port" is taken as http.
	Address string
	// Region and Namespace are sent with every request unless the request's
	// options override them. Empty means the agent's defaults.
	Region    string
	Namespace string
	// SecretID is the ACL token sent as X-Nomad-Token.
	SecretID string
	// HTTPClient performs the requests; nil means a client without a
	// global timeout (blocking queries and the event stream are long-lived)
	// configured with TLSConfig. A given client is used as is: TLSConfig
	// is then ignored.
	HTTPClient *http.Client
	// TLSConfig is the HTTPS setup: the CA that signs the agent's
	// certificate, the client certificate to present, the server name.
	TLSConfig *TLSConfig
	// Headers are added to every request.
	Headers http.Header
	// WaitTime is the default bound for blocking queries that set a
	// WaitIndex but no WaitTime.
	WaitTime time.Duration
	// BackoffRetries is how many times a request the agent refused with
	// 429 is sent again after the wait it names, for the requests that
	// are safe to repeat (backoff.go); 0 means DefaultBackoffRetries,
	// negative never.
	BackoffRetries int
}

// DefaultConfig returns a configuration from the environment: NOMAD_ADDR
// (else http://127.0.0.1:4646), NOMAD_TOKEN, NOMAD_REGION,
// NOMAD_NAMESPACE, and the TLS ones: NOMAD_CACERT, NOMAD_CAPATH,
// NOMAD_CLIENT_CERT, NOMAD_CLIENT_KEY, NOMAD_TLS_SERVER_NAME and
// NOMAD_SKIP_VERIFY (a boolean; a value that is not one is ignored, as
// Nomad does).
func DefaultConfig() *Config {
	c := &Config{
		Address:   DefaultAddress,
		SecretID:  os.Getenv(EnvToken),
		Region:    os.Getenv(EnvRegion),
		Namespace: os.Getenv(EnvNamespace),
		TLSConfig: &TLSConfig{
			CACert:        os.Getenv(EnvCACert),
			CAPath:        os.Getenv(EnvCAPath),
			ClientCert:    os.Getenv(EnvClientCert),
			ClientKey:     os.Getenv(EnvClientKey),
			TLSServerName: os.Getenv(EnvTLSServerName),
		},
	}
	if addr := os.Getenv(EnvAddress); addr != "" {
		c.Address = addr
	}
	if v := os.Getenv(EnvSkipVerify); v != "" {
		if skip, err := strconv.ParseBool(v); err == nil {
			c.TLSConfig.Insecure = skip
		}
	}
	return c
}

// Client talks to one agent's HTTP API. It is safe for concurrent use.
type Client struct {
	config  Config
	baseURL *url.URL
	http    *http.Client
}

// NewClient validates the configuration and returns a client. A nil config
// means DefaultConfig().
func NewClient(c *Config) (*Client, error) {
	if c == nil {
		c = DefaultConfig()
	}
	cfg := *c
	if cfg.Address == "" {
		cfg.Address = DefaultAddress
	}
	addr := cfg.Address
	if !strings.Contains(addr, "://") {
		addr = "http://" + addr
	}
	u, err := url.Parse(addr)
	if err != nil {
		return nil, fmt.Errorf("invalid address %q: %w", cfg.Address, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("invalid address %q: scheme must be http or https", cfg.Address)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("invalid address %q: missing host", cfg.Address)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	cfg.TLSConfig = cfg.TLSConfig.Copy()
	hc := cfg.HTTPClient
	switch {
	case hc != nil:
	case cfg.TLSConfig.isZero():
		// Plain clients share http.DefaultTransport and so its pool of
		// connections, however many clients a program makes.
		hc = &http.Client{}
	default:
		hc = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
		if err := ConfigureTLS(hc, cfg.TLSConfig); err != nil {
			return nil, err
		}
	}
	return &Client{config: cfg, baseURL: u, http: hc}, nil
}

// Address returns the agent address the client talks to.
func (c *Client) Address() string { return c.config.Address }

// Config returns a copy of the client's configuration.
func (c *Client) Config() Config { return c.config }

// request is one HTTP call being assembled.
type request struct {
	method string
	path   string
	params url.Values
	header http.Header
	token  string
	body   any
	ctx    context.Context
	// repeatable marks a request that may be sent again after a 429:
	// reads, job registrations and scalings (backoff.go).
	repeatable bool
}

// newRequest starts a request for path, which may carry its own query
// string. The client's region, namespace and token are applied first so
// that per-request options can override them.
func (c *Client) newRequest(method, path string) *request {
	r := &request{
		method: method,
		params: url.Values{},
		header: http.Header{},
		token:  c.config.SecretID,
		ctx:    context.Background(),
	}
	if p, q, ok := strings.Cut(path, "?"); ok {
		r.path = p
		if vals, err := url.ParseQuery(q); err == nil {
			r.params = vals
		}
	} else {
		r.path = path
	}
	setIf(r.params, "region", c.config.Region)
	setIf(r.params, "namespace", c.config.Namespace)
	for k, vs := range c.config.Headers {
		for _, v := range vs {
			r.header.Add(k, v)
		}
	}
	return r
}

// url renders the request's full URL. The path is used as given: callers
// escape IDs with escape() so that a job ID containing "/" stays one
// segment.
func (c *Client) url(r *request) string {
	u := c.baseURL.Scheme + "://" + c.baseURL.Host + c.baseURL.EscapedPath() + r.path
	if q := r.params.Encode(); q != "" {
		u += "?" + q
	}
	return u
}

// do sends the request and returns the response when the status is 2xx.
// Any other status is read and returned as *UnexpectedResponseError. A
// repeatable request refused with 429 is sent again after the wait the
// answer names, up to the configured number of times.
func (c *Client) do(r *request) (*http.Response, time.Duration, error) {
	var encoded []byte
	switch b := r.body.(type) {
	case nil, io.Reader:
	default:
		buf, err := json.Marshal(b)
		if err != nil {
			return nil, 0, fmt.Errorf("encoding request body: %w", err)
		}
		encoded = buf
	}
	_, stream := r.body.(io.Reader)
	retries := 0
	if r.repeatable && !stream {
		retries = c.backoffRetries()
	}
	for attempt := 0; ; attempt++ {
		var body io.Reader
		if stream {
			body = r.body.(io.Reader)
		} else if encoded != nil {
			body = bytes.NewReader(encoded)
		}
		resp, rtt, err := c.send(r, body)
		wait, refused := RetryDelay(err)
		if !refused || attempt >= retries {
			return resp, rtt, err
		}
		if !sleepCtx(r.ctx, wait) {
			return nil, rtt, r.ctx.Err()
		}
	}
}

// send makes one attempt of the request with body.
func (c *Client) send(r *request, body io.Reader) (*http.Response, time.Duration, error) {
	if _, hasWait := r.params["index"]; hasWait && r.params.Get("wait") == "" && c.config.WaitTime > 0 {
		r.params.Set("wait", fmt.Sprintf("%dms", c.config.WaitTime.Milliseconds()))
	}
	target := c.url(r)
	req, err := http.NewRequestWithContext(r.ctx, r.method, target, body)
	if err != nil {
		return nil, 0, err
	}
	req.Header = r.header.Clone()
	if r.token != "" {
		req.Header.Set(HeaderToken, r.token)
	}
	if body != nil && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	start := time.Now()
	resp, err := c.http.Do(req)
	rtt := time.Since(start)
	if err != nil {
		return nil, rtt, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer resp.Body.Close()
		text, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		return nil, rtt, newUnexpectedResponseError(r.method, target, resp.StatusCode, resp.Header, text)
	}
	return resp, rtt, nil
}

// query performs a GET and decodes the JSON answer into out (when non-nil).
func (c *Client) query(path string, out any, q *QueryOptions) (*QueryMeta, error) {
	r := c.newRequest(http.MethodGet, path)
	r.repeatable = true
	q.apply(r)
	resp, rtt, err := c.do(r)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	qm := &QueryMeta{RequestTime: rtt}
	if err := parseQueryMeta(resp.Header, qm); err != nil {
		return nil, err
	}
	if err := decodeBody(resp.Body, out); err != nil {
		return nil, err
	}
	return qm, nil
}

// write performs a PUT/POST/DELETE with an optional JSON body and decodes
// the answer into out (when non-nil).
func (c *Client) write(method, path string, in, out any, q *WriteOptions) (*WriteMeta, error) {
	return c.writeRequest(method, path, in, out, q, false)
}

// repeatableWrite is write for a request that may be sent again after a
// 429 (backoff.go says which).
func (c *Client) repeatableWrite(method, path string, in, out any, q *WriteOptions) (*WriteMeta, error) {
	return c.writeRequest(method, path, in, out, q, true)
}

func (c *Client) writeRequest(method, path string, in, out any, q *WriteOptions, repeatable bool) (*WriteMeta, error) {
	r := c.newRequest(method, path)
	r.repeatable = repeatable
	r.body = in
	q.apply(r)
	resp, rtt, err := c.do(r)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	wm := &WriteMeta{RequestTime: rtt}
	if err := parseWriteMeta(resp.Header, wm); err != nil {
		return nil, err
	}
	if err := decodeBody(resp.Body, out); err != nil {
		return nil, err
	}
	return wm, nil
}

func decodeBody(body io.Reader, out any) error {
	if out == nil {
		_, err := io.Copy(io.Discard, body)
		return err
	}
	if err := json.NewDecoder(body).Decode(out); err != nil {
		return fmt.Errorf("decoding response: %w", err)
	}
	return nil
}

// escape quotes a path segment such as a job ID, which may contain "/".
func escape(segment string) string { return url.PathEscape(segment) }
