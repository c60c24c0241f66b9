package nomad

import (
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/hashicorp/serf/serf"

	"github.com/opennomad/nomad/nomad/membership"
	"github.com/opennomad/nomad/nomad/rpcnet"
)

// ClusterConfig is how a server reaches the other servers and is reached
// by them and by clients. The zero value is a server alone in its
// process: no listener, no gossip, Raft in memory (unless
// Config.RaftTransport is set).
type ClusterConfig struct {
	// RPCAddr is where the server listens ("host:port"; port 0 picks a
	// free one) for RPC and, unless Config.RaftTransport is set, for
	// Raft on the same port. Empty runs no listener. Config.RPCAdvertise
	// is what others dial; it defaults to the listener's address.
	RPCAddr string
	// RPCHoldTimeout is how long a request that must reach the leader
	// waits for one to be elected (retrying with backoff) before it fails
	// with "No cluster leader".
	RPCHoldTimeout time.Duration
	// Pool tunes the connections to other servers; zero fields take
	// rpcnet's defaults. Its TLSWrap makes them TLS.
	Pool rpcnet.PoolConfig
	// RegionTLSWrap, when set, is the TLSWrap of the connections to the
	// servers of another region (requests forwarded there), which prove
	// that region's name; nil uses Pool's for every region.
	RegionTLSWrap func(region string) rpcnet.TLSWrapper
	// TLS serves TLS on the RPC port (RPC, streams and Raft, which then
	// dials TLS too); nil serves plaintext only.
	TLS *rpcnet.ListenerTLS
	// RPCHandshakeTimeout bounds the wait for a connection's protocol
	// byte and TLS handshake (rpcnet's FirstByteTimeout; 0: its default).
	// RPCMaxConnsPerClient bounds the connections one client IP holds
	// open (0: no limit).
	RPCHandshakeTimeout  time.Duration
	RPCMaxConnsPerClient int

	// SerfAddr is where gossip listens ("host:port"; port 0 picks a free
	// one); Config.SerfAdvertise what others dial. Empty runs no gossip:
	// the Raft configuration then only changes through Raft() directly.
	SerfAddr string
	// GossipKey (server.encrypt: base64 of 16, 24 or 32 bytes) encrypts
	// gossip. It seeds the keyring file in DataDir on first start; once
	// that file exists it holds the keys (see membership.InitKeyring).
	GossipKey string
	// ReconcileInterval, DeadServerGrace and MinQuorum tune how the
	// leader keeps Raft's voters in step with gossip (see
	// membership.Config); zero takes the defaults.
	ReconcileInterval time.Duration
	DeadServerGrace   time.Duration
	MinQuorum         int
	// GossipProfile picks gossip timings; GossipTune adjusts them last
	// (tests shorten them).
	GossipProfile membership.Profile
	GossipTune    func(*serf.Config)
}

// DefaultRPCHoldTimeout is Nomad's: a request waits up to 5 s for a
// leader.
const DefaultRPCHoldTimeout = 5 * time.Second

// validate reports the configuration's problems.
func (c *ClusterConfig) validate() []error {
	var errs []error
	for _, a := range []struct{ name, addr string }{{"rpc address", c.RPCAddr}, {"serf address", c.SerfAddr}} {
		if a.addr == "" {
			continue
		}
		if _, _, err := net.SplitHostPort(a.addr); err != nil {
			errs = append(errs, fmt.Errorf("%s %q: %w", a.name, a.addr, err))
		}
	}
	if c.SerfAddr != "" && c.RPCAddr == "" {
		errs = append(errs, errors.New("gossip needs an RPC address: other servers must be able to reach this one"))
	}
	if c.RPCHoldTimeout < 0 {
		errs = append(errs, fmt.Errorf("rpc hold timeout must be >= 0, got %s", c.RPCHoldTimeout))
	}
	if c.DeadServerGrace < 0 {
		errs = append(errs, fmt.Errorf("dead server grace must be >= 0, got %s", c.DeadServerGrace))
	}
	return errs
}
