package client

import (
	"encoding/base64"
	"encoding/json"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

// TestClient_NodeIdentity: the node gets its identity when it registers,
// keeps it across a restart, and a renewal asked for is carried by the
// next heartbeat, which brings a new identity.
func TestClient_NodeIdentity(t *testing.T) {
	srv := testServer(t, nil)
	w := &twin{inner: srv}
	cfg := testClientConfig(t, local(w))
	c1, err := NewClient(cfg)
	must.NoError(t, err)
	eventually(t, "node identity", func() bool { _, err := c1.NodeIdentityClaims(); return err == nil })
	claims, err := c1.NodeIdentityClaims()
	must.NoError(t, err)
	must.Eq[any](t, c1.NodeID(), claims["nomad_node_id"])
	must.Eq[any](t, "dc1", claims["nomad_node_datacenter"])
	must.Eq[any](t, structs.NodePoolDefault, claims["nomad_node_pool"])
	first := claims["jti"]
	must.NoError(t, c1.Shutdown())

	c2 := testClient(t, cfg)
	kept, err := c2.NodeIdentityClaims()
	must.NoError(t, err, must.Sprint("a restarted client keeps its identity"))
	must.Eq(t, first, kept["jti"])

	// Registering again brought a new identity; the renewal another.
	eventually(t, "registered again", func() bool { hb, _ := c2.LastHeartbeat(); return !hb.IsZero() })
	start := len(w.callsOf("Node.UpdateStatus"))
	current, err := c2.NodeIdentityClaims()
	must.NoError(t, err)
	c2.RenewNodeIdentity()
	eventually(t, "renewed", func() bool {
		claims, err := c2.NodeIdentityClaims()
		return err == nil && claims["jti"] != current["jti"]
	})
	asked := false
	for _, call := range w.callsOf("Node.UpdateStatus")[start:] {
		asked = asked || call.args.(*structs.NodeUpdateStatusRequest).ForceIdentityRenewal
	}
	must.True(t, asked, must.Sprint("the renewal rides on a heartbeat"))
	must.False(t, c2.wantsNodeIdentity(), must.Sprint("a fresh identity is not asked for again"))
}

func TestNodeIdentity_NearExpiry(t *testing.T) {
	issued := time.Unix(1_000_000, 0)
	token := testJWT(t, map[string]any{"iat": issued.Unix(), "exp": issued.Add(3 * time.Hour).Unix()})
	id, err := parseNodeIdentity(token)
	must.NoError(t, err)
	cases := []struct {
		at   time.Duration
		want bool
	}{
		{at: 0, want: false},
		{at: 2*time.Hour - time.Second, want: false},
		{at: 2*time.Hour + time.Second, want: true},
		{at: 4 * time.Hour, want: true},
	}
	for _, tc := range cases {
		must.Eq(t, tc.want, id.nearExpiry(issued.Add(tc.at)), must.Sprintf("after %s", tc.at))
	}

	_, err = parseNodeIdentity("not-a-jwt")
	must.ErrorContains(t, err, "not a compact JWT")
}

// testJWT builds an unsigned compact JWT of claims.
func testJWT(t *testing.T, claims map[string]any) string {
	b, err := json.Marshal(claims)
	must.NoError(t, err)
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(`{"alg":"none"}`)) + "." + enc.EncodeToString(b) + "." + enc.EncodeToString([]byte("sig"))
}
