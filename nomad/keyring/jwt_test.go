package keyring

import (
	"crypto/rand"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

// TestSign_VerifiesWithJWKS signs a token and verifies it with the key
// set the agent publishes, found by the token's kid.
func TestSign_VerifiesWithJWKS(t *testing.T) {
	k, err := New(rand.Reader, time.Now(), structs.RootKeyStateActive, 0)
	must.NoError(t, err)
	m, err := Open(k)
	must.NoError(t, err)

	in := struct {
		Pool string `json:"nomad_node_pool"`
		jwt.Claims
	}{Pool: "default", Claims: jwt.Claims{Subject: "s", Expiry: jwt.NewNumericDate(time.Now().Add(time.Minute))}}
	raw, err := Sign(m, in)
	must.NoError(t, err)

	set, err := JWKS(PublicKeys([]*structs.RootKey{k}))
	must.NoError(t, err)
	parsed, err := jwt.ParseSigned(raw, []jose.SignatureAlgorithm{jose.RS256})
	must.NoError(t, err)
	must.Eq(t, k.Meta.KeyID, parsed.Headers[0].KeyID)
	keys := set.Key(parsed.Headers[0].KeyID)
	must.Len(t, 1, keys)
	var out struct {
		Pool string `json:"nomad_node_pool"`
		jwt.Claims
	}
	must.NoError(t, parsed.Claims(keys[0].Key, &out))
	must.Eq(t, "default", out.Pool)
	must.Eq(t, "s", out.Subject)
}
