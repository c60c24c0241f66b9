package agent

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"

	"github.com/gorilla/websocket"
	"github.com/opennomad/nomad/client"
	"github.com/opennomad/nomad/structs"
)

// Client endpoints (/v1/client/...) are answered by the agent whose
// client runs the allocation or is the node asked about. Any other agent
// forwards the request to that agent's HTTP API, one hop only: Nomad
// tunnels these calls through the client's RPC connection to its server
// instead, so here a client's HTTP port must be reachable from the agents
// that forward to it. The forwarding agent has already checked the
// caller's token against the route's capability; the token travels with
// the request and the client agent checks it again.

// forwardedHeader marks a forwarded request; an agent that receives one
// for an allocation it does not run answers 404 instead of forwarding
// again, so a stale node address cannot make a loop.
const forwardedHeader = "X-Nomad-Forwarded"

// allocNodeFinder is what a server agent offers forwarding: the node an
// allocation runs on, and a node, read from the server's own state
// without a token (the route has authorized the caller). Either is nil,
// without an error, when it does not exist.
type allocNodeFinder interface {
	AllocNode(allocID string) (*structs.Node, error)
	NodeByID(nodeID string) (*structs.Node, error)
}

// forwardClient wraps the handler of a /v1/client/ route: a request
// about an allocation or node this agent's client does not have is
// proxied to the agent that has it.
func (s *HTTPServer) forwardClient(fn handlerFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) (interface{}, error) {
		allocID, nodeID := clientRequestTarget(r)
		if s.answersLocally(allocID, nodeID) {
			return fn(w, r)
		}
		if r.Header.Get(forwardedHeader) != "" {
			// Forwarded here, and not ours after all: the server's
			// view was stale. Answer as the client would.
			return fn(w, r)
		}
		if allocID != "" && isExecUpgrade(r) && execDeferredAuth(r) && s.serverFinder() == nil {
			return nil, s.forwardExecHandshake(w, r, allocID)
		}
		node, err := s.targetNode(r, allocID, nodeID)
		if err != nil {
			return nil, err
		}
		if node == nil {
			if allocID != "" && isExecUpgrade(r) {
				return nil, s.refuseExecUpgrade(w, r, allocID, fmt.Sprintf("Unknown allocation %q", allocID))
			}
			if allocID != "" {
				return nil, codedError(http.StatusNotFound, fmt.Sprintf("Unknown allocation %q", allocID))
			}
			return nil, codedError(http.StatusNotFound, fmt.Sprintf("Unknown node %q", nodeID))
		}
		if node.HTTPAddr == "" {
			return nil, codedError(http.StatusBadGateway, fmt.Sprintf("node %s advertises no HTTP address to forward to", node.ID))
		}
		s.proxyToAgent(w, r, node)
		return nil, nil
	}
}

// serverFinder is this agent's own server as a finder of nodes, nil on
// an agent without a server.
func (s *HTTPServer) serverFinder() allocNodeFinder {
	if s.cfg.Server == nil {
		return nil
	}
	f, _ := s.cfg.Server.(allocNodeFinder)
	return f
}

// isExecUpgrade reports whether r opens an exec websocket.
func isExecUpgrade(r *http.Request) bool {
	return strings.HasSuffix(r.URL.Path, "/exec") && websocket.IsWebSocketUpgrade(r)
}

// clientRequestTarget reads the allocation or node a client request is
// about from its path or query; both are "" when it names neither (the
// agent's own client answers).
func clientRequestTarget(r *http.Request) (allocID, nodeID string) {
	path := r.URL.Path
	switch {
	case strings.HasPrefix(path, "/v1/client/allocation/"):
		allocID, _, _ = strings.Cut(strings.TrimPrefix(path, "/v1/client/allocation/"), "/")
	case strings.HasPrefix(path, "/v1/client/fs/"):
		_, rest, _ := strings.Cut(strings.TrimPrefix(path, "/v1/client/fs/"), "/")
		allocID, _, _ = strings.Cut(rest, "/")
	default:
		nodeID = r.URL.Query().Get("node_id")
		if nodeID == "" && namesNodeInBody(r) {
			nodeID = bodyNodeID(r)
		}
	}
	return allocID, nodeID
}

// namesNodeInBody reports whether the request is a write whose JSON body
// names the node ({"NodeID"}), as the api package sends metadata changes
// and identity renewals.
func namesNodeInBody(r *http.Request) bool {
	if r.Method != http.MethodPut && r.Method != http.MethodPost {
		return false
	}
	return r.URL.Path == "/v1/client/metadata" || r.URL.Path == "/v1/client/identity/renew"
}

// maxPeekedBody bounds what is read of a body to find the node it names;
// the handler reads the same bytes again.
const maxPeekedBody = 1 << 20

// bodyNodeID reads the NodeID of r's JSON body and puts the body back
// for the handler (or the proxy); "" when there is none or the body is
// not JSON, which the handler then refuses.
func bodyNodeID(r *http.Request) string {
	if r.Body == nil {
		return ""
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, maxPeekedBody))
	r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(b), r.Body))
	if err != nil {
		return ""
	}
	var body struct{ NodeID string }
	if json.Unmarshal(b, &body) != nil {
		return ""
	}
	return body.NodeID
}

// answersLocally reports whether this agent's client is the one asked
// about: it has the allocation, or is the node, or nothing is named. An
// agent without a client answers nothing locally but requests that name
// nothing, which its handlers refuse as they did before.
func (s *HTTPServer) answersLocally(allocID, nodeID string) bool {
	if allocID == "" && nodeID == "" {
		return true
	}
	c := s.cfg.Client
	if c == nil {
		return false
	}
	if allocID != "" {
		_, err := c.AllocState(allocID)
		return !errors.Is(err, client.ErrNotFound)
	}
	id, ok := c.(interface{ NodeID() string })
	return ok && strings.EqualFold(id.NodeID(), nodeID)
}

// targetNode finds the node to forward to: from the in-process server's
// state on a server agent, else through the servers with the caller's
// token.
func (s *HTTPServer) targetNode(r *http.Request, allocID, nodeID string) (*structs.Node, error) {
	if f := s.serverFinder(); f != nil {
		if allocID != "" {
			return f.AllocNode(allocID)
		}
		return f.NodeByID(nodeID)
	}
	q := structs.QueryOptions{Region: s.agent.Region, AuthToken: authToken(r), AllowStale: true}
	if allocID != "" {
		var out structs.SingleAllocResponse
		if err := s.rpc.RPC("Alloc.GetAlloc", &structs.AllocSpecificRequest{AllocID: allocID, QueryOptions: q}, &out); err != nil {
			return nil, err
		}
		if out.Alloc == nil {
			return nil, nil
		}
		nodeID = out.Alloc.NodeID
	}
	var out structs.SingleNodeResponse
	if err := s.rpc.RPC("Node.GetNode", &structs.NodeSpecificRequest{NodeID: nodeID, QueryOptions: q}, &out); err != nil {
		return nil, err
	}
	return out.Node, nil
}

// proxyToAgent relays the request, websocket upgrades and streamed bodies
// included, to the HTTP API of the agent running node.
func (s *HTTPServer) proxyToAgent(w http.ResponseWriter, r *http.Request, node *structs.Node) {
	scheme := "http"
	transport := http.DefaultTransport.(*http.Transport).Clone()
	if s.cfg.ForwardTLS != nil {
		scheme = "https"
		transport.TLSClientConfig = s.cfg.ForwardTLS()
	}
	target := &url.URL{Scheme: scheme, Host: node.HTTPAddr}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Host = node.HTTPAddr
			pr.Out.Header.Set(forwardedHeader, s.agent.Name)
			// This agent compresses what it sends on as the caller asked;
			// the hop itself is left to the transport, which then hands
			// over plain bytes (else the body would be compressed twice).
			pr.Out.Header.Del("Accept-Encoding")
		},
		Transport: transport,
		// Logs and event-like streams are flushed as they come.
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			s.logger.Warn("forwarding a client request failed", "path", r.URL.Path, "node_id", node.ID, "error", err)
			writeError(w, http.StatusBadGateway, fmt.Sprintf("forwarding to node %s at %s: %s", node.ID, node.HTTPAddr, errorCause(err)))
		},
	}
	proxy.ServeHTTP(w, r)
}

// errorCause is the part of a dial or TLS error worth showing: the
// operation that failed, without Go's wrapping of the URL.
func errorCause(err error) string {
	var op *net.OpError
	if errors.As(err, &op) {
		return op.Error()
	}
	var tlsErr *tls.RecordHeaderError
	if errors.As(err, &tlsErr) {
		return "the node's agent does not speak TLS"
	}
	return err.Error()
}
