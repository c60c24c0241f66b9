package agent

import (
	"crypto/tls"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	metrics "github.com/hashicorp/go-metrics"
	"golang.org/x/time/rate"

	"github.com/opennomad/nomad/nomad/connlimit"
)

// The HTTP side of the `limits` block: connections per client, the TLS
// handshake's deadline, and a request rate per client.

// Metric names.
var (
	metricHTTPConnRefused     = []string{"http", "conn_refused"}
	metricHTTPRequestRefused  = []string{"http", "request_refused"}
	metricHTTPSHandshakeFails = []string{"http", "tls_handshake_failed"}
)

// tooManyConns is the whole answer to a connection over
// http_max_conns_per_client, written before it is closed, as Nomad does.
const tooManyConns = "HTTP/1.1 429 Too Many Requests\r\n" +
	"Content-Type: text/plain; charset=utf-8\r\nConnection: close\r\nContent-Length: 40\r\n\r\n" +
	"Your IP is issuing too many connections."

// limitHTTPListener applies limits to the API's listener: at most
// HTTPMaxConnsPerClient connections per client IP (one over is answered
// 429 in plain HTTP, closed unanswered under TLS, where plain bytes mean
// nothing), and with tlsConfig a TLS handshake that must finish within
// HTTPSHandshakeTimeout.
func limitHTTPListener(ln net.Listener, limits Limits, tlsConfig *tls.Config) net.Listener {
	ln = connlimit.NewListener(ln, limits.HTTPMaxConnsPerClient, func(c net.Conn) {
		metrics.IncrCounter(metricHTTPConnRefused, 1)
		if tlsConfig == nil {
			_ = c.SetWriteDeadline(time.Now().Add(time.Second))
			_, _ = c.Write([]byte(tooManyConns))
		}
	})
	if tlsConfig == nil {
		return ln
	}
	return newHandshakeListener(ln, tlsConfig, limits.HTTPSHandshakeTimeout)
}

// handshakeListener does the server side of each TLS handshake on a
// goroutine of its own, within a deadline, and hands out only the
// connections whose handshake finished: a client that connects and
// stalls holds a connection for the deadline at most and never delays
// the others. (http.Server would bound the handshake by its own read
// timeouts, not by this setting.)
type handshakeListener struct {
	inner   net.Listener
	config  *tls.Config
	timeout time.Duration

	ready chan net.Conn
	errs  chan error
	done  chan struct{}
	once  sync.Once
}

func newHandshakeListener(ln net.Listener, config *tls.Config, timeout time.Duration) *handshakeListener {
	if timeout <= 0 {
		timeout = DefaultLimits().HTTPSHandshakeTimeout
	}
	l := &handshakeListener{inner: ln, config: config, timeout: timeout,
		ready: make(chan net.Conn), errs: make(chan error), done: make(chan struct{})}
	go l.acceptLoop()
	return l
}

// acceptLoop accepts until the inner listener fails for good; a
// temporary error is passed on to Accept (http.Server waits and calls
// again) and accepting goes on.
func (l *handshakeListener) acceptLoop() {
	for {
		conn, err := l.inner.Accept()
		if err != nil {
			select {
			case l.errs <- err:
			case <-l.done:
				return
			}
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				continue
			}
			return
		}
		go l.handshake(conn)
	}
}

func (l *handshakeListener) handshake(conn net.Conn) {
	tc := tls.Server(conn, l.config)
	_ = tc.SetDeadline(time.Now().Add(l.timeout))
	if err := tc.Handshake(); err != nil {
		metrics.IncrCounter(metricHTTPSHandshakeFails, 1)
		// A plain HTTP request to the HTTPS port gets the answer
		// http.Server gives it when it does the handshake itself.
		var plain tls.RecordHeaderError
		if errors.As(err, &plain) && plain.Conn != nil && looksLikeHTTP(plain.RecordHeader[:]) {
			_, _ = io.WriteString(plain.Conn, "HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n")
		}
		tc.Close()
		return
	}
	_ = tc.SetDeadline(time.Time{})
	select {
	case l.ready <- tc:
	case <-l.done:
		tc.Close()
	}
}

// looksLikeHTTP reports whether the first bytes of a connection are an
// HTTP method.
func looksLikeHTTP(hdr []byte) bool {
	switch string(hdr) {
	case "GET /", "HEAD ", "POST ", "PUT /", "OPTIO", "DELET", "PATCH":
		return true
	}
	return false
}

func (l *handshakeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ready:
		return c, nil
	case err := <-l.errs:
		return nil, err
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *handshakeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return l.inner.Close()
}

func (l *handshakeListener) Addr() net.Addr { return l.inner.Addr() }

// rateLimiter is a token bucket per client IP. Buckets of clients that
// have not been seen for idleBucket are dropped once the table has
// doubled since the last sweep, so that a scan of many addresses cannot
// grow it without bound.
type rateLimiter struct {
	limit rate.Limit
	burst int
	now   func() time.Time

	mu        sync.Mutex
	buckets   map[string]*clientBucket
	sweptSize int
}

type clientBucket struct {
	limiter  *rate.Limiter
	lastSeen time.Time
}

const (
	idleBucket    = time.Minute
	minSweepTable = 1024
)

// newRateLimiter allows perSecond requests per client with bursts of
// burst (0: one second's worth, at least 1); nil when perSecond is 0.
func newRateLimiter(perSecond float64, burst int, now func() time.Time) *rateLimiter {
	if perSecond <= 0 {
		return nil
	}
	if burst <= 0 {
		burst = max(int(math.Ceil(perSecond)), 1)
	}
	return &rateLimiter{limit: rate.Limit(perSecond), burst: burst, now: now,
		buckets: make(map[string]*clientBucket), sweptSize: minSweepTable}
}

// allow takes a token of client's bucket; when there is none it reports
// how long until there is one.
func (r *rateLimiter) allow(client string) (ok bool, wait time.Duration) {
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	b := r.buckets[client]
	if b == nil {
		if len(r.buckets) >= 2*r.sweptSize {
			r.sweep(now)
		}
		b = &clientBucket{limiter: rate.NewLimiter(r.limit, r.burst)}
		r.buckets[client] = b
	}
	b.lastSeen = now
	if b.limiter.AllowN(now, 1) {
		return true, 0
	}
	res := b.limiter.ReserveN(now, 1)
	wait = res.DelayFrom(now)
	res.CancelAt(now)
	return false, wait
}

func (r *rateLimiter) sweep(now time.Time) {
	for k, b := range r.buckets {
		if now.Sub(b.lastSeen) > idleBucket {
			delete(r.buckets, k)
		}
	}
	r.sweptSize = max(len(r.buckets), minSweepTable)
}

// rateLimit answers 429, with Retry-After, to a client over its rate.
func (s *HTTPServer) rateLimit(next http.Handler) http.Handler {
	limiter := newRateLimiter(s.agent.Limits.HTTPRequestsPerSecond, s.agent.Limits.HTTPRequestBurst, time.Now)
	if limiter == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		client := r.RemoteAddr
		if host, _, err := net.SplitHostPort(client); err == nil {
			client = host
		}
		if ok, wait := limiter.allow(client); !ok {
			metrics.IncrCounter(metricHTTPRequestRefused, 1)
			setRetryAfter(w, wait)
			writeError(w, http.StatusTooManyRequests, "too many requests from "+client+": over "+
				strconv.FormatFloat(float64(limiter.limit), 'g', -1, 64)+" per second")
			return
		}
		next.ServeHTTP(w, r)
	})
}
