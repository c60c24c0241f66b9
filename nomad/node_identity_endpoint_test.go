package nomad

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/keyring"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// verifiedNodeClaims checks token against the cluster's published keys
// and returns its claims as a JSON object.
func verifiedNodeClaims(t *testing.T, s *Server, token string) map[string]any {
	t.Helper()
	parsed, err := jwt.ParseSigned(token, []jose.SignatureAlgorithm{jose.RS256})
	must.NoError(t, err)
	keys, err := s.State().RootKeys(nil)
	must.NoError(t, err)
	set, err := keyring.JWKS(keyring.PublicKeys(keys))
	must.NoError(t, err)
	found := set.Key(parsed.Headers[0].KeyID)
	must.Len(t, 1, found)
	var raw json.RawMessage
	must.NoError(t, parsed.Claims(found[0].Key, &raw))
	var out map[string]any
	must.NoError(t, json.Unmarshal(raw, &out))
	return out
}

// TestNodeEndpoint_IdentityOnRegister: a registration is answered with a
// node identity carrying Nomad's nine claims (no class: the node has
// none), valid for the pool's NodeIdentityTTL.
func TestNodeEndpoint_IdentityOnRegister(t *testing.T) {
	s := newTestServer(t, nil)
	node := mock.Node()
	node.NodeClass = ""
	reply := registerNode(t, s, node)
	must.NotNil(t, reply.SignedIdentity)

	claims := verifiedNodeClaims(t, s, *reply.SignedIdentity)
	must.MapLen(t, 9, claims)
	must.Eq[any](t, node.ID, claims["nomad_node_id"])
	must.Eq[any](t, node.NodePool, claims["nomad_node_pool"])
	must.Eq[any](t, node.Datacenter, claims["nomad_node_datacenter"])
	must.Eq[any](t, "nomadproject.io", claims["aud"])
	must.Eq[any](t, "node:global:"+node.NodePool+":"+node.ID+":default", claims["sub"])
	life := claims["exp"].(float64) - claims["iat"].(float64)
	must.Eq(t, structs.DefaultNodeIdentityTTL.Seconds(), life)

	classy := node.Copy()
	classy.NodeClass = "gpu"
	reply = registerNode(t, s, classy)
	claims = verifiedNodeClaims(t, s, *reply.SignedIdentity)
	must.MapLen(t, 10, claims)
	must.Eq[any](t, "gpu", claims["nomad_node_class"])
}

// TestNodeEndpoint_IdentityOnHeartbeat: a heartbeat gets a new identity
// only when it asks for one and proves the node's secret; the pool's TTL
// sets its life.
func TestNodeEndpoint_IdentityOnHeartbeat(t *testing.T) {
	s := newTestServer(t, nil)
	pool := &structs.NodePool{Name: "short", NodeIdentityTTL: time.Hour}
	var poolReply structs.GenericResponse
	must.NoError(t, s.RPC("NodePool.UpsertNodePools", &structs.NodePoolUpsertRequest{NodePools: []*structs.NodePool{pool}}, &poolReply))
	node := mock.Node()
	node.NodePool = "short"
	registerNode(t, s, node)

	cases := []struct {
		name   string
		secret string
		force  bool
		issued bool
	}{
		{name: "not asked", secret: node.SecretID},
		{name: "asked without the secret", force: true},
		{name: "asked with the secret", secret: node.SecretID, force: true, issued: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var reply structs.NodeUpdateResponse
			must.NoError(t, s.RPC("Node.UpdateStatus", &structs.NodeUpdateStatusRequest{
				NodeID: node.ID, SecretID: tc.secret, Status: structs.NodeStatusReady, ForceIdentityRenewal: tc.force,
			}, &reply))
			if !tc.issued {
				must.Nil(t, reply.SignedIdentity)
				return
			}
			must.NotNil(t, reply.SignedIdentity)
			claims := verifiedNodeClaims(t, s, *reply.SignedIdentity)
			must.Eq[any](t, "short", claims["nomad_node_pool"])
			must.Eq(t, time.Hour.Seconds(), claims["exp"].(float64)-claims["iat"].(float64))
		})
	}
}
