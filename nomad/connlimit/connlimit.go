// Package connlimit bounds the connections one client may hold open to
// a listener: the agents' `limits` block (http_max_conns_per_client,
// rpc_max_conns_per_client), as Nomad has it. A client is an IP address;
// every connection from it counts, loopback included, until it closes.
package connlimit

import (
	"net"
	"sync"
)

// Limiter counts open connections per client IP. The zero limit, or a
// nil *Limiter, admits everything. Safe for concurrent use.
type Limiter struct {
	max int

	mu   sync.Mutex
	open map[string]int
}

// NewLimiter admits at most max open connections per client IP; max <= 0
// is no limit.
func NewLimiter(max int) *Limiter {
	return &Limiter{max: max, open: make(map[string]int)}
}

// Take admits one more connection from addr's IP, and returns the release
// to call once when it closes; ok is false, with nothing taken, when the
// client already holds the maximum.
func (l *Limiter) Take(addr net.Addr) (release func(), ok bool) {
	if l == nil || l.max <= 0 {
		return func() {}, true
	}
	ip := ClientIP(addr)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[ip] >= l.max {
		return nil, false
	}
	l.open[ip]++
	var once sync.Once
	return func() { once.Do(func() { l.release(ip) }) }, true
}

func (l *Limiter) release(ip string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[ip] <= 1 {
		delete(l.open, ip)
		return
	}
	l.open[ip]--
}

// Open is how many connections the client at addr holds.
func (l *Limiter) Open(addr net.Addr) int {
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open[ClientIP(addr)]
}

// ClientIP is the IP of addr ("10.0.0.1" of "10.0.0.1:4646"), or the
// whole address when it has no port.
func ClientIP(addr net.Addr) string {
	if tcp, ok := addr.(*net.TCPAddr); ok {
		return tcp.IP.String()
	}
	s := addr.String()
	if host, _, err := net.SplitHostPort(s); err == nil {
		return host
	}
	return s
}
