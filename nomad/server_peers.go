package nomad

import (
	"net"
	"strconv"
	"sync"

	"github.com/hashicorp/raft"
)

// peerInfo is what the cluster knows of a server beyond its Raft ID and
// address: the RPC address agents reach it at, and its node name.
type peerInfo struct {
	rpcAddr string
	name    string
}

// peerBook maps Raft server IDs to peerInfo. The server enters itself;
// the membership layer (and multi-server tests) enter the others with
// SetPeer. Safe for concurrent use.
type peerBook struct {
	mu   sync.RWMutex
	byID map[raft.ServerID]peerInfo
}

func (b *peerBook) set(id raft.ServerID, p peerInfo) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.byID == nil {
		b.byID = make(map[raft.ServerID]peerInfo)
	}
	b.byID[id] = p
}

func (b *peerBook) get(id raft.ServerID) (peerInfo, bool) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	p, ok := b.byID[id]
	return p, ok
}

// byName finds the server named name ("<node>.<region>").
func (b *peerBook) byName(name string) (peerInfo, bool) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	for _, p := range b.byID {
		if p.name == name {
			return p, true
		}
	}
	return peerInfo{}, false
}

// SetPeer records the RPC address ("host:port") and node name
// ("<name>.<region>") of the server with Raft ID id, so that
// Status.Leader, Status.Peers and the Raft configuration report it by
// the address agents reach it at. The membership layer calls it as
// servers join.
func (s *Server) SetPeer(id, rpcAddr, name string) {
	s.peers.set(raft.ServerID(id), peerInfo{rpcAddr: rpcAddr, name: name})
}

// peerAddr is the RPC address of the server with Raft ID id, or its Raft
// address when none is known.
func (s *Server) peerAddr(id raft.ServerID, raftAddr raft.ServerAddress) string {
	if p, ok := s.peers.get(id); ok && p.rpcAddr != "" {
		return p.rpcAddr
	}
	return string(raftAddr)
}

// memberName is this server's name in membership: "<node>.<region>".
func (s *Server) memberName() string {
	return s.config.NodeName + "." + s.config.Region
}

// rpcAddr is where agents reach this server: its advertised RPC address,
// else its Raft address.
func (s *Server) rpcAddr() string {
	if s.config.RPCAdvertise != "" {
		return s.config.RPCAdvertise
	}
	return string(s.raftTransport.LocalAddr())
}

// splitAddr splits "host:port"; a port that does not parse is 0.
func splitAddr(addr string) (string, uint16) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return addr, 0
	}
	port, _ := strconv.ParseUint(portStr, 10, 16)
	return host, uint16(port)
}
