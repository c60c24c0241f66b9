package agent

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	metrics "github.com/hashicorp/go-metrics"

	"github.com/opennomad/nomad/acl"
	"github.com/opennomad/nomad/structs"
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
	// ForwardTLS gives the TLS of requests forwarded to another agent's
	// HTTPS API (client requests for allocations that run elsewhere);
	// nil when the API is plain HTTP.
	ForwardTLS func() *tls.Config
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

	// routeTable is every registered route with its need.
	routeTable []route
	// remoteACLs resolves tokens on a client-only agent.
	remoteACLs *remoteACLs

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
	if cfg.Server == nil {
		s.remoteACLs = newRemoteACLs(cfg.RPC, cfg.Agent)
	}
	s.routes()
	return s, nil
}

// Handler returns the API handler, with gzip, request logging, the
// per-client request rate of the limits block (http_limits.go) and
// recovery from handler panics (a 500 answer, never a dropped
// connection).
func (s *HTTPServer) Handler() http.Handler {
	return s.logRequests(s.rateLimit(s.recoverPanics(gzipHandler(s.mux))))
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

// routes registers every route with what it needs of the caller's token
// (need, http_acl.go): one declaration per route, applied by the one
// authorization step (authorized) before the handler runs.
func (s *HTTPServer) routes() {
	h := func(path string, n need, fn handlerFunc) { s.handle(path, n, s.wrap(fn)) }

	h("/v1/jobs", viaRPC, s.jobsRequest)
	h("/v1/jobs/parse", nsCapability(acl.NamespaceCapabilityParseJob, acl.NamespaceCapabilitySubmitJob), s.jobsParseRequest)
	h("/v1/job/", viaRPC, s.jobSpecificRequest)
	h("/v1/validate/job", viaRPC, s.validateJobRequest)

	h("/v1/nodes", viaRPC, s.nodesRequest)
	h("/v1/nodes/usage", viaRPC, s.nodesUsageRequest)
	h("/v1/node/", viaRPC, s.nodeSpecificRequest)
	// Longer patterns than /v1/node/, so pools are never read as node IDs.
	h("/v1/node/pools", viaRPC, s.nodePoolsRequest)
	h("/v1/node/pool/", viaRPC, s.nodePoolSpecificRequest)

	h("/v1/evaluations", viaRPC, s.evalsRequest)
	h("/v1/evaluation/", viaRPC, s.evalSpecificRequest)

	h("/v1/deployments", viaRPC, s.deploymentsRequest)
	h("/v1/deployment/", viaRPC, s.deploymentSpecificRequest)

	h("/v1/allocations", viaRPC, s.allocsRequest)
	h("/v1/allocation/", viaRPC, s.allocSpecificRequest)

	h("/v1/agent/self", agentRead, s.agentSelfRequest)
	h("/v1/agent/members", viaRPC, s.agentMembersRequest)
	h("/v1/agent/servers", readWrite(agentRead, agentWrite), s.agentServersRequest)
	h("/v1/agent/join", agentWrite, s.agentJoinRequest)
	h("/v1/agent/force-leave", agentWrite, s.agentForceLeaveRequest)
	h("/v1/agent/keyring/", agentWrite, s.agentKeyringRequest)
	h("/v1/agent/health", public, s.agentHealthRequest)
	h("/v1/agent/monitor", agentRead, s.agentMonitorRequest)
	h("/v1/agent/schedulers", agentRead, s.agentSchedulersRequest)
	h("/v1/agent/schedulers/config", readWrite(agentRead, agentWrite), s.agentSchedulerConfigRequest)
	h("/v1/agent/schedulers/pause", agentWrite, s.agentSchedulersPauseRequest)

	h("/v1/status/leader", public, s.statusLeaderRequest)
	h("/v1/status/peers", public, s.statusPeersRequest)
	h("/v1/regions", public, s.regionsRequest)

	h("/v1/operator/scheduler/configuration", viaRPC, s.operatorSchedulerConfigRequest)
	h("/v1/operator/raft/configuration", viaRPC, s.operatorRaftConfigRequest)
	h("/v1/operator/raft/peer", viaRPC, s.operatorRaftPeerRequest)
	h("/v1/operator/raft/transfer-leadership", viaRPC, s.operatorTransferLeadershipRequest)
	h("/v1/operator/autopilot/configuration", viaRPC, s.operatorAutopilotConfigRequest)
	h("/v1/operator/autopilot/health", viaRPC, s.operatorServerHealthRequest)
	// The snapshot streams bypass the RPC registry; the servers check
	// the token again (nomad.Server.SnapshotSave, SnapshotRestore).
	h("/v1/operator/snapshot", readWrite(operatorCapability(acl.OperatorCapabilitySnapshotSave), management), s.operatorSnapshotRequest)
	h("/v1/operator/keyring/keys", viaRPC, s.operatorKeyringKeysRequest)
	h("/v1/operator/keyring/rotate", viaRPC, s.operatorKeyringRotateRequest)
	h("/v1/operator/keyring/key/", viaRPC, s.operatorKeyringKeyRequest)
	h("/.well-known/jwks.json", public, s.jwksRequest)
	h("/.well-known/openid-configuration", public, s.openIDConfigurationRequest)

	s.aclRoutes(h)

	h("/v1/namespaces", viaRPC, s.namespacesRequest)
	h("/v1/namespace", viaRPC, s.namespaceCreateRequest)
	h("/v1/namespace/", viaRPC, s.namespaceSpecificRequest)

	h("/v1/volumes", viaRPC, s.volumesRequest)
	h("/v1/volumes/claims", notServed, s.volumeClaimsRequest)
	h("/v1/volumes/claim/", notServed, s.volumeClaimsRequest)
	h("/v1/volume/", viaRPC, s.volumeSpecificRequest)

	h("/v1/services", viaRPC, s.servicesRequest)
	h("/v1/service/", viaRPC, s.serviceSpecificRequest)

	h("/v1/vars", viaRPC, s.variablesListRequest)
	h("/v1/var/", viaRPC, s.variableSpecificRequest)

	// Answered by the agent running the allocation or node; any other
	// agent forwards them there (client_forward.go).
	h("/v1/client/fs/", fsNeed, s.forwardClient(s.fsRequest))
	h("/v1/client/allocation/", clientAllocNeed, checkClientAllocPath(s.forwardClient(s.clientAllocRequest)))
	h("/v1/client/stats", nodeReadNeed, s.forwardClient(s.clientStatsRequest))
	h("/v1/client/metadata", nodeMetaNeed, s.forwardClient(s.clientMetadataRequest))
	h("/v1/client/identity", nodeReadNeed, s.forwardClient(s.clientIdentityRequest))
	h("/v1/client/identity/renew", nodeWriteNeed, s.forwardClient(s.clientIdentityRenewRequest))

	h("/v1/scaling/policies", viaRPC, s.scalingPoliciesRequest)
	h("/v1/scaling/policy/", viaRPC, s.scalingPolicyRequest)

	h("/v1/search", viaRPC, s.searchRequest)
	h("/v1/search/fuzzy", viaRPC, s.fuzzySearchRequest)

	h("/v1/system/gc", viaRPC, s.systemGCRequest)
	h("/v1/system/reconcile/summaries", viaRPC, s.systemReconcileSummariesRequest)
	h("/v1/metrics", public, s.metricsRequest)
	s.handle("/v1/event/stream", eventStreamNeed, http.HandlerFunc(s.eventStream))

	// With ACLs on, a token with agent write may profile the agent;
	// with ACLs off only an agent started with enable_debug serves them.
	h("/v1/agent/debug/clock", debugClockNeed, s.agentDebugClockRequest)
	s.handle("/v1/agent/pprof/", pprofNeed, http.HandlerFunc(s.pprofRequest))
	s.handle("/v1/agent/pprof/cmdline", pprofNeed, http.HandlerFunc(s.pprofRequest))
	s.handle("/v1/agent/pprof/profile", pprofNeed, http.HandlerFunc(s.pprofRequest))
	s.handle("/v1/agent/pprof/symbol", pprofNeed, http.HandlerFunc(s.pprofRequest))
	s.handle("/v1/agent/pprof/trace", pprofNeed, http.HandlerFunc(s.pprofRequest))

	// Nomad's routes this server does not serve: 501, not 404
	// (unsupported_endpoint.go). Registered last: they yield to any
	// route above.
	s.unsupportedRoutesOn(h)

	// The web UI, and / sending browsers to it (API clients keep the
	// redirect to /v1/agent/self).
	s.handle(ui.Prefix, public, ui.Handler())
	s.handle("/ui", public, http.RedirectHandler(ui.Prefix, http.StatusMovedPermanently))

	s.handle("/", public, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" {
			target := "/v1/agent/self"
			if ui.WantsHTML(r) {
				target = ui.Prefix
			}
			http.Redirect(w, r, target, http.StatusTemporaryRedirect)
			return
		}
		writeError(w, http.StatusNotFound, "Invalid URL path")
	}))
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
			if wait, ok := structs.RetryAfterOf(err); ok && code == http.StatusTooManyRequests {
				setRetryAfter(w, wait)
			}
			writeError(w, code, msg)
			return
		}
		if obj == nil {
			return
		}
		buf := getJSONBuffer()
		defer putJSONBuffer(buf)
		if err := encodeJSONTo(buf, obj, isPretty(r)); err != nil {
			s.logger.Error("encoding response", "path", r.URL.Path, "error", err)
			writeError(w, http.StatusInternalServerError, fmt.Sprintf("failed to encode response: %v", err))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		// Write does not keep buf's bytes (io.Writer's contract), so the
		// buffer goes back to the pool when the handler returns.
		w.Write(buf.Bytes())
	}
}

// encodeJSON renders obj as Nomad does: HTML characters as is, a newline
// at the end, indented when pretty.
func encodeJSON(obj interface{}, pretty bool) ([]byte, error) {
	var buf bytes.Buffer
	if err := encodeJSONTo(&buf, obj, pretty); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// encodeJSONTo appends encodeJSON's rendering of obj to buf.
func encodeJSONTo(buf *bytes.Buffer, obj interface{}, pretty bool) error {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if pretty {
		enc.SetIndent("", "    ")
	}
	return enc.Encode(obj)
}

// isPretty reports ?pretty, ?pretty=true or ?pretty=1.
func isPretty(r *http.Request) bool {
	if r.URL.RawQuery == "" {
		return false
	}
	v, ok := r.URL.Query()["pretty"]
	if !ok {
		return false
	}
	return len(v) == 0 || v[0] == "" || v[0] == "true" || v[0] == "1"
}

// setRetryAfter tells a refused caller how long to wait, in whole
// seconds rounded up (Retry-After has no finer unit), at least one.
func setRetryAfter(w http.ResponseWriter, wait time.Duration) {
	secs := max(int64((wait+time.Second-1)/time.Second), 1)
	w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
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
