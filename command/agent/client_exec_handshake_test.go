package agent

import (
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/opennomad/nomad/structs/mock"
	"github.com/shoenig/test/must"
)

// TestAllocExec_Handshake: with ?ws_handshake=true and no token header
// (a browser's websocket), the token comes in the first frame and is
// held to exec's need before anything runs; a session without the frame
// is refused.
func TestAllocExec_Handshake(t *testing.T) {
	ra, alloc := startClientAgentRunning(t, "mock_driver", map[string]interface{}{}, func(c *Config) { c.ACL.Enabled = true })
	execTok := ra.mustToken(ra.mgmt, "exec", nsCaps("alloc-exec"))
	readTok := ra.mustToken(ra.mgmt, "read", nsRead)
	u, err := url.Parse(ra.base)
	must.NoError(t, err)
	q := url.Values{"task": {"web"}, "command": {`["showinput"]`}, "ws_handshake": {"true"}}
	addr := "ws://" + u.Host + "/v1/client/allocation/" + alloc.ID + "/exec?" + q.Encode()

	cases := []struct {
		name  string
		first string // the first frame, "" for none
		// closeText is the refusal expected; "" expects the command's
		// output and exit.
		closeText string
	}{
		{name: "a token that may exec", first: `{"version":1,"auth_token":"` + execTok + `"}`},
		{name: "a token that may only read", first: `{"version":1,"auth_token":"` + readTok + `"}`, closeText: "Permission denied"},
		{name: "an unknown token", first: `{"version":1,"auth_token":"00000000-0000-4000-8000-000000000009"}`, closeText: "ACL token not found"},
		{name: "no token in the frame", first: `{"version":1}`, closeText: "Permission denied"},
		{name: "stdin instead of the handshake", first: `{"stdin":{"data":"eA=="}}`, closeText: "exec handshake"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			conn, resp, err := websocket.DefaultDialer.Dial(addr, nil)
			must.NoError(t, err)
			must.Eq(t, http.StatusSwitchingProtocols, resp.StatusCode)
			defer conn.Close()
			conn.SetReadDeadline(time.Now().Add(15 * time.Second))
			must.NoError(t, conn.WriteMessage(websocket.TextMessage, []byte(c.first)))
			if c.closeText == "" {
				must.NoError(t, conn.WriteMessage(websocket.TextMessage, []byte(`{"stdin":{"data":"`+base64.StdEncoding.EncodeToString([]byte("hi"))+`"}}`)))
				must.NoError(t, conn.WriteMessage(websocket.TextMessage, []byte(`{"stdin":{"close":true}}`)))
			}
			var out strings.Builder
			for {
				var f execOutput
				err := conn.ReadJSON(&f)
				var ce *websocket.CloseError
				if errors.As(err, &ce) {
					must.NotEq(t, "", c.closeText, must.Sprintf("closed: %v (output %q)", ce, out.String()))
					must.Eq(t, websocket.ClosePolicyViolation, ce.Code)
					must.StrContains(t, ce.Text, c.closeText)
					return
				}
				must.NoError(t, err)
				if f.Stdout != nil {
					out.Write(f.Stdout.Data)
				}
				if f.Exited {
					must.Eq(t, "", c.closeText, must.Sprintf("the command ran: %q", out.String()))
					must.StrContains(t, out.String(), "Stdin:\nhi")
					return
				}
			}
		})
	}

	// An allocation no server knows: the handshake's token is checked
	// (in the request's namespace) before the answer says so.
	unknown := "ws://" + u.Host + "/v1/client/allocation/" + mock.IDFor(7) + "/exec?" + q.Encode()
	for tok, want := range map[string]string{readTok: "Permission denied", execTok: "Unknown allocation"} {
		conn, _, err := websocket.DefaultDialer.Dial(unknown, nil)
		must.NoError(t, err)
		must.NoError(t, conn.WriteMessage(websocket.TextMessage, []byte(`{"version":1,"auth_token":"`+tok+`"}`)))
		conn.SetReadDeadline(time.Now().Add(15 * time.Second))
		_, _, err = conn.ReadMessage()
		var ce *websocket.CloseError
		must.True(t, errors.As(err, &ce), must.Sprintf("%v", err))
		must.StrContains(t, ce.Text, want)
		conn.Close()
	}
}
