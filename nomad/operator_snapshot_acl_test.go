package nomad

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

// TestSnapshot_ChecksTokens: snapshot save and restore stream outside the
// RPC registry, so they check the token themselves, on the server asked
// and on the leader a follower forwards them to: save needs the operator
// capability snapshot-save, restore a management token.
func TestSnapshot_ChecksTokens(t *testing.T) {
	c := newInmemCluster(t, 3, func(cfg *Config) { cfg.ACLEnabled = true })
	leader := leaderOf(t, c.servers)
	var follower *Server
	for _, s := range c.servers {
		if s != leader {
			follower = s
			break
		}
	}
	var boot structs.ACLTokenUpsertResponse
	must.NoError(t, leader.RPC("ACL.Bootstrap", &structs.ACLTokenBootstrapRequest{}, &boot))
	mgmt := boot.Tokens[0].SecretID
	saver := aclTestToken(t, leader, mgmt, "saver", `operator { capabilities = ["snapshot-save"] }`, 0)
	reader := aclTestToken(t, leader, mgmt, "reader", `namespace "default" { policy = "read" }`, 0)
	// The follower resolves tokens from its own replica.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := follower.ResolveACL(reader); err == nil {
			break
		}
		must.True(t, time.Now().Before(deadline), must.Sprint("the tokens never reached the follower"))
		time.Sleep(10 * time.Millisecond)
	}

	for _, s := range []*Server{leader, follower} {
		err := s.SnapshotSave(io.Discard, "", false, nil)
		must.ErrorIs(t, err, structs.ErrPermissionDenied)
		err = s.SnapshotSave(io.Discard, reader, false, nil)
		must.ErrorIs(t, err, structs.ErrPermissionDenied)
		var buf bytes.Buffer
		must.NoError(t, s.SnapshotSave(&buf, saver, false, nil))
		must.Positive(t, buf.Len())
		err = s.SnapshotRestore(strings.NewReader("not an archive"), saver)
		must.ErrorIs(t, err, structs.ErrPermissionDenied)
	}

	// A stream opened on the leader directly, as a forwarding server
	// would, is checked there too.
	for _, method := range []string{streamSnapshotSave, streamSnapshotRestore} {
		conn, err := follower.net.pool.Stream(leader.RPCAdvertise(), method, snapshotArgs(reader, false))
		must.NoError(t, err)
		if method == streamSnapshotRestore {
			must.NoError(t, conn.CloseWrite())
		}
		_, err = conn.ReadResponse()
		conn.Close()
		must.ErrorIs(t, err, structs.ErrPermissionDenied, must.Sprint(method))
	}
}
