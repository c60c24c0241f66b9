package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	metrics "github.com/hashicorp/go-metrics"

	"github.com/opennomad/nomad/ui"
)

// DefaultEventHeartbeat is how often an idle event stream sends "{}".
const DefaultEventHeartbeat = 30 * time.Second

// HTTPServerConfig configures an HTTPServer.
type HTTPServerConfig struct {
	// Agent is the agent's configuration: its region and datacenter are
	// the defaults of requests, and /v1/agent/self shows it.
	Agent *Config
	// RPC reaches the servers. Required.
	RPC RPCer
	// Server is the in-process server, nil on a client-only agent.
	Server LocalServer
	// Client is the agent's client, which answers /v1/client/*; nil on
	// agents without a client.
	Client ClientAPI
	// ClientServers lists the servers a client agent uses, for
	// /v1/agent/servers; nil on agents without a client.
	ClientServers func() []string
	// Metrics is the in-memory sink behind /v1/metrics; nil disables the
	// endpoint.
	Metrics *metrics.InmemSink
	// Prometheus serves /v1/metrics?format=prometheus; nil answers 415.
	Prometheus http.Handler
	// EventHeartbeat is how often an idle event stream sends "{}";
	// zero means DefaultEventHeartbeat.
	EventHeartbeat time.Duration
	Logger         hclog.Logger
}

// HTTPServer serves the v1 HTTP API.
type HTTPServer struct {
	cfg    HTTPServerConfig
	agent  *Config
	rpc    RPCer
	logger hclog.Logger
	mux    *http.ServeMux

	listener net.Listener
	srv      *http.Server
}

// NewHTTPServer builds the API's handler. Serve it with Start, or mount
// Handler elsewhere (tests use httptest).
func NewHTTPServer(cfg HTTPServerConfig) (*HTTPServer, error) {
	if cfg.RPC == nil {
		return nil, errors.New("http server: an RPC endpoint is required")
	}
	if cfg.Agent == nil {
		cfg.Agent = DefaultConfig()
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.EventHeartbeat <= 0 {
		cfg.EventHeartbeat = DefaultEventHeartbeat
	}
	s := &HTTPServer{
		cfg:    cfg,
		agent:  cfg.Agent,
		rpc:    cfg.RPC,
		logger: cfg.Logger.Named("http"),
		mux:    http.NewServeMux(),
	}
	s.routes()
	return s, nil
}

// Handler returns the API handler, with gzip, request logging and
// recovery from handler panics (a 500 answer, never a dropped
// connection).
func (s *HTTPServer) Handler() http.Handler {
	return s.logRequests(s.recoverPanics(gzipHandler(s.mux)))
}

// Start serves on ln in the background until Shutdown.
func (s *HTTPServer) Start(ln net.Listener) {
	s.listener = ln
	s.srv = &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          s.logger.StandardLogger(&hclog.StandardLoggerOptions{InferLevels: true}),
	}
	go func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.logger.Error("HTTP server stopped", "error", err)
		}
	}()
}

// Addr returns the listening address, nil before Start.
func (s *HTTPServer) Addr() net.Addr {
	if s.listener == nil {
		return nil
	}
	return s.listener.Addr()
}

// Shutdown stops accepting requests and waits for those in flight until
// ctx ends; long-lived ones (blocking queries, event streams) are then
// cut off.
func (s *HTTPServer) Shutdown(ctx context.Context) error {
	if s.srv == nil {
		return nil
	}
	err := s.srv.Shutdown(ctx)
	if err != nil {
		s.srv.Close()
	}
	return err
}

func (s *HTTPServer) routes() {
	h := func(path string, fn handlerFunc) { s.mux.HandleFunc(path, s.wrap(fn)) }

	h("/v1/jobs", s.jobsRequest)
	h("/v1/jobs/parse", s.jobsParseRequest)
	h("/v1/job/", s.jobSpecificRequest)
	h("/v1/validate/job", s.validateJobRequest)

	h("/v1/nodes", s.nodesRequest)
	h("/v1/node/", s.nodeSpecificRequest)

	h("/v1/evaluations", s.evalsRequest)
	h("/v1/evaluation/", s.evalSpecificRequest)

	h("/v1/deployments", s.deploymentsRequest)
	h("/v1/deployment/", s.deploymentSpecificRequest)

	h("/v1/allocations", s.allocsRequest)
	h("/v1/allocation/", s.allocSpecificRequest)

	h("/v1/agent/self", s.agentSelfRequest)
	h("/v1/agent/members", s.agentMembersRequest)
	h("/v1/agent/servers", s.agentServersRequest)
	h("/v1/agent/join", s.agentJoinRequest)
	h("/v1/agent/force-leave", s.agentForceLeaveRequest)
	h("/v1/agent/health", s.agentHealthRequest)
	h("/v1/agent/schedulers", s.agentSchedulersRequest)
	h("/v1/agent/schedulers/config", s.agentSchedulerConfigRequest)

	h("/v1/status/leader", s.statusLeaderRequest)
	h("/v1/status/peers", s.statusPeersRequest)
	h("/v1/regions", s.regionsRequest)

	h("/v1/operator/scheduler/configuration", s.operatorSchedulerConfigRequest)
	h("/v1/operator/raft/configuration", s.operatorRaftConfigRequest)
	h("/v1/operator/raft/peer", s.operatorRaftPeerRequest)
	h("/v1/operator/snapshot", s.operatorSnapshotRequest)
	h("/v1/operator/keyring/keys", s.operatorKeyringKeysRequest)
	h("/v1/operator/keyring/rotate", s.operatorKeyringRotateRequest)
	h("/v1/operator/keyring/key/", s.operatorKeyringKeyRequest)
	h("/.well-known/jwks.json", s.jwksRequest)
	h("/.well-known/openid-configuration", s.openIDConfigurationRequest)

	s.aclRoutes(h)

	h("/v1/namespaces", s.namespacesRequest)
	h("/v1/namespace", s.namespaceCreateRequest)
	h("/v1/namespace/", s.namespaceSpecificRequest)

	h("/v1/client/fs/", s.fsRequest)
	h("/v1/client/allocation/", s.clientAllocRequest)

	h("/v1/system/gc", s.systemGCRequest)
	h("/v1/metrics", s.metricsRequest)
	s.mux.HandleFunc("/v1/event/stream", s.eventStream)

	if s.agent.EnableDebug {
		s.mux.HandleFunc("/v1/agent/pprof/", pprofProfile)
		s.mux.HandleFunc("/v1/agent/pprof/cmdline", pprof.Cmdline)
		s.mux.HandleFunc("/v1/agent/pprof/profile", pprof.Profile)
		s.mux.HandleFunc("/v1/agent/pprof/symbol", pprof.Symbol)
		s.mux.HandleFunc("/v1/agent/pprof/trace", pprof.Trace)
	}

	// The web UI, and / sending browsers to it (API clients keep the
	// redirect to /v1/agent/self).
	s.mux.Handle(ui.Prefix, ui.Handler())
	s.mux.Handle("/ui", http.RedirectHandler(ui.Prefix, http.StatusMovedPermanently))

	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" {
			target := "/v1/agent/self"
			if ui.WantsHTML(r) {
				target = ui.Prefix
			}
			http.Redirect(w, r, target, http.StatusTemporaryRedirect)
			return
		}
		writeError(w, http.StatusNotFound, "Invalid URL path")
	})
}

// pprofProfile serves the named runtime profiles (heap, goroutine,
// allocs, block, mutex, threadcreate) under /v1/agent/pprof/<name>, and
// their index at /v1/agent/pprof/. pprof.Index alone finds the name only
// under /debug/pprof/ and would answer the index for every name here.
func pprofProfile(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, "/v1/agent/pprof/")
	if name == "" {
		pprof.Index(w, r)
		return
	}
	pprof.Handler(name).ServeHTTP(w, r)
}

// handlerFunc is an API handler: it returns the object to encode as JSON,
// or an error. It returns (nil, nil) when it wrote the response itself or
// has no body.
type handlerFunc func(w http.ResponseWriter, r *http.Request) (interface{}, error)

// wrap turns a handlerFunc into an http.HandlerFunc: errors become their
// status code and plain-text body, results become JSON (indented with
// ?pretty).
func (s *HTTPServer) wrap(fn handlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		obj, err := fn(w, r)
		if err != nil {
			code, msg := errorStatus(err)
			if code >= 500 {
				s.logger.Error("request failed", "method", r.Method, "path", r.URL.Path, "error", msg, "code", code)
			}
			writeError(w, code, msg)
			return
		}
		if obj == nil {
			return
		}
		buf, err := encodeJSON(obj, isPretty(r))
		if err != nil {
			s.logger.Error("encoding response", "path", r.URL.Path, "error", err)
			writeError(w, http.StatusInternalServerError, fmt.Sprintf("failed to encode response: %v", err))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(buf)
	}
}

// encodeJSON renders obj as Nomad does: HTML characters as is, a newline
// at the end, indented when pretty.
func encodeJSON(obj interface{}, pretty bool) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if pretty {
		enc.SetIndent("", "    ")
	}
	if err := enc.Encode(obj); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// isPretty reports ?pretty, ?pretty=true or ?pretty=1.
func isPretty(r *http.Request) bool {
	v, ok := r.URL.Query()["pretty"]
	if !ok {
		return false
	}
	return len(v) == 0 || v[0] == "" || v[0] == "true" || v[0] == "1"
}

func writeError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	fmt.Fprint(w, msg)
}

// logRequests logs each request at debug level, with its duration, and
// records it as a metric.
func (s *HTTPServer) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		next.ServeHTTP(w, r)
		elapsed := time.Since(start)
		s.logger.Debug("request complete", "method", r.Method, "path", r.URL.Path, "duration", elapsed)
		metrics.MeasureSince([]string{"http", r.Method, metricPath(r.URL.Path)}, start)
	})
}

// metricPath keeps the first two segments after /v1 so that per-object
// paths do not create one metric each.
func metricPath(p string) string {
	parts := strings.SplitN(strings.TrimPrefix(p, "/v1/"), "/", 3)
	if len(parts) > 2 {
		parts = parts[:2]
	}
	return strings.Join(parts, "_")
}

// requireMethod returns a 405 "Invalid method" error unless r uses one of
// methods.
func requireMethod(r *http.Request, methods ...string) error {
	for _, m := range methods {
		if r.Method == m {
			return nil
		}
	}
	return errInvalidMethod
}

var errInvalidMethod = &CodedError{Code: http.StatusMethodNotAllowed, Msg: "Invalid method"}
