package endpoints

import (
	"fmt"
	"strings"

	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/opennomad/nomad/nomad/keyring"
	"github.com/opennomad/nomad/structs"
)

// clientIntroductionAudience is the audience of client introduction
// tokens, as Nomad's.
const clientIntroductionAudience = "nomadproject.io"

// clientIntroductionClaims are the claims of a client introduction token:
// the registered ones and the node's name and pool, under Nomad's names.
type clientIntroductionClaims struct {
	NodeName string `json:"nomad_node_name,omitempty"`
	NodePool string `json:"nomad_node_pool"`
	jwt.Claims
}

// CreateClientIntroductionToken signs a JWT a new client node may present
// when it first registers, with the active root key, so that the key set
// at /.well-known/jwks.json verifies it. It needs node write (the rule in
// aclRules), and works with ACLs on or off.
func (a *ACL) CreateClientIntroductionToken(args *structs.ACLCreateClientIntroductionTokenRequest,
	reply *structs.ACLCreateClientIntroductionTokenResponse) error {
	if done, err := a.srv.Forward("ACL.CreateClientIntroductionToken", args, args, reply); done {
		return err
	}
	ttl := args.TTL
	switch {
	case ttl < 0:
		return structs.KindErrorf(structs.ErrInvalid, "TTL cannot be negative")
	case ttl == 0:
		ttl = structs.DefaultClientIntroductionTTL
	case ttl > structs.MaxClientIntroductionTTL:
		return structs.KindErrorf(structs.ErrInvalid, "TTL %s exceeds the maximum of %s", ttl, structs.MaxClientIntroductionTTL)
	}
	pool := args.NodePool
	if pool == "" {
		pool = structs.NodePoolDefault
	}
	key, err := activeRootKey(a.srv, a.srv.State(), "signing client introduction token")
	if err != nil {
		return err
	}
	material, err := keyring.Open(key)
	if err != nil {
		return err
	}
	now := a.srv.Clock().Now()
	region := a.srv.Settings().Region
	claims := clientIntroductionClaims{
		NodeName: args.NodeName,
		NodePool: pool,
		Claims: jwt.Claims{
			ID:        structs.GenerateUUID(),
			Subject:   strings.Join([]string{"node-introduction", region, pool, args.NodeName, "default"}, ":"),
			Audience:  jwt.Audience{clientIntroductionAudience},
			IssuedAt:  jwt.NewNumericDate(now),
			NotBefore: jwt.NewNumericDate(now),
			Expiry:    jwt.NewNumericDate(now.Add(ttl)),
		},
	}
	token, err := keyring.Sign(material, claims)
	if err != nil {
		return fmt.Errorf("client introduction token: %w", err)
	}
	reply.JWT = token
	return nil
}
