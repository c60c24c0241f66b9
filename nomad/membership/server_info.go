package membership

import (
	"net"
	"strconv"

	"github.com/hashicorp/serf/serf"

	"github.com/opennomad/nomad/structs"
)

// Gossip tags of a server, as Nomad names them.
const (
	tagRole      = "role"
	tagRegion    = "region"
	tagDC        = "dc"
	tagBuild     = "build"
	tagPort      = "port"
	tagRPCAddr   = "rpc_addr"
	tagID        = "id"
	tagRaftVsn   = "raft_vsn"
	tagExpect    = "expect"
	tagBootstrap = "bootstrap"

	roleNomad = "nomad"
)

// tags are this server's gossip tags.
func (c *Config) tags() map[string]string {
	host, port, _ := net.SplitHostPort(c.RPCAddr)
	bootstrap := "0"
	if c.BootstrapExpect == 1 {
		bootstrap = "1"
	}
	return map[string]string{
		tagRole:      roleNomad,
		tagRegion:    c.Region,
		tagDC:        c.Datacenter,
		tagBuild:     c.Build,
		tagPort:      port,
		tagRPCAddr:   host,
		tagID:        c.ServerID,
		tagRaftVsn:   strconv.Itoa(c.RaftVersion),
		tagExpect:    strconv.Itoa(c.BootstrapExpect),
		tagBootstrap: bootstrap,
	}
}

// ServerInfo is a server as its gossip member describes it.
type ServerInfo struct {
	// Name is the member name, "<node>.<region>".
	Name       string
	ID         string
	Region     string
	Datacenter string
	// RPCAddr is "host:port" of the server's RPC port (and Raft).
	RPCAddr     string
	Build       string
	RaftVersion int
	// Expect is the server's bootstrap_expect; Bootstrap is set for a
	// server that bootstraps alone.
	Expect    int
	Bootstrap bool
	Status    serf.MemberStatus
}

// parseServer reads a member's tags; ok is false for members that are
// not Nomad servers or whose tags are incomplete.
func parseServer(m serf.Member) (ServerInfo, bool) {
	if m.Tags[tagRole] != roleNomad {
		return ServerInfo{}, false
	}
	port, err := strconv.Atoi(m.Tags[tagPort])
	if err != nil || port <= 0 || m.Tags[tagID] == "" || m.Tags[tagRegion] == "" {
		return ServerInfo{}, false
	}
	host := m.Tags[tagRPCAddr]
	if host == "" {
		host = m.Addr.String()
	}
	expect, _ := strconv.Atoi(m.Tags[tagExpect])
	raftVsn, _ := strconv.Atoi(m.Tags[tagRaftVsn])
	return ServerInfo{
		Name:        m.Name,
		ID:          m.Tags[tagID],
		Region:      m.Tags[tagRegion],
		Datacenter:  m.Tags[tagDC],
		RPCAddr:     net.JoinHostPort(host, strconv.Itoa(port)),
		Build:       m.Tags[tagBuild],
		RaftVersion: raftVsn,
		Expect:      expect,
		Bootstrap:   m.Tags[tagBootstrap] == "1",
		Status:      m.Status,
	}, true
}

// memberStruct converts a gossip member for Status.Members.
func memberStruct(m serf.Member) *structs.ServerMember {
	tags := make(map[string]string, len(m.Tags))
	for k, v := range m.Tags {
		tags[k] = v
	}
	return &structs.ServerMember{
		Name:        m.Name,
		Addr:        m.Addr.String(),
		Port:        m.Port,
		Tags:        tags,
		Status:      m.Status.String(),
		ProtocolMin: m.ProtocolMin,
		ProtocolMax: m.ProtocolMax,
		ProtocolCur: m.ProtocolCur,
		DelegateMin: m.DelegateMin,
		DelegateMax: m.DelegateMax,
		DelegateCur: m.DelegateCur,
	}
}
