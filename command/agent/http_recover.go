package agent

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime/debug"
)

// panicAnswer is the body of the 500 a panicking handler answers with. It
// is generic on purpose: a panic's value and stack describe the agent's
// insides, which belong in its log, not in a response.
const panicAnswer = "Internal error: the request could not be served; the agent's log has the details"

// recoverPanics turns a panic in next into a 500 answer and an error in
// the agent's log with the panic's stack. Without it net/http would log
// the panic to its own error log and drop the connection, so the caller
// would get no answer at all.
//
// Two panics are passed on: http.ErrAbortHandler, which a handler raises
// on purpose to cut the connection; and any panic after the response was
// started, as a status can no longer be sent and a silently truncated
// body could be taken for a whole one. That one is logged here and
// becomes http.ErrAbortHandler, so net/http closes the connection without
// logging it a second time.
func (s *HTTPServer) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &startedWriter{ResponseWriter: w}
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if err, ok := v.(error); ok && errors.Is(err, http.ErrAbortHandler) {
				panic(v)
			}
			s.logger.Error("request handler panicked",
				"method", r.Method, "path", r.URL.Path, "panic", fmt.Sprint(v),
				"response_started", sw.started, "stack", string(debug.Stack()))
			if sw.started {
				panic(http.ErrAbortHandler)
			}
			// Headers a handler set before it panicked may describe a
			// body it never wrote.
			for k := range w.Header() {
				w.Header().Del(k)
			}
			writeError(w, http.StatusInternalServerError, panicAnswer)
		}()
		next.ServeHTTP(sw, r)
	})
}

// startedWriter records whether a response was started (its header
// sent), which decides how a panic can still be answered.
type startedWriter struct {
	http.ResponseWriter
	started bool
}

func (w *startedWriter) WriteHeader(code int) {
	// 1xx answers are informational; the real status is still to come.
	if code >= 200 {
		w.started = true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *startedWriter) Write(b []byte) (int, error) {
	w.started = true
	return w.ResponseWriter.Write(b)
}

// Flush sends the header if it was not sent yet, so it starts the
// response too. The gzip writer finds it by type assertion.
func (w *startedWriter) Flush() {
	w.started = true
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// ReadFrom keeps net/http's sendfile path for file answers (fs cat).
func (w *startedWriter) ReadFrom(r io.Reader) (int64, error) {
	w.started = true
	if rf, ok := w.ResponseWriter.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(w.ResponseWriter, r)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *startedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
