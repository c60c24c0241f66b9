package agent

import (
	"compress/gzip"
	"net/http"
	"strings"
)

// gzipHandler compresses responses for clients that accept gzip. The
// writer is created on the first byte written, so an empty response
// stays empty; Flush flushes the compressor too, so streamed responses
// (the event stream) arrive line by line.
func gzipHandler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("Vary", "Accept-Encoding")
		if !acceptsGzip(r) {
			next.ServeHTTP(w, r)
			return
		}
		gw := &gzipWriter{ResponseWriter: w}
		defer gw.close()
		next.ServeHTTP(gw, r)
	})
}

func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		enc, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(enc), "gzip") && !strings.Contains(strings.ReplaceAll(params, " ", ""), "q=0") {
			return true
		}
	}
	return false
}

type gzipWriter struct {
	http.ResponseWriter
	gz          *gzip.Writer
	wroteHeader bool
	code        int
	// identity: the handler's body is compressed already (see
	// sendUncompressed).
	identity bool
}

// sendUncompressed makes the writer send the body as it is. Only before
// the header is written.
func (g *gzipWriter) sendUncompressed() {
	if !g.wroteHeader {
		g.identity = true
	}
}

// sendUncompressed asks the gzip writer under w, if any, not to compress
// the answer: a body compressed already (a snapshot archive) would cost
// the agent a second pass of deflate over it, a second or so per 50 MB,
// for nothing.
func sendUncompressed(w http.ResponseWriter) {
	for {
		if g, ok := w.(*gzipWriter); ok {
			g.sendUncompressed()
			return
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return
		}
		w = u.Unwrap()
	}
}

func (g *gzipWriter) WriteHeader(code int) {
	if g.wroteHeader {
		return
	}
	g.wroteHeader = true
	g.code = code
	// Bodiless answers, and bodies compressed already, are sent as they
	// are; anything else is compressed, errors included.
	if code != http.StatusNoContent && code != http.StatusNotModified && !g.identity {
		h := g.Header()
		h.Del("Content-Length")
		h.Set("Content-Encoding", "gzip")
	}
	g.ResponseWriter.WriteHeader(code)
}

func (g *gzipWriter) Write(b []byte) (int, error) {
	if !g.wroteHeader {
		g.WriteHeader(http.StatusOK)
	}
	if g.code == http.StatusNoContent || g.code == http.StatusNotModified || g.identity {
		return g.ResponseWriter.Write(b)
	}
	if g.gz == nil {
		g.gz = gzip.NewWriter(g.ResponseWriter)
	}
	return g.gz.Write(b)
}

// Flush pushes compressed bytes to the client. A flush before any body
// still sends the gzip header: clients that open a gzip reader on a
// stream block until they have it.
func (g *gzipWriter) Flush() {
	if g.gz == nil && g.wroteHeader && !g.identity && g.Header().Get("Content-Encoding") == "gzip" {
		g.gz = gzip.NewWriter(g.ResponseWriter)
	}
	if g.gz != nil {
		g.gz.Flush()
	}
	if f, ok := g.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (g *gzipWriter) Unwrap() http.ResponseWriter { return g.ResponseWriter }

// close ends the gzip stream. A compressed answer with no body still
// gets an empty gzip stream, which is what its Content-Encoding promises.
func (g *gzipWriter) close() {
	if g.gz == nil && g.wroteHeader && !g.identity && g.Header().Get("Content-Encoding") == "gzip" {
		g.gz = gzip.NewWriter(g.ResponseWriter)
	}
	if g.gz != nil {
		g.gz.Close()
	}
}
