package agent

import (
	"fmt"
	"net/http"
	"time"

	"github.com/opennomad/nomad/acl"
	"github.com/opennomad/nomad/nomad/clock"
)

// /v1/agent/debug/clock is a fault-injection switch (an extension, not
// Nomad's): it moves what this server reads as the time, as an
// operator's `date -s` or a bad NTP step would move the host's clock, so
// that a harness can jump one server's clock and watch the cluster. It
// exists only on a server agent started with enable_debug, and needs
// agent write.

// debugClockNeed is agent write on an agent with enable_debug; without
// it the route is not there (404), whatever the token.
var debugClockNeed = need{Doc: "agent write, and only with enable_debug",
	check: func(s *HTTPServer, a *acl.ACL, r *http.Request) error {
		if !s.agent.EnableDebug {
			return codedError(http.StatusNotFound, "Invalid URL path")
		}
		return agentWrite.check(s, a, r)
	}}

// clockSkewer is a server whose clock can be moved.
type clockSkewer interface {
	ClockSkew() *clock.Skewed
}

// debugClock is the body of the route: the offset from the host's clock,
// as a Go duration ("90s", "-1h").
type debugClock struct {
	Offset string
}

// agentDebugClockRequest serves GET (the offset in force) and PUT/POST
// (set it; "0s" puts the clock back).
func (s *HTTPServer) agentDebugClockRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	sk, _ := s.cfg.Server.(clockSkewer)
	var skew *clock.Skewed
	if sk != nil {
		skew = sk.ClockSkew()
	}
	if skew == nil {
		return nil, codedError(http.StatusNotImplemented, "this agent's server clock cannot be moved (a server agent with enable_debug only)")
	}
	switch r.Method {
	case http.MethodGet:
	case http.MethodPut, http.MethodPost:
		var body debugClock
		if err := decodeBody(r, &body); err != nil {
			return nil, err
		}
		d, err := time.ParseDuration(body.Offset)
		if err != nil {
			return nil, codedError(http.StatusBadRequest, fmt.Sprintf("Offset: must be a duration such as \"90s\" or \"-1h\": %v", err))
		}
		skew.SetOffset(d)
		s.logger.Warn("server clock moved for fault injection", "offset", d)
	default:
		return nil, errInvalidMethod
	}
	return debugClock{Offset: skew.Offset().String()}, nil
}
