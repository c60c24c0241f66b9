package nomad

import (
	"errors"
	"fmt"
	"time"

	"github.com/opennomad/nomad/nomad/rpcnet"
	"github.com/opennomad/nomad/structs"
)

// forwardRetryDelay is how long a request waiting for a leader sleeps
// between attempts. An election takes a heartbeat timeout or two, so a
// short delay answers soon after it without flooding anyone.
const forwardRetryDelay = 25 * time.Millisecond

// errLeaderUnknown is an attempt that found no leader to forward to.
var errLeaderUnknown = errors.New("leader unknown")

// forward decides where a request is served; every endpoint calls it
// first. A request naming another region goes to a server of that region
// (forwardRegion). It returns false when this server must serve the
// request itself:
// it leads (once its leadership is established), or the request is a
// read that accepts stale data. Otherwise
// it returns true with the outcome of serving it at the leader: the
// request goes there through the pool, marked forwarded.
//
// While no leader is known, or the one asked turns out not to lead any
// more, or cannot be reached before the request left, the request is
// tried again every forwardRetryDelay for up to Cluster.RPCHoldTimeout;
// then it fails with structs.ErrNoLeader. A read is also retried when the
// connection failed after it was sent; a write is not, as the leader may
// have applied it. A forwarded request that reaches a server that does
// not lead is not forwarded again: it fails at once, and the server that
// forwarded it retries.
func (s *Server) forward(method string, info structs.RPCInfo, args, reply interface{}) (bool, error) {
	if region := info.RequestRegion(); region != "" && region != s.config.Region {
		return true, s.forwardRegion(method, region, info, args, reply)
	}
	if info.IsRead() && info.AllowStaleRead() {
		return false, nil
	}
	// The leader serves once it established itself: a read before its
	// barrier could miss committed writes of the previous term.
	if s.IsLeader() && s.waitLeaderReady() {
		return false, nil
	}
	if info.IsForwarded() || s.net.pool == nil {
		return true, fmt.Errorf("%s: %w", method, structs.ErrNoLeader)
	}
	deadline := time.Now().Add(s.config.Cluster.RPCHoldTimeout)
	for {
		err := s.forwardToLeader(method, info, args, reply)
		if err == nil || !retryForward(err, info) {
			return true, err
		}
		if !time.Now().Before(deadline) || !s.sleepCtx(forwardRetryDelay) {
			switch {
			case errors.Is(err, errLeaderUnknown):
				err = fmt.Errorf("%s: %w", method, structs.ErrNoLeader)
			case errors.Is(err, rpcnet.ErrNotSent):
				// The leader Raft last knew is gone and none replaced it.
				err = fmt.Errorf("%s: %w (last known leader unreachable: %v)", method, structs.ErrNoLeader, err)
			}
			return true, err
		}
		if s.IsLeader() && s.waitLeaderReady() {
			return false, nil
		}
	}
}

// forwardToLeader sends the request to the leader Raft knows of.
func (s *Server) forwardToLeader(method string, info structs.RPCInfo, args, reply interface{}) error {
	addr, id := s.raft.LeaderWithID()
	if id == "" || string(id) == s.id {
		return errLeaderUnknown
	}
	info.SetForwarded()
	return s.net.pool.RPC(s.peerAddr(id, addr), method, args, reply)
}

// retryForward reports whether a failed forward may be tried again.
func retryForward(err error, info structs.RPCInfo) bool {
	switch {
	case errors.Is(err, errLeaderUnknown), errors.Is(err, structs.ErrNoLeader),
		errors.Is(err, rpcnet.ErrNotSent):
		return true
	case errors.Is(err, rpcnet.ErrConnection):
		return info.IsRead()
	}
	return false
}

// sleepCtx waits d, or less when the server shuts down (then false).
func (s *Server) sleepCtx(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.shutdownCtx.Done():
		return false
	}
}
