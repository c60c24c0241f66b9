package api

import (
	"bytes"
	"context"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
)

// execAgent answers exec websockets with script, after reading stdin to
// its close frame and recording it.
func execAgent(t *testing.T, script func(conn *websocket.Conn, stdin string)) *Client {
	t.Helper()
	up := websocket.Upgrader{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/node/n1" {
			http.Error(w, "node not found", http.StatusNotFound)
			return
		}
		q := r.URL.Query()
		if q.Get("task") != "web" || q.Get("command") != `["sh","-c","x"]` || q.Get("tty") != "false" {
			http.Error(w, "bad query "+r.URL.RawQuery, http.StatusBadRequest)
			return
		}
		conn, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer conn.Close()
		var stdin strings.Builder
		for {
			var in ExecStreamingInput
			if err := conn.ReadJSON(&in); err != nil {
				return
			}
			if in.Stdin != nil {
				stdin.Write(in.Stdin.Data)
				if in.Stdin.Close {
					break
				}
			}
		}
		script(conn, stdin.String())
	}))
	t.Cleanup(srv.Close)
	c, err := NewClient(&Config{Address: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestAllocationsExec(t *testing.T) {
	cases := []struct {
		name       string
		script     func(conn *websocket.Conn, stdin string)
		wantCode   int
		wantErr    string
		wantStdout string
		wantStderr string
	}{
		{
			name: "streams and exit code",
			script: func(conn *websocket.Conn, stdin string) {
				conn.WriteMessage(websocket.TextMessage, []byte(`{"stdout":{"data":"`+b64(stdin)+`"}}`))
				conn.WriteMessage(websocket.TextMessage, []byte(`{"stderr":{"data":"`+b64("err")+`"}}`))
				conn.WriteMessage(websocket.TextMessage, []byte(`{}`))
				conn.WriteMessage(websocket.TextMessage, []byte(`{"stdout":{"close":true}}`))
				conn.WriteMessage(websocket.TextMessage, []byte(`{"exited":true,"result":{"exit_code":7}}`))
			},
			wantCode: 7, wantStdout: "input", wantStderr: "err",
		},
		{
			name: "exit 0 is an empty result",
			script: func(conn *websocket.Conn, _ string) {
				conn.WriteMessage(websocket.TextMessage, []byte(`{"exited":true,"result":{}}`))
			},
		},
		{
			name: "refusal as a close frame",
			script: func(conn *websocket.Conn, _ string) {
				conn.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.ClosePolicyViolation, `unknown task name "web"`))
			},
			wantCode: -2, wantErr: `unknown task name "web"`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := execAgent(t, tc.script)
			var stdout, stderr bytes.Buffer
			code, err := c.Allocations().Exec(context.Background(), &Allocation{ID: "a1", NodeID: "n1"}, "web", false,
				[]string{"sh", "-c", "x"}, strings.NewReader("input"), &stdout, &stderr, nil, nil)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tc.wantCode {
				t.Errorf("exit code %d, want %d", code, tc.wantCode)
			}
			if stdout.String() != tc.wantStdout || stderr.String() != tc.wantStderr {
				t.Errorf("stdout %q stderr %q, want %q %q", stdout.String(), stderr.String(), tc.wantStdout, tc.wantStderr)
			}
		})
	}
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
