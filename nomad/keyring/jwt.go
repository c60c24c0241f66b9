package keyring

import (
	"fmt"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Sign makes a compact JWT of claims signed RS256 with the root key's
// signing key, its "kid" header the root key's ID: what the key set
// published at /.well-known/jwks.json verifies. claims is any value that
// marshals to a JSON object (jwt.Claims embedded for the registered
// claims).
func Sign(m *Material, claims interface{}) (string, error) {
	signer, err := jose.NewSigner(
		jose.SigningKey{Algorithm: jose.RS256, Key: m.Signer},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader(jose.HeaderKey("kid"), m.KeyID),
	)
	if err != nil {
		return "", fmt.Errorf("root key %s: signer: %w", m.KeyID, err)
	}
	token, err := jwt.Signed(signer).Claims(claims).Serialize()
	if err != nil {
		return "", fmt.Errorf("root key %s: signing: %w", m.KeyID, err)
	}
	return token, nil
}
