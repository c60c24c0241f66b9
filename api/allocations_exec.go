package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// execHeartbeatInterval is how often Exec sends an empty frame, so that
// an idle session is not cut by proxies.
const execHeartbeatInterval = 10 * time.Second

// TerminalSize is the size of the terminal a tty session runs in.
type TerminalSize struct {
	Height int `json:"height,omitempty"`
	Width  int `json:"width,omitempty"`
}

// ExecStreamingIOOperation is data on one stream, or its end.
type ExecStreamingIOOperation struct {
	Data  []byte `json:"data,omitempty"`
	Close bool   `json:"close,omitempty"`
}

// ExecStreamingInput is a frame sent to the agent: stdin, a terminal
// size, or neither (a heartbeat).
type ExecStreamingInput struct {
	Stdin   *ExecStreamingIOOperation `json:"stdin,omitempty"`
	TTYSize *TerminalSize             `json:"tty_size,omitempty"`
}

// ExecStreamingExitResult is how the command ended.
type ExecStreamingExitResult struct {
	ExitCode int `json:"exit_code"`
}

// ExecStreamingOutput is a frame from the agent: output on a stream, or,
// last, the command's exit.
type ExecStreamingOutput struct {
	Stdout *ExecStreamingIOOperation `json:"stdout,omitempty"`
	Stderr *ExecStreamingIOOperation `json:"stderr,omitempty"`
	Exited bool                      `json:"exited,omitempty"`
	Result *ExecStreamingExitResult  `json:"result,omitempty"`
}

// Exec runs command in the task of a running allocation, over a websocket
// to /v1/client/allocation/:id/exec: stdin is sent until it ends, output
// is written to stdout and stderr (with tty, the terminal's output all
// goes to stdout, and terminal sizes are sent as they come on
// terminalSizeCh). It returns the command's exit code once it exited, or
// -2 and the error when the session failed or ctx ended (which ends the
// command too).
//
// The node's own agent is tried first, at the HTTP address it
// registered, then the agent this client talks to.
func (a *Allocations) Exec(ctx context.Context, alloc *Allocation, task string, tty bool, command []string,
	stdin io.Reader, stdout, stderr io.Writer, terminalSizeCh <-chan TerminalSize, q *QueryOptions) (exitCode int, err error) {
	if alloc == nil {
		return -2, errors.New("exec: allocation is required")
	}
	cmdJSON, err := json.Marshal(command)
	if err != nil {
		return -2, fmt.Errorf("exec: encoding command: %w", err)
	}
	r := a.client.newRequest(http.MethodGet, "/v1/client/allocation/"+escape(alloc.ID)+"/exec")
	q.apply(r)
	r.params.Set("task", task)
	r.params.Set("tty", strconv.FormatBool(tty))
	r.params.Set("command", string(cmdJSON))

	conn, err := a.client.dialExec(ctx, r, a.nodeAddress(alloc, q))
	if err != nil {
		return -2, err
	}
	defer conn.Close()
	s := &execStream{conn: conn}
	return s.run(ctx, stdin, stdout, stderr, terminalSizeCh)
}

// nodeAddress is the base URL of the agent of the node running alloc, ""
// when unknown.
func (a *Allocations) nodeAddress(alloc *Allocation, q *QueryOptions) string {
	if alloc.NodeID == "" {
		return ""
	}
	node, _, err := a.client.Nodes().Info(alloc.NodeID, q)
	if err != nil || node == nil || node.HTTPAddr == "" {
		return ""
	}
	return a.client.baseURL.Scheme + "://" + node.HTTPAddr
}

// dialExec opens the websocket, at the node's agent when nodeBase is set
// and answers, else at the client's agent.
func (c *Client) dialExec(ctx context.Context, r *request, nodeBase string) (*websocket.Conn, error) {
	dialer := websocket.Dialer{HandshakeTimeout: 30 * time.Second, Proxy: http.ProxyFromEnvironment}
	if t, ok := c.http.Transport.(*http.Transport); ok && t.TLSClientConfig != nil {
		dialer.TLSClientConfig = t.TLSClientConfig.Clone()
	}
	header := r.header.Clone()
	if r.token != "" {
		header.Set(HeaderToken, r.token)
	}
	target := c.url(r)
	if nodeBase != "" {
		nodeURL := nodeBase + c.baseURL.EscapedPath() + r.path + "?" + r.params.Encode()
		if conn, _, err := dialer.DialContext(ctx, wsURL(nodeURL), header); err == nil {
			return conn, nil
		}
	}
	conn, resp, err := dialer.DialContext(ctx, wsURL(target), header)
	if err != nil {
		if resp != nil {
			defer resp.Body.Close()
			text, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
			return nil, newUnexpectedResponseError(http.MethodGet, target, resp.StatusCode, resp.Header, text)
		}
		return nil, err
	}
	return conn, nil
}

// wsURL turns an http(s) URL into its ws(s) twin.
func wsURL(u string) string {
	if p, err := url.Parse(u); err == nil {
		switch p.Scheme {
		case "https":
			p.Scheme = "wss"
		default:
			p.Scheme = "ws"
		}
		return p.String()
	}
	return strings.Replace(u, "http", "ws", 1)
}

// execStream is one exec session's websocket.
type execStream struct {
	conn *websocket.Conn
	mu   sync.Mutex // one writer at a time
}

func (s *execStream) send(in *ExecStreamingInput) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conn.WriteJSON(in)
}

func (s *execStream) run(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer, sizes <-chan TerminalSize) (int, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sendErr := make(chan error, 1)
	if stdin != nil {
		go s.sendStdin(ctx, stdin, sendErr)
	} else {
		s.send(&ExecStreamingInput{Stdin: &ExecStreamingIOOperation{Close: true}})
	}
	go s.sendSizes(ctx, sizes)
	go s.heartbeat(ctx)

	type exit struct {
		code int
		err  error
	}
	done := make(chan exit, 1)
	go func() {
		code, err := s.receive(stdout, stderr)
		done <- exit{code, err}
	}()
	select {
	case <-ctx.Done():
		return -2, ctx.Err()
	case err := <-sendErr:
		return -2, fmt.Errorf("exec: sending stdin: %w", err)
	case e := <-done:
		return e.code, e.err
	}
}

// receive writes output frames until the exit frame. A close frame with a
// text is the agent's refusal, returned as an error with that text.
func (s *execStream) receive(stdout, stderr io.Writer) (int, error) {
	for {
		var out ExecStreamingOutput
		err := s.conn.ReadJSON(&out)
		if err != nil {
			var ce *websocket.CloseError
			if errors.As(err, &ce) && ce.Text != "" {
				return -2, errors.New(ce.Text)
			}
			if websocket.IsCloseError(err, websocket.CloseNormalClosure) {
				return -2, fmt.Errorf("exec: websocket closed before the exit code arrived: %w", err)
			}
			return -2, err
		}
		switch {
		case out.Stdout != nil && len(out.Stdout.Data) > 0 && stdout != nil:
			stdout.Write(out.Stdout.Data)
		case out.Stderr != nil && len(out.Stderr.Data) > 0 && stderr != nil:
			stderr.Write(out.Stderr.Data)
		case out.Exited && out.Result != nil:
			return out.Result.ExitCode, nil
		}
	}
}

func (s *execStream) sendStdin(ctx context.Context, stdin io.Reader, errCh chan<- error) {
	buf := make([]byte, 4096)
	for ctx.Err() == nil {
		n, err := stdin.Read(buf)
		if n > 0 {
			data := append([]byte(nil), buf[:n]...)
			if serr := s.send(&ExecStreamingInput{Stdin: &ExecStreamingIOOperation{Data: data}}); serr != nil {
				return // the receiving side reports the broken session
			}
		}
		if errors.Is(err, io.EOF) {
			s.send(&ExecStreamingInput{Stdin: &ExecStreamingIOOperation{Close: true}})
			return
		}
		if err != nil {
			errCh <- err
			return
		}
	}
}

func (s *execStream) sendSizes(ctx context.Context, sizes <-chan TerminalSize) {
	for {
		select {
		case <-ctx.Done():
			return
		case size, ok := <-sizes:
			if !ok {
				return
			}
			s.send(&ExecStreamingInput{TTYSize: &size})
		}
	}
}

func (s *execStream) heartbeat(ctx context.Context) {
	t := time.NewTicker(execHeartbeatInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.send(&ExecStreamingInput{})
		}
	}
}
