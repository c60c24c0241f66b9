package agent

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/metricstest"
	"github.com/opennomad/nomad/tlsconf/tlsconftest"
)

// serveLimited serves h's API on a loopback listener with limits applied.
func serveLimited(t *testing.T, h *testHTTP, limits Limits, tlsConfig *tls.Config) string {
	t.Helper()
	ln := listen(t)
	h.http.Start(limitHTTPListener(ln, limits, tlsConfig))
	t.Cleanup(func() { h.http.Shutdown(context.Background()) })
	return ln.Addr().String()
}

// A client's connection over http_max_conns_per_client is answered 429
// and closed; its open ones keep working.
func TestHTTPLimits_ConnsPerClient(t *testing.T) {
	sink := metricstest.WithInmem(t)
	h := newTestHTTP(t)
	addr := serveLimited(t, h, Limits{HTTPMaxConnsPerClient: 2}, nil)

	health := func(c net.Conn) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("GET", "http://"+addr+"/v1/agent/health", nil)
		must.NoError(t, req.Write(c))
		resp, err := http.ReadResponse(bufio.NewReader(c), req)
		must.NoError(t, err)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	var open []net.Conn
	for range 3 {
		c, err := net.Dial("tcp", addr)
		must.NoError(t, err)
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		t.Cleanup(func() { c.Close() })
		open = append(open, c)
	}
	must.Eq(t, http.StatusOK, health(open[0]).StatusCode)
	must.Eq(t, http.StatusOK, health(open[1]).StatusCode)

	resp, err := http.ReadResponse(bufio.NewReader(open[2]), nil)
	must.NoError(t, err)
	must.Eq(t, http.StatusTooManyRequests, resp.StatusCode)
	body, _ := io.ReadAll(resp.Body)
	must.Eq(t, "Your IP is issuing too many connections.", string(body))
	must.Eq(t, 1.0, metricstest.Counter(t, sink, "nomad.http.conn_refused"))
	must.Eq(t, http.StatusOK, health(open[0]).StatusCode)
}

// Over HTTPS, a connection that never completes its handshake is closed
// after https_handshake_timeout, while others are served.
func TestHTTPLimits_HTTPSHandshakeTimeout(t *testing.T) {
	ca := tlsconftest.NewCA(t)
	pair := ca.Server(t, "global")
	cert, err := tls.LoadX509KeyPair(pair.CertFile, pair.KeyFile)
	must.NoError(t, err)
	h := newTestHTTP(t)
	addr := serveLimited(t, h, Limits{HTTPSHandshakeTimeout: 100 * time.Millisecond},
		&tls.Config{Certificates: []tls.Certificate{cert}})

	stalled, err := net.Dial("tcp", addr)
	must.NoError(t, err)
	defer stalled.Close()

	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: "server.global.nomad"}}}
	resp, err := client.Get("https://" + addr + "/v1/agent/health")
	must.NoError(t, err)
	resp.Body.Close()
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint("a stalled handshake holds up no one"))

	_ = stalled.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err = stalled.Read(make([]byte, 1))
	must.ErrorIs(t, err, io.EOF, must.Sprint("the stalled connection is closed after the timeout"))
}

// The token bucket, on an injected clock: a burst, then one request per
// 1/rate, and each client has its own bucket.
func TestRateLimiter(t *testing.T) {
	now := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)
	r := newRateLimiter(2, 3, func() time.Time { return now })
	for range 3 {
		ok, _ := r.allow("10.0.0.1")
		must.True(t, ok)
	}
	ok, wait := r.allow("10.0.0.1")
	must.False(t, ok)
	must.Eq(t, 500*time.Millisecond, wait)
	ok, _ = r.allow("10.0.0.2")
	must.True(t, ok, must.Sprint("another client has its own bucket"))

	now = now.Add(500 * time.Millisecond)
	ok, _ = r.allow("10.0.0.1")
	must.True(t, ok)
	ok, _ = r.allow("10.0.0.1")
	must.False(t, ok)

	must.Nil(t, newRateLimiter(0, 5, time.Now), must.Sprint("0 requests per second is no limit"))
	must.Eq(t, 3, newRateLimiter(2.5, 0, time.Now).burst, must.Sprint("a burst of 0 is one second's worth"))
}

// Idle clients' buckets are dropped once the table grows.
func TestRateLimiter_DropsIdleBuckets(t *testing.T) {
	now := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)
	r := newRateLimiter(1, 1, func() time.Time { return now })
	for i := range 2 * minSweepTable {
		r.allow(net.IPv4(10, 0, byte(i>>8), byte(i)).String())
	}
	now = now.Add(2 * idleBucket)
	r.allow("10.1.0.1")
	must.Eq(t, 1, len(r.buckets))
}

// Over http_requests_per_second a request is answered 429 with the wait
// in Retry-After.
func TestHTTPLimits_RequestRate(t *testing.T) {
	sink := metricstest.WithInmem(t)
	h := newTestHTTP(t, func(c *HTTPServerConfig) {
		c.Agent.Limits.HTTPRequestsPerSecond = 0.01 // one per 100s
		c.Agent.Limits.HTTPRequestBurst = 1
	})
	resp, _ := h.do("GET", "/v1/agent/health", "")
	must.Eq(t, http.StatusOK, resp.StatusCode)
	resp, body := h.do("GET", "/v1/agent/health", "")
	must.Eq(t, http.StatusTooManyRequests, resp.StatusCode)
	must.Eq(t, "100", resp.Header.Get("Retry-After"))
	must.StrContains(t, body, "too many requests from 127.0.0.1")
	must.Eq(t, 1.0, metricstest.Counter(t, sink, "nomad.http.request_refused"))
}
