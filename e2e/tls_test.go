package e2e

import (
	"bytes"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/opennomad/nomad/nomad/rpcnet"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/tlsconf"
	"github.com/opennomad/nomad/tlsconf/tlsconftest"
)

// Three servers and a client with tls.rpc and verify_server_hostname:
// gossip finds the servers, Raft elects a leader and replicates over TLS,
// a follower forwards a registration to the leader over TLS, and the
// client registers and runs the job over TLS. The RPC port refuses a
// plaintext dialer and a server certificate of the wrong CA.
func TestCluster_MutualTLS(t *testing.T) {
	ca := tlsconftest.NewCA(t)
	c := startClusterWith(t, func(server bool) string {
		if server {
			return rpcTLS(ca, ca.Server(t, "global"))
		}
		return rpcTLS(ca, ca.Client(t, "global"))
	})

	var leader string
	waitFor(t, 60*time.Second, "the servers to agree on a leader", func() bool {
		leader = c.agreedLeader()
		return leader != ""
	})
	peers, err := c.servers[0].api().Status().Peers()
	if err != nil || len(peers) != 3 {
		t.Fatalf("peers: %v %v", peers, err)
	}
	waitFor(t, 60*time.Second, "the client node to be ready", func() bool {
		nodes, _, err := c.servers[0].api().Nodes().List(nil)
		return err == nil && len(nodes) == 1 && nodes[0].Status == "ready"
	})
	follower := c.servers[0]
	if follower.rpcAddr() == leader {
		follower = c.servers[1]
	}
	if _, _, err := follower.api().Jobs().Register(sleepJob("over-tls"), nil); err != nil {
		t.Fatalf("registering through a follower: %v", err)
	}
	waitFor(t, 60*time.Second, "the job's allocation to run", func() bool {
		return runningAlloc(c.servers[2], "over-tls") != ""
	})
	// Snapshots asked of a follower stream from and to the leader over
	// TLS (streaming calls; the restore half-closes its side).
	snap, err := follower.api().Operator().Snapshot(nil)
	if err != nil {
		t.Fatalf("snapshot through a follower: %v", err)
	}
	var archive bytes.Buffer
	_, err = io.Copy(&archive, snap)
	snap.Close()
	if err != nil || archive.Len() == 0 {
		t.Fatalf("snapshot through a follower: %d bytes, %v", archive.Len(), err)
	}
	if _, err := follower.api().Operator().SnapshotRestore(&archive, nil); err != nil {
		t.Fatalf("snapshot restore through a follower: %v", err)
	}
	if _, _, err := follower.api().Jobs().Info("over-tls", nil); err != nil {
		t.Fatalf("the job after the restore: %v", err)
	}

	call := func(wrap rpcnet.TLSWrapper) error {
		p := rpcnet.NewPool(rpcnet.PoolConfig{TLSWrap: wrap})
		defer p.Close()
		var out string
		return p.RPC(follower.rpcAddr(), "Status.Leader", &structs.GenericRequest{}, &out)
	}
	if err := call(nil); err == nil {
		t.Fatal("a plaintext RPC was served with rpc_upgrade_mode off")
	}
	other := tlsconftest.NewCA(t)
	pair := other.Client(t, "global")
	stranger, err := tlsconf.New(tlsconf.Config{RPC: true, CAFile: other.File, CertFile: pair.CertFile, KeyFile: pair.KeyFile}, "global")
	if err != nil {
		t.Fatal(err)
	}
	if err := call(stranger.WrapRPC); err == nil {
		t.Fatal("a certificate of another CA was accepted")
	}
	mine := ca.Client(t, "global")
	client, err := tlsconf.New(tlsconf.Config{
		RPC: true, CAFile: ca.File, CertFile: mine.CertFile, KeyFile: mine.KeyFile, VerifyServerHostname: true,
	}, "global")
	if err != nil {
		t.Fatal(err)
	}
	if err := call(client.WrapRPC); err != nil {
		t.Fatalf("a client certificate of the cluster's CA: %v", err)
	}
}

// rpcTLS is the agent configuration for mutual TLS on RPC (and Raft)
// with pair's certificate of ca, checking the servers' region names.
func rpcTLS(ca *tlsconftest.CA, pair tlsconftest.Pair) string {
	return fmt.Sprintf(`
tls {
  rpc                    = true
  ca_file                = %q
  cert_file              = %q
  key_file               = %q
  verify_server_hostname = true
}
`, ca.File, pair.CertFile, pair.KeyFile)
}
