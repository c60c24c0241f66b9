package nomad

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/opennomad/nomad/nomad/rpcnet"
	"github.com/opennomad/nomad/structs"
)

// Regions are the regions with an alive server in gossip, sorted; only
// this server's own when it runs no gossip.
func (s *Server) Regions() []string {
	if m := s.net.membership; m != nil {
		return m.Regions()
	}
	return []string{s.config.Region}
}

// forwardRegion sends a request for another region to one of that
// region's alive servers, picked at random so that the requests of a
// region spread over its servers; that server serves it or forwards it
// to its own leader, as it would a request of its own region. The local
// leader plays no part. A region no alive server of which gossip knows
// fails with structs.ErrNoRegionPath.
//
// The request is not marked forwarded: that mark tells a server it was
// sent to the leader and must not send it on, while the server reached
// here may well be a follower of its region. It cannot come back either,
// as it is now in its own region.
func (s *Server) forwardRegion(method, region string, info structs.RPCInfo, args, reply interface{}) error {
	var addrs []string
	pool := s.regionPool(region)
	if m := s.net.membership; m != nil && pool != nil {
		for _, info := range m.RegionServers(region) {
			addrs = append(addrs, info.RPCAddr)
		}
	}
	if len(addrs) == 0 {
		return fmt.Errorf("%w %q", ErrNoRegionPath, region)
	}
	// A server that went away since gossip last heard of it is skipped
	// while the request has not reached it.
	var err error
	for _, i := range rand.Perm(len(addrs)) {
		err = pool.RPC(addrs[i], method, args, reply)
		if err == nil || !retryOtherServer(err, info) {
			return err
		}
	}
	return err
}

// regionPool is the pool to region's servers: the server's own pool,
// unless their connections must check that region's name; nil without a
// network.
func (s *Server) regionPool(region string) *rpcnet.Pool {
	wrap := s.config.Cluster.RegionTLSWrap
	if wrap == nil || s.net.pool == nil {
		return s.net.pool
	}
	n := &s.net
	n.regionMu.Lock()
	defer n.regionMu.Unlock()
	if n.closed {
		return nil
	}
	if p, ok := n.regionPools[region]; ok {
		return p
	}
	pc := s.config.Cluster.Pool
	pc.Logger = s.logger
	pc.TLSWrap = wrap(region)
	p := rpcnet.NewPool(pc)
	if n.regionPools == nil {
		n.regionPools = make(map[string]*rpcnet.Pool)
	}
	n.regionPools[region] = p
	return p
}

// closeRegionPools ends the calls to other regions; no pool is made after.
func (s *Server) closeRegionPools() {
	n := &s.net
	n.regionMu.Lock()
	defer n.regionMu.Unlock()
	n.closed = true
	for _, p := range n.regionPools {
		p.Close()
	}
}

// retryOtherServer reports whether a request that failed at one server of
// a region may be sent to another: one that never left, or a read whose
// connection failed (a write may have been applied).
func retryOtherServer(err error, info structs.RPCInfo) bool {
	return errors.Is(err, rpcnet.ErrNotSent) || (info.IsRead() && errors.Is(err, rpcnet.ErrConnection))
}
