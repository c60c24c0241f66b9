package structs

// Messages of the cluster-membership reads: Status.Members and
// Operator.RaftGetConfiguration. Their JSON is served by the HTTP API as
// is, so field names follow Nomad's.

// ServerMembersResponse answers Status.Members: the servers of the gossip
// pool as the answering server sees them.
type ServerMembersResponse struct {
	ServerName   string
	ServerRegion string
	ServerDC     string
	Members      []*ServerMember
}

// ServerMember is one server of the gossip pool. Name is
// "<node>.<region>", Port the gossip port; Tags carry role ("nomad"),
// region, dc, build, the RPC port ("port") and address ("rpc_addr"), the
// server's ID ("id"), "raft_vsn", "expect" and "bootstrap".
type ServerMember struct {
	Name        string
	Addr        string
	Port        uint16
	Tags        map[string]string
	Status      string
	ProtocolMin uint8
	ProtocolMax uint8
	ProtocolCur uint8
	DelegateMin uint8
	DelegateMax uint8
	DelegateCur uint8
}

// RaftConfigurationResponse answers Operator.RaftGetConfiguration.
type RaftConfigurationResponse struct {
	Servers []*RaftServer
	// Index is the Raft index of the configuration.
	Index uint64
}

// RaftServer is one server of the Raft configuration.
type RaftServer struct {
	// ID is the server's Raft ID; Node its name; Address its RPC address.
	ID           string
	Node         string
	Address      string
	Leader       bool
	Voter        bool
	RaftProtocol string
}

// RaftPeerByIDRequest names a server of the Raft configuration by its
// Raft ID: Operator.RaftRemovePeerByID.
type RaftPeerByIDRequest struct {
	ID string
	WriteRequest
}

// LeadershipTransferRequest names the server that should lead: by Raft
// ID or by address (at most one), or neither for any up-to-date voter.
type LeadershipTransferRequest struct {
	ID      string
	Address string
	WriteRequest
}
