package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// An agent whose client does not run the allocation forwards client
// requests, websocket upgrades included, to the agent that does, with
// the caller's token, one hop only.
func TestForwardClient(t *testing.T) {
	type seen struct {
		Path, Query, Token, Forwarded, Body string
	}
	var last seen
	upgrader := websocket.Upgrader{}
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		last = seen{r.URL.Path, r.URL.RawQuery, r.Header.Get("X-Nomad-Token"), r.Header.Get(forwardedHeader), string(b)}
		if strings.HasSuffix(r.URL.Path, "/exec") {
			conn, err := upgrader.Upgrade(w, r, nil)
			if err != nil {
				return
			}
			defer conn.Close()
			_, msg, err := conn.ReadMessage()
			if err == nil {
				_ = conn.WriteMessage(websocket.TextMessage, append([]byte("echo:"), msg...))
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]string{"from": "target"})
	}))
	defer target.Close()

	h := newTestHTTP(t)
	node, alloc := runsOn(t, h, target)

	cases := []struct {
		name, path string
		wantStatus int
		wantPath   string
	}{
		{"alloc stats", "/v1/client/allocation/" + alloc.ID + "/stats", 200, "/v1/client/allocation/" + alloc.ID + "/stats"},
		{"fs ls", "/v1/client/fs/ls/" + alloc.ID + "?path=/", 200, "/v1/client/fs/ls/" + alloc.ID},
		{"node stats", "/v1/client/stats?node_id=" + node.ID, 200, "/v1/client/stats"},
		{"unknown alloc", "/v1/client/allocation/" + mock.IDFor(99) + "/stats", 404, ""},
		{"unknown node", "/v1/client/stats?node_id=" + mock.IDFor(98), 404, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			last = seen{}
			resp, body := h.do("GET", tc.path, "", "X-Nomad-Token", "secret-1")
			must.Eq(t, tc.wantStatus, resp.StatusCode, must.Sprint(body))
			if tc.wantPath == "" {
				must.Eq(t, "", last.Path, must.Sprint("nothing forwarded"))
				return
			}
			must.Eq(t, tc.wantPath, last.Path)
			must.Eq(t, "secret-1", last.Token)
			must.Eq(t, "n1", last.Forwarded)
			must.StrContains(t, body, `"from":"target"`)
		})
	}

	// A write naming its node in the body (as the api package sends
	// identity renewals and metadata changes) goes to that node's agent,
	// body intact.
	for _, path := range []string{"/v1/client/identity/renew", "/v1/client/metadata"} {
		last = seen{}
		renew := `{"NodeID":"` + node.ID + `","Meta":{"a":"b"}}`
		resp, body := h.do("POST", path, renew)
		must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
		must.Eq(t, path, last.Path)
		must.Eq(t, renew, last.Body)
	}

	// A request forwarded already is not forwarded again: this agent
	// answers it as an agent without the allocation would.
	last = seen{}
	resp, _ := h.do("GET", "/v1/client/allocation/"+alloc.ID+"/stats", "", forwardedHeader, "other")
	must.Eq(t, http.StatusNotImplemented, resp.StatusCode)
	must.Eq(t, "", last.Path)

	// The exec websocket is relayed both ways.
	wsURL := "ws" + strings.TrimPrefix(h.srv.URL, "http") + "/v1/client/allocation/" + alloc.ID + "/exec?task=web&command=%5B%22sh%22%5D"
	conn, _, err := websocket.DefaultDialer.Dial(wsURL, nil)
	must.NoError(t, err)
	defer conn.Close()
	must.NoError(t, conn.WriteMessage(websocket.TextMessage, []byte("hi")))
	_, msg, err := conn.ReadMessage()
	must.NoError(t, err)
	must.Eq(t, "echo:hi", string(msg))

	// Exec into an allocation no server knows: upgraded, then closed
	// with the reason, as Nomad's agents answer.
	unknownURL := "ws" + strings.TrimPrefix(h.srv.URL, "http") + "/v1/client/allocation/" + mock.IDFor(97) + "/exec?task=web&command=%5B%22sh%22%5D"
	unknown, _, err := websocket.DefaultDialer.Dial(unknownURL, nil)
	must.NoError(t, err)
	_, _, err = unknown.ReadMessage()
	var closed *websocket.CloseError
	must.True(t, errors.As(err, &closed), must.Sprintf("%v", err))
	must.Eq(t, websocket.ClosePolicyViolation, closed.Code)
	must.Eq(t, fmt.Sprintf("Unknown allocation %q", mock.IDFor(97)), closed.Text)
	unknown.Close()

	// A node whose agent is gone answers 502, naming the node.
	target.Close()
	resp, body := h.do("GET", "/v1/client/allocation/"+alloc.ID+"/stats", "")
	must.Eq(t, http.StatusBadGateway, resp.StatusCode)
	must.StrContains(t, body, node.ID)
}

// A browser's exec session (token in the first frame) through an agent
// without a server: the agent reads the handshake, asks the servers with
// its token where the allocation runs, hands the same handshake to the
// node's agent and relays the session, close frame included.
func TestForwardClient_ExecHandshakeWithoutServer(t *testing.T) {
	var firstFrame string
	upgrader := websocket.Upgrader{}
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, err := upgrader.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer conn.Close()
		_, first, err := conn.ReadMessage()
		if err != nil {
			return
		}
		firstFrame = string(first)
		_, msg, err := conn.ReadMessage()
		if err != nil {
			return
		}
		_ = conn.WriteMessage(websocket.TextMessage, append([]byte("echo:"), msg...))
		_ = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, "done"), time.Now().Add(time.Second))
	}))
	defer target.Close()

	h := newTestHTTP(t)
	must.Nil(t, h.http.serverFinder(), must.Sprint("the test agent must have no server state of its own"))
	_, alloc := runsOn(t, h, target)
	base := "ws" + strings.TrimPrefix(h.srv.URL, "http") + "/v1/client/allocation/"
	query := "/exec?task=web&command=%5B%22sh%22%5D&ws_handshake=true"
	handshake := `{"version":1,"auth_token":"secret-7"}`

	conn, _, err := websocket.DefaultDialer.Dial(base+alloc.ID+query, nil)
	must.NoError(t, err)
	defer conn.Close()
	must.NoError(t, conn.WriteMessage(websocket.TextMessage, []byte(handshake)))
	must.NoError(t, conn.WriteMessage(websocket.TextMessage, []byte("hi")))
	_, msg, err := conn.ReadMessage()
	must.NoError(t, err)
	must.Eq(t, "echo:hi", string(msg))
	_, _, err = conn.ReadMessage()
	var closed *websocket.CloseError
	must.True(t, errors.As(err, &closed), must.Sprintf("%v", err))
	must.Eq(t, websocket.CloseNormalClosure, closed.Code)
	must.Eq(t, "done", closed.Text)
	must.Eq(t, handshake, firstFrame)
	// The servers were asked with the handshake's token.
	var asked []string
	for _, c := range h.rpc.calls {
		if c.Method == "Alloc.GetAlloc" {
			asked = append(asked, c.Args.(*structs.AllocSpecificRequest).AuthToken)
		}
	}
	must.Eq(t, []string{"secret-7"}, asked)

	cases := []struct {
		name, alloc, first, closeText string
	}{
		{"unknown allocation", mock.IDFor(96), handshake, fmt.Sprintf("Unknown allocation %q", mock.IDFor(96))},
		{"no handshake frame", alloc.ID, `{"stdin":{"data":"eA=="}}`, "exec handshake"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			conn, _, err := websocket.DefaultDialer.Dial(base+tc.alloc+query, nil)
			must.NoError(t, err)
			defer conn.Close()
			must.NoError(t, conn.WriteMessage(websocket.TextMessage, []byte(tc.first)))
			_, _, err = conn.ReadMessage()
			var closed *websocket.CloseError
			must.True(t, errors.As(err, &closed), must.Sprintf("%v", err))
			must.Eq(t, websocket.ClosePolicyViolation, closed.Code)
			must.StrContains(t, closed.Text, tc.closeText)
		})
	}
}

// runsOn stores, in the servers' state h reads, a node whose agent is
// target and an allocation running on it.
func runsOn(t *testing.T, h *testHTTP, target *httptest.Server) (*structs.Node, *structs.Allocation) {
	t.Helper()
	node := mock.Node()
	node.HTTPAddr = strings.TrimPrefix(target.URL, "http://")
	must.NoError(t, h.rpc.state.UpsertNode(10, node))
	job := mock.Job()
	must.NoError(t, h.rpc.state.UpsertJob(11, job))
	alloc := mock.Alloc(mock.ForJob(job, 0), mock.OnNode(node))
	must.NoError(t, h.rpc.state.UpsertAllocs(12, []*structs.Allocation{alloc}))
	return node, alloc
}
