package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"github.com/opennomad/nomad/structs"
)

// A browser's exec session brings its token in the first frame, not in a
// header (client_exec_handshake.go). An agent that can find the
// allocation's node in its own server's state relays such a session as
// bytes, like any other request. An agent without a server must ask the
// servers where the allocation runs, and the servers answer only a
// caller with a token: so it opens the session itself, reads the
// handshake, asks with the handshake's token, then opens the session to
// the node's agent, hands it the same handshake (that agent authorizes
// it again, before anything runs) and relays frames both ways.

// forwardExecHandshake relays a ws_handshake exec session without a token
// header to the agent of the node that runs allocID. Refusals come as
// close frames after the upgrade, as the local exec's do.
func (s *HTTPServer) forwardExecHandshake(w http.ResponseWriter, r *http.Request, allocID string) error {
	conn, err := execUpgrader.Upgrade(hijacker(w), r, nil)
	if err != nil {
		return nil // the upgrader answered the request already
	}
	defer conn.Close()
	refuse := func(code int, text string) {
		deadline := time.Now().Add(time.Second)
		_ = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, text), deadline)
	}

	first, hs, err := readHandshakeFrame(conn)
	if err != nil {
		_, msg := errorStatus(err)
		refuse(websocket.ClosePolicyViolation, msg)
		return nil
	}
	node, err := s.allocNodeWithToken(r, allocID, hs.AuthToken)
	if err != nil {
		_, msg := errorStatus(clientError(err))
		refuse(execCloseCode(err), msg)
		return nil
	}
	if node == nil {
		refuse(websocket.ClosePolicyViolation, fmt.Sprintf("Unknown allocation %q", allocID))
		return nil
	}
	if node.HTTPAddr == "" {
		refuse(websocket.CloseInternalServerErr, fmt.Sprintf("node %s advertises no HTTP address to forward to", node.ID))
		return nil
	}
	upstream, err := s.dialNodeExec(r, node)
	if err != nil {
		s.logger.Warn("forwarding an exec session failed", "alloc_id", allocID, "node_id", node.ID, "error", err)
		refuse(websocket.CloseInternalServerErr, fmt.Sprintf("forwarding to node %s at %s: %s", node.ID, node.HTTPAddr, errorCause(err)))
		return nil
	}
	defer upstream.Close()
	if err := upstream.WriteMessage(websocket.TextMessage, first); err != nil {
		refuse(websocket.CloseInternalServerErr, fmt.Sprintf("forwarding to node %s: %s", node.ID, errorCause(err)))
		return nil
	}
	relayWebsockets(conn, upstream)
	return nil
}

// readHandshakeFrame reads the first frame of a ws_handshake session and
// returns it as sent, with the handshake it carries.
func readHandshakeFrame(conn *websocket.Conn) ([]byte, execHandshake, error) {
	var hs execHandshake
	conn.SetReadDeadline(time.Now().Add(execHandshakeTimeout))
	defer conn.SetReadDeadline(time.Time{})
	_, first, err := conn.ReadMessage()
	if err == nil {
		err = json.Unmarshal(first, &hs)
	}
	if err != nil {
		return nil, hs, codedError(http.StatusBadRequest, "exec handshake: expected a first frame {\"version\": 1, \"auth_token\": \"...\"}")
	}
	if hs.Version != 1 {
		return nil, hs, codedError(http.StatusBadRequest, "exec handshake: unsupported version")
	}
	return first, hs, nil
}

// allocNodeWithToken asks the servers, with token, for the node running
// allocID; nil when the allocation does not exist.
func (s *HTTPServer) allocNodeWithToken(r *http.Request, allocID, token string) (*structs.Node, error) {
	q := structs.QueryOptions{Region: s.agent.Region, AuthToken: token, AllowStale: true}
	var alloc structs.SingleAllocResponse
	if err := s.rpc.RPC("Alloc.GetAlloc", &structs.AllocSpecificRequest{AllocID: allocID, QueryOptions: q}, &alloc); err != nil {
		return nil, err
	}
	if alloc.Alloc == nil {
		return nil, nil
	}
	var node structs.SingleNodeResponse
	if err := s.rpc.RPC("Node.GetNode", &structs.NodeSpecificRequest{NodeID: alloc.Alloc.NodeID, QueryOptions: q}, &node); err != nil {
		return nil, err
	}
	return node.Node, nil
}

// dialNodeExec opens the same exec request, query and all, to the agent
// of node, over TLS when this agent forwards with it.
func (s *HTTPServer) dialNodeExec(r *http.Request, node *structs.Node) (*websocket.Conn, error) {
	dialer := *websocket.DefaultDialer
	scheme := "ws"
	if s.cfg.ForwardTLS != nil {
		scheme = "wss"
		dialer.TLSClientConfig = s.cfg.ForwardTLS()
	}
	u := url.URL{Scheme: scheme, Host: node.HTTPAddr, Path: r.URL.Path, RawQuery: r.URL.RawQuery}
	// No Origin: this agent checked the page's origin when it upgraded.
	header := http.Header{}
	header.Set(forwardedHeader, s.agent.Name)
	conn, resp, err := dialer.Dial(u.String(), header)
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
	return conn, err
}

// relayWebsockets copies messages between two sessions until either
// ends, and hands on the close frame (the exec's exit or refusal) that
// ended it.
func relayWebsockets(a, b *websocket.Conn) {
	var once sync.Once
	done := make(chan struct{})
	copyTo := func(dst, src *websocket.Conn) {
		for {
			kind, msg, err := src.ReadMessage()
			if err != nil {
				code, text := websocket.CloseNormalClosure, ""
				var ce *websocket.CloseError
				if errors.As(err, &ce) {
					code, text = ce.Code, ce.Text
				}
				if code == websocket.CloseNoStatusReceived {
					code = websocket.CloseNormalClosure
				}
				_ = dst.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, text), time.Now().Add(time.Second))
				once.Do(func() { close(done) })
				return
			}
			if err := dst.WriteMessage(kind, msg); err != nil {
				once.Do(func() { close(done) })
				return
			}
		}
	}
	go copyTo(a, b)
	go copyTo(b, a)
	<-done
}
