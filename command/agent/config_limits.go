package agent

import "time"

// Limits is the `limits` block: what one client may make an agent hold,
// with Nomad's keys and defaults, plus a per-client request rate on the
// HTTP API (not Nomad's). A client is an IP address, loopback included:
// every limit applies to every caller alike, so a local tool that opens
// many connections (a load generator) needs limits raised or turned off
// (0).
type Limits struct {
	// HTTPSHandshakeTimeout bounds a TLS handshake on the HTTP API
	// before the connection is closed (TLS on only).
	HTTPSHandshakeTimeout time.Duration `hcl:"https_handshake_timeout"`
	// HTTPMaxConnsPerClient bounds the HTTP connections one client may
	// hold open; one over it is answered 429 and closed. 0: no limit.
	HTTPMaxConnsPerClient int `hcl:"http_max_conns_per_client"`
	// RPCHandshakeTimeout bounds the wait for an RPC connection's
	// protocol byte and TLS handshake.
	RPCHandshakeTimeout time.Duration `hcl:"rpc_handshake_timeout"`
	// RPCMaxConnsPerClient bounds the RPC connections one client may hold
	// open; one over it is closed. 0: no limit.
	RPCMaxConnsPerClient int `hcl:"rpc_max_conns_per_client"`
	// HTTPRequestsPerSecond and HTTPRequestBurst rate-limit the HTTP
	// requests of each client (a token bucket per IP): one over them is
	// answered 429 with Retry-After. 0 requests per second: no limit
	// (the default); a burst of 0 means one second's worth.
	HTTPRequestsPerSecond float64 `hcl:"http_requests_per_second"`
	HTTPRequestBurst      int     `hcl:"http_request_burst"`
}

// DefaultLimits are Nomad's: 5s handshakes, 100 connections per client
// on each port; no request rate limit.
func DefaultLimits() Limits {
	return Limits{
		HTTPSHandshakeTimeout: 5 * time.Second,
		HTTPMaxConnsPerClient: 100,
		RPCHandshakeTimeout:   5 * time.Second,
		RPCMaxConnsPerClient:  100,
	}
}

// validate refuses negative limits.
func (l *Limits) validate(p *configProblems) {
	if l.HTTPSHandshakeTimeout < 0 {
		p.add("limits.https_handshake_timeout", "must be >= 0, got %s", l.HTTPSHandshakeTimeout)
	}
	if l.RPCHandshakeTimeout < 0 {
		p.add("limits.rpc_handshake_timeout", "must be >= 0, got %s", l.RPCHandshakeTimeout)
	}
	if l.HTTPMaxConnsPerClient < 0 {
		p.add("limits.http_max_conns_per_client", "must be >= 0 (0: no limit), got %d", l.HTTPMaxConnsPerClient)
	}
	if l.RPCMaxConnsPerClient < 0 {
		p.add("limits.rpc_max_conns_per_client", "must be >= 0 (0: no limit), got %d", l.RPCMaxConnsPerClient)
	}
	if l.HTTPRequestsPerSecond < 0 {
		p.add("limits.http_requests_per_second", "must be >= 0 (0: no limit), got %g", l.HTTPRequestsPerSecond)
	}
	if l.HTTPRequestBurst < 0 {
		p.add("limits.http_request_burst", "must be >= 0, got %d", l.HTTPRequestBurst)
	}
}
