package agent

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/shoenig/test/must"
)

// panickingHTTP is a test API server with routes that panic, and its log.
func panickingHTTP(t *testing.T) (*testHTTP, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	h := newTestHTTP(t, func(c *HTTPServerConfig) {
		c.Logger = hclog.New(&hclog.LoggerOptions{Output: logs, Level: hclog.Debug})
	})
	// Through wrap, as the API's handlers are.
	h.http.mux.HandleFunc("/v1/test/nil-deref", h.http.wrap(func(w http.ResponseWriter, r *http.Request) (interface{}, error) {
		var job *struct{ ID string }
		return job.ID, nil
	}))
	// Registered directly, as the event stream and pprof are.
	h.http.mux.HandleFunc("/v1/test/plain", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Nomad-Index", "7")
		panic("boom in plain handler")
	})
	h.http.mux.HandleFunc("/v1/test/half-written", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"partial":`))
		w.(http.Flusher).Flush()
		panic("boom after the header")
	})
	h.http.mux.HandleFunc("/v1/test/abort", func(w http.ResponseWriter, r *http.Request) {
		panic(http.ErrAbortHandler)
	})
	return h, logs
}

// TestHTTP_PanicAnswers500 checks that a handler that panics answers 500
// with a generic message (no panic value, no stack) whether or not it
// runs through wrap and whether or not gzip is asked for, that the panic
// and its stack are in the agent's log, and that the agent keeps serving.
func TestHTTP_PanicAnswers500(t *testing.T) {
	cases := []struct {
		path, acceptEncoding, logged string
	}{
		{"/v1/test/nil-deref", "", "nil pointer dereference"},
		{"/v1/test/nil-deref", "gzip", "nil pointer dereference"},
		{"/v1/test/plain", "", "boom in plain handler"},
		{"/v1/test/plain", "gzip", "boom in plain handler"},
	}
	for _, tc := range cases {
		t.Run(tc.path+" "+tc.acceptEncoding, func(t *testing.T) {
			h, logs := panickingHTTP(t)
			req, err := http.NewRequest("GET", h.srv.URL+tc.path, nil)
			must.NoError(t, err)
			if tc.acceptEncoding != "" {
				req.Header.Set("Accept-Encoding", tc.acceptEncoding)
			}
			resp, err := http.DefaultTransport.RoundTrip(req)
			must.NoError(t, err, must.Sprint("the connection was dropped"))
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			must.NoError(t, err)

			must.Eq(t, http.StatusInternalServerError, resp.StatusCode)
			must.Eq(t, panicAnswer, string(body))
			must.Eq(t, "text/plain; charset=utf-8", resp.Header.Get("Content-Type"))
			must.Eq(t, "", resp.Header.Get("X-Nomad-Index"))
			must.Eq(t, "", resp.Header.Get("Content-Encoding"))

			log := logs.String()
			must.StrContains(t, log, "request handler panicked")
			must.StrContains(t, log, tc.path)
			must.StrContains(t, log, tc.logged)
			// The stack names the handler that panicked.
			must.StrContains(t, log, "http_recover_test.go")

			resp2, body2 := h.do("GET", "/v1/agent/self", "")
			must.Eq(t, http.StatusOK, resp2.StatusCode, must.Sprint(body2))
		})
	}
}

// A handler that panics after its answer started cannot change the
// status: the connection is cut so the client cannot take the partial
// body for a whole one, and the panic is still logged.
func TestHTTP_PanicAfterAnswerStartedCutsTheConnection(t *testing.T) {
	h, logs := panickingHTTP(t)
	resp, err := http.Get(h.srv.URL + "/v1/test/half-written")
	must.NoError(t, err)
	_, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	must.Eq(t, http.StatusOK, resp.StatusCode)
	must.Error(t, err)
	log := logs.String()
	must.StrContains(t, log, "boom after the header")
	must.StrContains(t, log, "response_started=true")
}

// http.ErrAbortHandler is a deliberate abort: passed on, not answered and
// not logged as a failure.
func TestHTTP_ErrAbortHandlerIsPassedOn(t *testing.T) {
	h, logs := panickingHTTP(t)
	resp, err := http.Get(h.srv.URL + "/v1/test/abort")
	if err == nil {
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	must.Error(t, err)
	must.False(t, strings.Contains(logs.String(), "request handler panicked"), must.Sprint(logs.String()))
}
