package agent

import (
	"net/http"
	"time"

	"github.com/gorilla/websocket"

	"github.com/opennomad/nomad/acl"
)

// A browser cannot set headers on a websocket, and a secret must not go
// in a URL (proxies and logs keep URLs). So, as in Nomad, an exec request
// with ?ws_handshake=true sends the token in its first frame,
// {"version": 1, "auth_token": "<secret>"}, and the agent authorizes the
// session then, before anything runs.

// execHandshakeTimeout bounds the wait for the handshake frame.
var execHandshakeTimeout = 10 * time.Second

// execHandshake is the first frame of a ws_handshake session.
type execHandshake struct {
	Version   int    `json:"version"`
	AuthToken string `json:"auth_token"`
}

// wantsExecHandshake reports whether the request announces the
// handshake frame.
func wantsExecHandshake(r *http.Request) bool {
	return r.URL.Query().Get("ws_handshake") == "true"
}

// execDeferredAuth reports whether the route's check leaves the request
// to the handshake: it announces one and carries no token of its own.
// A request with a token header is checked at the route as any other.
func execDeferredAuth(r *http.Request) bool {
	return wantsExecHandshake(r) && authToken(r) == ""
}

// readExecHandshake reads the handshake frame and, when the route left
// the authorization to it, authorizes the session with its token. An
// error is the refusal to close the session with.
func (s *HTTPServer) readExecHandshake(conn *websocket.Conn, r *http.Request, allocID string) error {
	conn.SetReadDeadline(time.Now().Add(execHandshakeTimeout))
	defer conn.SetReadDeadline(time.Time{})
	var hs execHandshake
	if err := conn.ReadJSON(&hs); err != nil {
		return codedError(http.StatusBadRequest, "exec handshake: expected a first frame {\"version\": 1, \"auth_token\": \"...\"}")
	}
	if hs.Version != 1 {
		return codedError(http.StatusBadRequest, "exec handshake: unsupported version")
	}
	if authToken(r) != "" {
		return nil // checked at the route already
	}
	a, err := s.resolveACL(hs.AuthToken)
	if err != nil {
		return err
	}
	return s.execAllowed(a, r, allocID)
}

// execAllowed is the need of exec: alloc-exec in the allocation's
// namespace, and alloc-node-exec too when the task's driver does not
// isolate the filesystem.
func (s *HTTPServer) execAllowed(a *acl.ACL, r *http.Request, allocID string) error {
	ns := s.allocNamespace(r, allocID)
	if !a.AllowNsOpAny(ns, acl.NamespaceCapabilityAllocExec) {
		return errPermissionDenied
	}
	if s.execNeedsNodeExec(allocID, r.URL.Query().Get("task")) && !a.AllowNsOpAny(ns, acl.NamespaceCapabilityAllocNodeExec) {
		return errPermissionDenied
	}
	return nil
}
