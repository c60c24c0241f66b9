// Package agent is the long-running `nomad agent` process: its HCL
// configuration, the server and/or client it runs, and the HTTP API in
// front of them, which speaks Nomad's v1 API.
package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/opennomad/nomad/client"
	"github.com/opennomad/nomad/nomad/rpcnet"
	"github.com/opennomad/nomad/nomad/stream"
	"github.com/opennomad/nomad/tlsconf"
)

// httpShutdownGrace is how long in-flight requests get to finish when the
// agent stops; blocking queries and event streams are cut after it.
const httpShutdownGrace = 5 * time.Second

// serverBackend is the in-process server as the agent uses it: the RPC
// endpoint of the HTTP API and the local reads of the agent endpoints.
type serverBackend interface {
	RPCer
	LocalServer
	// Leave announces that the server leaves its region for good; the
	// agent calls it before Shutdown on a graceful leave only.
	Leave() error
	Shutdown() error
}

// Agent is one running agent: a server, a client or both, and the HTTP
// API. Create it with NewAgent; stop it with Shutdown.
type Agent struct {
	// config is the configuration the agent started with; it is never
	// written afterwards, as the HTTP API reads it concurrently. What a
	// reload changes lives beside it, under reloadMu.
	config *Config
	// reloadMu serializes Reload; logLevel is the level in force.
	reloadMu sync.Mutex
	logLevel string
	logger   hclog.InterceptLogger

	telemetry *telemetry
	// tls is the loaded tls block; nil when it turns TLS on nowhere.
	tls    *tlsconf.TLS
	broker *stream.EventBroker
	server serverBackend
	client *client.Client
	http   *HTTPServer

	// clientTmpDir is a dev client's data directory, removed at shutdown.
	clientTmpDir string
	// clientPool carries a client-only agent's calls to its servers.
	clientPool *rpcnet.Pool
	// fatal receives an error the agent cannot run on with.
	fatal chan error

	shutdownOnce sync.Once
	shutdownErr  error
}

// NewAgent starts an agent for a validated configuration: metrics, the
// server when enabled, the client when enabled, then the HTTP API on its
// listener. Logs go to
// logOutput at the configured level. On error everything started so far
// is stopped again.
func NewAgent(cfg *Config, logOutput io.Writer) (*Agent, error) {
	return newAgent(cfg, logOutput, (*Agent).startServer)
}

// newAgent is NewAgent with the server construction as a parameter.
func newAgent(cfg *Config, logOutput io.Writer, startServer func(*Agent) (serverBackend, error)) (*Agent, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	a := &Agent{config: cfg, logLevel: cfg.LogLevel, logger: newLogger(cfg, logOutput), fatal: make(chan error, 1)}
	ok := false
	defer func() {
		if !ok {
			a.Shutdown()
		}
	}()

	var err error
	if a.telemetry, err = setupTelemetry(cfg); err != nil {
		return nil, err
	}
	if err := a.setupTLS(); err != nil {
		return nil, err
	}
	if cfg.Server.Enabled {
		if cfg.Server.EnableEventBroker {
			a.broker = stream.NewEventBroker(stream.Config{EventBufferSize: cfg.Server.EventBufferSize})
		}
		if a.server, err = startServer(a); err != nil {
			return nil, fmt.Errorf("starting server: %w", err)
		}
	}
	if cfg.Client.Enabled {
		if err := a.startClient(); err != nil {
			return nil, fmt.Errorf("starting client: %w", err)
		}
	}
	if err := a.startHTTP(); err != nil {
		return nil, err
	}
	ok = true
	return a, nil
}

func newLogger(cfg *Config, out io.Writer) hclog.InterceptLogger {
	if out == nil {
		out = os.Stdout
	}
	return hclog.NewInterceptLogger(&hclog.LoggerOptions{
		Name:            "agent",
		Level:           hclog.LevelFromString(cfg.LogLevel),
		Output:          out,
		JSONFormat:      cfg.LogJSON,
		IncludeLocation: false,
	})
}

// httpAddr is where the API listens: addresses.http, else bind_addr,
// on ports.http (0 picks a free port).
func (c *Config) httpAddr() string {
	host := c.Addresses.HTTP
	if host == "" {
		host = c.BindAddr
	}
	return net.JoinHostPort(host, strconv.Itoa(c.Ports.HTTP))
}

func (a *Agent) startHTTP() error {
	cfg := HTTPServerConfig{
		Agent:      a.config,
		Metrics:    a.telemetry.inmem,
		Prometheus: a.telemetry.prometheus,
		Logger:     a.logger,
	}
	if a.tls != nil && a.config.TLS.HTTP {
		cfg.ForwardTLS = a.tls.HTTPClientConfig
	}
	if a.server != nil {
		cfg.RPC = a.server
		cfg.Server = a.server
	}
	if a.client != nil {
		cfg.Client = a.client
		cfg.ClientServers = a.client.Servers
		if a.server == nil {
			// A client-only agent answers the API through its servers.
			cfg.RPC = a.client
		}
	}
	srv, err := NewHTTPServer(cfg)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", a.config.httpAddr())
	if err != nil {
		return fmt.Errorf("starting HTTP API: %w", err)
	}
	srv.Start(a.httpListener(ln))
	a.http = srv
	a.logger.Info("HTTP API listening", "address", ln.Addr().String(), "tls", a.config.TLS.HTTP)
	return nil
}

// HTTPAddr returns the API's listening address ("127.0.0.1:4646").
func (a *Agent) HTTPAddr() string {
	if a.http == nil || a.http.Addr() == nil {
		return ""
	}
	return a.http.Addr().String()
}

// RPC calls the agent's in-process server, as the HTTP handlers do; an
// error when the agent runs no server. Tests use it to act as a client
// would (registering nodes, reporting allocs).
func (a *Agent) RPC(method string, args, reply interface{}) error {
	if a.server == nil {
		return errors.New("this agent runs no server")
	}
	return a.server.RPC(method, args, reply)
}

// Config returns the configuration the agent runs with.
func (a *Agent) Config() *Config { return a.config }

// Logger returns the agent's logger.
func (a *Agent) Logger() hclog.Logger { return a.logger }

// Reload applies what can change without a restart from a new, validated
// configuration: the log level and the TLS certificates and settings
// (whose files are re-read even when their paths did not change). Every
// other difference is logged as needing a restart; the running
// configuration keeps its old values.
func (a *Agent) Reload(newCfg *Config) error {
	a.reloadMu.Lock()
	defer a.reloadMu.Unlock()
	if err := newCfg.Validate(); err != nil {
		return err
	}
	if err := a.reloadTLS(newCfg.TLS); err != nil {
		return err
	}
	if newCfg.LogLevel != a.logLevel {
		a.logger.SetLevel(hclog.LevelFromString(newCfg.LogLevel))
		a.logger.Info("log level changed", "from", a.logLevel, "to", newCfg.LogLevel)
		a.logLevel = newCfg.LogLevel
	}
	for _, key := range restartOnlyChanges(a.config, newCfg) {
		a.logger.Warn("configuration change needs a restart to take effect", "key", key)
	}
	return nil
}

// Leave makes a server leave its region for good before a graceful
// shutdown (leave_on_interrupt / leave_on_terminate); a client-only agent
// has nothing to leave: the servers mark its node down when its heartbeat
// stops.
func (a *Agent) Leave() error {
	if a.server == nil {
		return nil
	}
	return a.server.Leave()
}

// Shutdown stops the agent: the event streams end, the HTTP API drains
// (for up to httpShutdownGrace), the client lets go of its tasks (a dev
// agent's client stops them), then the server stops. It is safe to
// call more than once and returns the first shutdown's error.
func (a *Agent) Shutdown() error {
	a.shutdownOnce.Do(func() {
		a.logger.Info("shutting down agent")
		var errs []error
		if a.broker != nil {
			a.broker.Close()
		}
		if a.http != nil {
			ctx, cancel := context.WithTimeout(context.Background(), httpShutdownGrace)
			if err := a.http.Shutdown(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
				errs = append(errs, fmt.Errorf("stopping HTTP API: %w", err))
			}
			cancel()
		}
		if err := a.stopClient(); err != nil {
			errs = append(errs, fmt.Errorf("stopping client: %w", err))
		}
		if a.server != nil {
			if err := a.server.Shutdown(); err != nil {
				errs = append(errs, fmt.Errorf("stopping server: %w", err))
			}
		}
		a.shutdownErr = errors.Join(errs...)
		a.logger.Info("agent stopped")
	})
	return a.shutdownErr
}
