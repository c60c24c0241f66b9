package nomad

import (
	"fmt"

	"github.com/opennomad/nomad/structs"
)

// forwardToServer serves a request meant for one server (named by its
// member name "<node>.<region>" or its node name) here when it names this server,
// else sends it to that server; see endpoints.Server.ForwardToServer.
func (s *Server) forwardToServer(method, serverID string, info structs.RPCInfo, args, reply interface{}) (bool, error) {
	if serverID == "" || serverID == s.memberName() || serverID == s.config.NodeName {
		return false, nil
	}
	if info.IsForwarded() {
		// The server that forwarded it took this one for another.
		return true, fmt.Errorf("%s: server %q: %w", method, serverID, structs.ErrNotFound)
	}
	// The peer book has every server that joined, by member name.
	p, ok := s.peers.byName(serverID)
	if !ok {
		p, ok = s.peers.byName(serverID + "." + s.config.Region)
	}
	if !ok || p.rpcAddr == "" || s.net.pool == nil {
		return true, fmt.Errorf("%s: no server %q: %w", method, serverID, structs.ErrNotFound)
	}
	info.SetForwarded()
	return true, s.net.pool.RPC(p.rpcAddr, method, args, reply)
}
