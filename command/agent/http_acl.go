package agent

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/opennomad/nomad/acl"
	"github.com/opennomad/nomad/client/driver"
	"github.com/opennomad/nomad/structs"
)

// need is what a route asks of the caller's token. Every route declares
// one where it is registered (routes); the one authorization step of the
// HTTP API (authorized) applies it before the handler runs.
//
// A route whose every answer comes from RPCs declares viaRPC: the servers
// check each RPC against the method's rule, with the token the handler
// passes on, so the agent does not check it twice. Routes the agent
// answers itself declare a check, run against the caller's resolved
// token.
type need struct {
	// Doc is the need as the API documentation states it.
	Doc string
	// Public routes need no token at all.
	Public bool
	// check is nil when the agent checks nothing itself (Public, or
	// viaRPC); otherwise it returns nil to serve the request, or the
	// error to answer with.
	check func(s *HTTPServer, a *acl.ACL, r *http.Request) error
}

var (
	// public routes answer anyone.
	public = need{Doc: "none", Public: true}
	// viaRPC routes are answered by RPCs that the servers authorize.
	viaRPC = need{Doc: "checked by the servers on each call the route makes (see above)"}
	// notServed routes answer 501 to anyone.
	notServed = need{Doc: "none (not supported: 501)", Public: true}

	agentRead     = allowIf("agent read", func(a *acl.ACL, _ *http.Request) bool { return a.AllowAgentRead() })
	agentWrite    = allowIf("agent write", func(a *acl.ACL, _ *http.Request) bool { return a.AllowAgentWrite() })
	management    = allowIf("management", func(a *acl.ACL, _ *http.Request) bool { return a.IsManagement() })
	nodeReadNeed  = allowIf("node read", func(a *acl.ACL, _ *http.Request) bool { return a.AllowNodeRead() })
	nodeWriteNeed = allowIf("node write", func(a *acl.ACL, _ *http.Request) bool { return a.AllowNodeWrite() })
)

// errPermissionDenied is the refusal of a token that lacks what a route
// needs; it says nothing about why.
var errPermissionDenied = &CodedError{Code: http.StatusForbidden, Msg: "Permission denied"}

// errTokenNotFound answers a secret that no token has, on the routes the
// agent answers itself (as Nomad's client agents do).
var errTokenNotFound = &CodedError{Code: http.StatusForbidden, Msg: "ACL token not found"}

// allowIf is a need met when allow says so.
func allowIf(doc string, allow func(a *acl.ACL, r *http.Request) bool) need {
	return need{Doc: doc, check: func(_ *HTTPServer, a *acl.ACL, r *http.Request) error {
		if !allow(a, r) {
			return errPermissionDenied
		}
		return nil
	}}
}

// nsCapability needs any of caps in the request's namespace.
func nsCapability(caps ...string) need {
	return allowIf(strings.Join(caps, " or ")+" in the request's namespace", func(a *acl.ACL, r *http.Request) bool {
		return a.AllowNsOpAny(namespace(r), caps...)
	})
}

// operatorCapability needs an operator capability.
func operatorCapability(capability string) need {
	return allowIf("operator "+capability, func(a *acl.ACL, _ *http.Request) bool {
		return a.AllowOperatorCapability(capability)
	})
}

// readWrite needs read for GET (and HEAD), write for any other method.
func readWrite(read, write need) need {
	return need{Doc: "GET: " + read.Doc + "; other methods: " + write.Doc,
		check: func(s *HTTPServer, a *acl.ACL, r *http.Request) error {
			if r.Method == http.MethodGet || r.Method == http.MethodHead {
				return read.check(s, a, r)
			}
			return write.check(s, a, r)
		}}
}

// pprofNeed: agent write; with ACLs off the profiles are served only with
// enable_debug (a 404 otherwise, as if not there).
var pprofNeed = need{Doc: "agent write (with ACLs off: only with enable_debug)",
	check: func(s *HTTPServer, a *acl.ACL, r *http.Request) error {
		if a == acl.ACLsDisabled && !s.agent.EnableDebug {
			return codedError(http.StatusNotFound, "Invalid URL path")
		}
		return agentWrite.check(s, a, r)
	}}

// allocCapability needs one of the capabilities caps(r) names in the
// namespace of the allocation the path names (its segment after prefix,
// skipping skip segments). An allocation this agent does not know is
// checked against the request's namespace, so that the answer (404)
// tells nothing to a token that may not look there.
func allocCapability(doc, prefix string, skip int, caps func(r *http.Request) []string) need {
	return need{Doc: doc + " in the allocation's namespace",
		check: func(s *HTTPServer, a *acl.ACL, r *http.Request) error {
			segs := strings.Split(strings.TrimPrefix(r.URL.Path, prefix), "/")
			allocID := ""
			if len(segs) > skip {
				allocID = segs[skip]
			}
			if !a.AllowNsOpAny(s.allocNamespace(r, allocID), caps(r)...) {
				return errPermissionDenied
			}
			return nil
		}}
}

// allocNamespace is the namespace of an allocation this agent's client
// runs, else the request's.
func (s *HTTPServer) allocNamespace(r *http.Request, allocID string) string {
	if s.cfg.Client != nil && allocID != "" {
		if alloc, err := s.cfg.Client.AllocState(allocID); err == nil && alloc != nil && alloc.Namespace != "" {
			return alloc.Namespace
		}
	}
	return namespace(r)
}

var fsNeed = allocCapability("logs: read-logs or read-fs; other operations: read-fs", "/v1/client/fs/", 1,
	func(r *http.Request) []string {
		if strings.HasPrefix(r.URL.Path, "/v1/client/fs/logs/") {
			return []string{acl.NamespaceCapabilityReadLogs, acl.NamespaceCapabilityReadFS}
		}
		return []string{acl.NamespaceCapabilityReadFS}
	})

var clientAllocOpNeed = allocCapability("stats, checks: read-job; restart, signal: alloc-lifecycle", "/v1/client/allocation/", 0,
	func(r *http.Request) []string {
		path := strings.TrimSuffix(r.URL.Path, "/")
		if strings.HasSuffix(path, "/stats") || strings.HasSuffix(path, "/checks") {
			return []string{acl.NamespaceCapabilityReadJob}
		}
		return []string{acl.NamespaceCapabilityAllocLifecycle}
	})

// clientAllocNeed is clientAllocOpNeed, and for exec: alloc-exec, plus
// alloc-node-exec when the task's driver leaves the node's filesystem
// visible to the command (raw_exec, exec), since such a command acts on
// the node as much as on the task.
var clientAllocNeed = need{
	Doc: clientAllocOpNeed.Doc + "; exec: alloc-exec, and alloc-node-exec too when the task's driver has no filesystem isolation (raw_exec, exec), in the allocation's namespace (with `ws_handshake=true` and no token header, of the token in the first frame)",
	check: func(s *HTTPServer, a *acl.ACL, r *http.Request) error {
		id, sub := splitObjectPath(r, "/v1/client/allocation/", clientAllocSubresources)
		if sub != "exec" {
			return clientAllocOpNeed.check(s, a, r)
		}
		if execDeferredAuth(r) {
			// The token comes in the first frame; the handler checks
			// it before running anything (client_exec_handshake.go).
			return nil
		}
		return s.execAllowed(a, r, id)
	},
}

// execNeedsNodeExec reports whether exec into the task needs
// alloc-node-exec: when its driver does not isolate the filesystem. A task
// this agent cannot look up needs nothing more (the exec is refused
// anyway, without running anything).
func (s *HTTPServer) execNeedsNodeExec(allocID, task string) bool {
	if s.cfg.Client == nil {
		return false
	}
	ex, ok := s.cfg.Client.(ClientExecAPI)
	if !ok {
		return false
	}
	iso, err := ex.ExecIsolation(allocID, task)
	return err == nil && iso == driver.FSIsolationNone
}

// route is one registration: its path pattern and what it needs.
type route struct {
	Path string
	Need need
}

// handle registers handler at path behind the authorization step, and
// records the route and its need (registeredRoutes).
func (s *HTTPServer) handle(path string, n need, handler http.Handler) {
	s.routeTable = append(s.routeTable, route{Path: path, Need: n})
	s.mux.Handle(path, s.authorized(n, handler))
}

// registeredRoutes lists every registered route with its need, in registration
// order.
func (s *HTTPServer) registeredRoutes() []route {
	return append([]route(nil), s.routeTable...)
}

type aclContextKey struct{}

// requestACL is the caller's resolved ACL on a route that checks one,
// nil elsewhere.
func requestACL(r *http.Request) *acl.ACL {
	a, _ := r.Context().Value(aclContextKey{}).(*acl.ACL)
	return a
}

// authorized is the authorization step: for a route the agent answers
// itself, resolve the caller's token (X-Nomad-Token, else a bearer
// token) and apply the route's need; the handler finds the ACL with
// requestACL.
func (s *HTTPServer) authorized(n need, handler http.Handler) http.Handler {
	if n.check == nil {
		return handler
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a, err := s.resolveACL(authToken(r))
		if err == nil {
			err = n.check(s, a, r)
		}
		if err != nil {
			code, msg := errorStatus(err)
			if code >= 500 {
				s.logger.Error("authorizing request failed", "method", r.Method, "path", r.URL.Path, "error", msg)
			}
			writeError(w, code, msg)
			return
		}
		handler.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), aclContextKey{}, a)))
	})
}

// resolveACL returns what the token with secret may do: through the
// in-process server on a server agent, through the servers (cached) on a
// client-only agent. A secret no token has is errTokenNotFound; errors
// never carry the secret.
func (s *HTTPServer) resolveACL(secret string) (*acl.ACL, error) {
	var a *acl.ACL
	var err error
	switch {
	case s.cfg.Server != nil:
		a, err = s.cfg.Server.ResolveACL(secret)
	case !s.agent.ACL.Enabled:
		return acl.ACLsDisabled, nil
	default:
		a, err = s.remoteACLs.resolve(secret)
	}
	switch {
	case err == nil:
		return a, nil
	case errors.Is(err, structs.ErrACLTokenExpired):
		return nil, codedError(http.StatusForbidden, structs.ErrACLTokenExpired.Error())
	case errors.Is(err, structs.ErrPermissionDenied):
		return nil, errTokenNotFound
	}
	return nil, err
}
