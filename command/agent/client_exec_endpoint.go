package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/opennomad/nomad/client/driver"
)

// ClientExecAPI is the part of the node agent that runs commands in
// tasks (nomad alloc exec).
type ClientExecAPI interface {
	ExecTask(ctx context.Context, allocID, task string, opts *driver.ExecOptions) (int, error)
	ExecIsolation(allocID, task string) (driver.FSIsolation, error)
}

// execInput is a frame from the operator: stdin data or its end, a
// terminal size, or nothing (a heartbeat). Data is base64 in JSON.
type execInput struct {
	Stdin   *execIO `json:"stdin,omitempty"`
	TTYSize *struct {
		Height int `json:"height"`
		Width  int `json:"width"`
	} `json:"tty_size,omitempty"`
}

// execIO is data on one stream, or its end.
type execIO struct {
	Data  []byte `json:"data,omitempty"`
	Close bool   `json:"close,omitempty"`
}

// execOutput is a frame to the operator. The last one has Exited and a
// Result; an exit code of 0 is sent as an empty result object.
type execOutput struct {
	Stdout *execIO `json:"stdout,omitempty"`
	Stderr *execIO `json:"stderr,omitempty"`
	Exited bool    `json:"exited,omitempty"`
	Result *struct {
		ExitCode int `json:"exit_code,omitempty"`
	} `json:"result,omitempty"`
}

// execUpgrader turns the request into a websocket. Its default origin
// check refuses pages of other sites, which could otherwise drive a
// browser's session.
var execUpgrader = websocket.Upgrader{ReadBufferSize: 4096, WriteBufferSize: 4096}

// execHeartbeat is how often an idle session sends an empty frame, so
// that proxies do not cut it.
var execHeartbeat = 10 * time.Second

// allocExec serves GET /v1/client/allocation/:id/exec?task=&command=&tty=:
// it parses the query, upgrades to a websocket and runs the command in
// the task, relaying its streams as frames. Refusals of the allocation,
// task or command come as a close frame after the upgrade (1008, or 1011
// for internal errors) with the text as Nomad's agents send it.
func (s *HTTPServer) allocExec(w http.ResponseWriter, r *http.Request, allocID string) error {
	if err := requireMethod(r, http.MethodGet); err != nil {
		return err
	}
	q := r.URL.Query()
	var command []string
	if raw := q.Get("command"); raw != "" {
		if err := json.Unmarshal([]byte(raw), &command); err != nil {
			return codedError(http.StatusBadRequest, fmt.Sprintf("command: must be a JSON array of strings: %v", err))
		}
	}
	tty := false
	if raw := q.Get("tty"); raw != "" {
		var err error
		if tty, err = strconv.ParseBool(raw); err != nil {
			return codedError(http.StatusBadRequest, fmt.Sprintf("tty value is not a boolean: %v", err))
		}
	}
	if !websocket.IsWebSocketUpgrade(r) {
		return codedError(http.StatusBadRequest, "exec needs a websocket: send the request with Upgrade: websocket")
	}
	c, err := s.localExecClient()
	if err != nil {
		return err
	}
	conn, err := execUpgrader.Upgrade(hijacker(w), r, nil)
	if err != nil {
		// The upgrader answered the request already.
		return nil
	}
	defer conn.Close()
	sess := &execSession{conn: conn, done: make(chan struct{})}
	if wantsExecHandshake(r) {
		if err := s.readExecHandshake(conn, r, allocID); err != nil {
			code, msg := errorStatus(err)
			closeCode := websocket.ClosePolicyViolation
			if code >= 500 {
				closeCode = websocket.CloseInternalServerErr
			}
			sess.closeWith(closeCode, msg)
			return nil
		}
	}
	code, err := sess.run(c, allocID, q.Get("task"), command, tty)
	if err != nil {
		sess.closeWith(execCloseCode(err), err.Error())
		return nil
	}
	sess.finish(code)
	return nil
}

// refuseExecUpgrade answers an exec websocket as Nomad's agents do for a
// refusal found before any client is involved (an allocation no server
// knows): it upgrades, then closes with 1008 and the reason, which is
// what the api package reports as the error. A session that brings its
// token in the handshake frame is authorized first (against the
// request's namespace, the allocation being unknown), so that the answer
// tells nothing to a caller who may not exec there.
func (s *HTTPServer) refuseExecUpgrade(w http.ResponseWriter, r *http.Request, allocID, reason string) error {
	conn, err := execUpgrader.Upgrade(hijacker(w), r, nil)
	if err != nil {
		return nil
	}
	defer conn.Close()
	sess := &execSession{conn: conn, done: make(chan struct{})}
	if wantsExecHandshake(r) {
		if err := s.readExecHandshake(conn, r, allocID); err != nil {
			sess.closeWith(execCloseCode(err), err.Error())
			return nil
		}
	}
	sess.closeWith(websocket.ClosePolicyViolation, reason)
	return nil
}

// localExecClient is the agent's client as one that runs commands.
func (s *HTTPServer) localExecClient() (ClientExecAPI, error) {
	c, err := s.localClient()
	if err != nil {
		return nil, err
	}
	ex, ok := c.(ClientExecAPI)
	if !ok {
		return nil, codedError(http.StatusNotImplemented, "this agent's client cannot run commands in tasks")
	}
	return ex, nil
}

// execCloseCode is the websocket close code of a refusal: 1011 for what
// would be a 500, 1008 (policy violation) otherwise.
func execCloseCode(err error) int {
	if code, _ := errorStatus(clientError(err)); code >= 500 {
		return websocket.CloseInternalServerErr
	}
	return websocket.ClosePolicyViolation
}

// execSession relays one command's streams over a websocket.
type execSession struct {
	conn *websocket.Conn
	// mu serializes writes: a websocket has one writer at a time.
	mu   sync.Mutex
	done chan struct{}
}

func (e *execSession) send(f *execOutput) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
	return e.conn.WriteJSON(f)
}

// run runs the command until it exits or the operator goes away (which
// kills it).
func (e *execSession) run(c ClientExecAPI, allocID, task string, command []string, tty bool) (int, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stdinR, stdinW := io.Pipe()
	defer stdinR.Close()
	// Stdin is queued, so that a command that does not read it never
	// keeps the session from seeing the operator leave.
	stdinCh := make(chan []byte, execStdinQueue)
	go pumpStdin(stdinCh, stdinW)
	resize := make(chan driver.TerminalSize, 4)
	go e.receive(cancel, stdinCh, resize)
	go e.heartbeat(ctx)
	return c.ExecTask(ctx, allocID, task, &driver.ExecOptions{
		Command:  command,
		Tty:      tty,
		Stdin:    stdinR,
		Stdout:   &execWriter{s: e, stderr: false},
		Stderr:   &execWriter{s: e, stderr: true},
		ResizeCh: resize,
	})
}

// receive reads the operator's frames until the websocket ends; then it
// cancels the command.
func (e *execSession) receive(cancel context.CancelFunc, stdin chan<- []byte, resize chan<- driver.TerminalSize) {
	defer cancel()
	stdinOpen := true
	defer func() {
		if stdinOpen {
			close(stdin)
		}
	}()
	defer close(resize)
	for {
		var in execInput
		if err := e.conn.ReadJSON(&in); err != nil {
			var syntaxErr *json.SyntaxError
			if errors.As(err, &syntaxErr) {
				continue
			}
			return
		}
		switch {
		case in.Stdin != nil && stdinOpen:
			if len(in.Stdin.Data) > 0 {
				stdin <- in.Stdin.Data
			}
			if in.Stdin.Close {
				close(stdin)
				stdinOpen = false
			}
		case in.TTYSize != nil:
			select {
			case resize <- driver.TerminalSize{Height: in.TTYSize.Height, Width: in.TTYSize.Width}:
			default: // a newer size follows
			}
		}
	}
}

// execStdinQueue is how many stdin frames wait for the command to read
// them before the session stops reading frames.
const execStdinQueue = 256

// pumpStdin writes queued stdin to the command until the queue is closed
// (stdin ended, or the operator left) or the command stopped reading.
func pumpStdin(ch <-chan []byte, w *io.PipeWriter) {
	defer w.Close()
	for data := range ch {
		if _, err := w.Write(data); err != nil {
			for range ch {
			}
			return
		}
	}
}

func (e *execSession) heartbeat(ctx context.Context) {
	t := time.NewTicker(execHeartbeat)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			e.send(&execOutput{})
		}
	}
}

// finish reports the end of the streams and the exit code, then closes.
func (e *execSession) finish(code int) {
	e.send(&execOutput{Stdout: &execIO{Close: true}})
	e.send(&execOutput{Stderr: &execIO{Close: true}})
	out := &execOutput{Exited: true, Result: &struct {
		ExitCode int `json:"exit_code,omitempty"`
	}{ExitCode: code}}
	if e.send(out) == nil {
		e.closeWith(websocket.CloseNormalClosure, "")
	}
}

// closeWith sends a close frame; its text is cut to what a control frame
// carries.
func (e *execSession) closeWith(code int, text string) {
	if len(text) > 120 {
		text = text[:120]
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, text), time.Now().Add(5*time.Second))
}

// execWriter sends what a command writes on one stream as frames.
type execWriter struct {
	s      *execSession
	stderr bool
}

func (w *execWriter) Write(p []byte) (int, error) {
	data := append([]byte(nil), p...)
	f := &execOutput{Stdout: &execIO{Data: data}}
	if w.stderr {
		f = &execOutput{Stderr: &execIO{Data: data}}
	}
	if err := w.s.send(f); err != nil {
		return 0, err
	}
	return len(p), nil
}

// hijacker finds, under the agent's response wrappers (gzip, panic
// recovery), the connection's writer that can hand over the connection.
func hijacker(w http.ResponseWriter) http.ResponseWriter {
	for {
		if _, ok := w.(http.Hijacker); ok {
			return w
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return w
		}
		w = u.Unwrap()
	}
}
