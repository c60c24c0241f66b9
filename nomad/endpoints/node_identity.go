package endpoints

import (
	"fmt"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/opennomad/nomad/nomad/keyring"
	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// nodeIdentityAudience is the audience of node identities, as Nomad's.
const nodeIdentityAudience = "nomadproject.io"

// nodeIdentityClaims are the claims of a node identity under Nomad's
// names: the registered ones and the node's ID, pool, class (left out
// when the node has none) and datacenter. The issuer is not set, as
// Nomad leaves it out unless an OIDC issuer is configured.
type nodeIdentityClaims struct {
	NodeID         string `json:"nomad_node_id"`
	NodePool       string `json:"nomad_node_pool"`
	NodeClass      string `json:"nomad_node_class,omitempty"`
	NodeDatacenter string `json:"nomad_node_datacenter"`
	jwt.Claims
}

// newNodeIdentityClaims are the claims of node's identity issued at now,
// valid for ttl; the subject is "node:<region>:<pool>:<node ID>:default".
func newNodeIdentityClaims(node *structs.Node, region string, now time.Time, ttl time.Duration) nodeIdentityClaims {
	return nodeIdentityClaims{
		NodeID:         node.ID,
		NodePool:       node.NodePool,
		NodeClass:      node.NodeClass,
		NodeDatacenter: node.Datacenter,
		Claims: jwt.Claims{
			ID:        structs.GenerateUUID(),
			Subject:   strings.Join([]string{"node", region, node.NodePool, node.ID, "default"}, ":"),
			Audience:  jwt.Audience{nodeIdentityAudience},
			IssuedAt:  jwt.NewNumericDate(now),
			NotBefore: jwt.NewNumericDate(now),
			Expiry:    jwt.NewNumericDate(now.Add(ttl)),
		},
	}
}

// nodeIdentityTTL is how long the identities of the nodes of pool live:
// the pool's NodeIdentityTTL, or the default when the pool does not
// exist (yet) or sets none.
func nodeIdentityTTL(store *state.StateStore, pool string) (time.Duration, error) {
	p, err := store.NodePoolByName(nil, pool)
	if err != nil {
		return 0, err
	}
	if p == nil || p.NodeIdentityTTL <= 0 {
		return structs.DefaultNodeIdentityTTL, nil
	}
	return p.NodeIdentityTTL, nil
}

// signNodeIdentity signs a new identity for node with the keyring's
// active key. With wait it waits for the first key of a new cluster as
// other signers do (a registration: the leader makes that key just after
// taking office, when the first clients register); without, a cluster
// with no key yet issues none, and the client asks again with its next
// heartbeat, which must not be held up.
func (n *Node) signNodeIdentity(node *structs.Node, wait bool) (string, error) {
	store := n.srv.State()
	var active *structs.RootKey
	if wait {
		var err error
		if active, err = activeRootKey(n.srv, store, "signing node identity"); err != nil {
			return "", fmt.Errorf("node %s: %w", node.ID, err)
		}
	} else {
		keys, err := store.RootKeys(nil)
		if err != nil {
			return "", err
		}
		for _, k := range keys {
			if k.Meta.Active() {
				active = k
				break
			}
		}
		if active == nil {
			return "", fmt.Errorf("node %s: signing node identity: no active root key", node.ID)
		}
	}
	ttl, err := nodeIdentityTTL(store, node.NodePool)
	if err != nil {
		return "", err
	}
	material, err := keyring.Open(active)
	if err != nil {
		return "", err
	}
	claims := newNodeIdentityClaims(node, n.srv.Settings().Region, n.srv.Clock().Now(), ttl)
	token, err := keyring.Sign(material, claims)
	if err != nil {
		return "", fmt.Errorf("node %s: identity: %w", node.ID, err)
	}
	return token, nil
}

// issueNodeIdentity puts a new identity for node in reply (wait as for
// signNodeIdentity). A failure to
// sign is logged, not returned: the node's registration or heartbeat
// stands, and the client keeps asking until it gets one.
func (n *Node) issueNodeIdentity(node *structs.Node, wait bool, reply *structs.NodeUpdateResponse) {
	token, err := n.signNodeIdentity(node, wait)
	if err != nil {
		n.srv.Logger().Warn("could not sign a node identity", "node_id", node.ID, "error", err)
		return
	}
	reply.SignedIdentity = &token
}
