package login

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	josejwt "github.com/go-jose/go-jose/v4/jwt"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

// testIssuer signs JWTs with a key made for the test.
type testIssuer struct {
	key    *rsa.PrivateKey
	keyID  string
	signer jose.Signer
}

func newTestIssuer(t *testing.T) *testIssuer {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	must.NoError(t, err)
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", "k1"))
	must.NoError(t, err)
	return &testIssuer{key: key, keyID: "k1", signer: signer}
}

// sign makes a JWT of the standard claims and extra.
func (i *testIssuer) sign(t *testing.T, std josejwt.Claims, extra map[string]interface{}) string {
	t.Helper()
	tok, err := josejwt.Signed(i.signer).Claims(std).Claims(extra).Serialize()
	must.NoError(t, err)
	return tok
}

// publicPEM is the issuer's public key as JWTValidationPubKeys holds it.
func (i *testIssuer) publicPEM(t *testing.T) string {
	return pemOf(t, &i.key.PublicKey)
}

func pemOf(t *testing.T, pub crypto.PublicKey) string {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(pub)
	must.NoError(t, err)
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
}

// jwksServer serves the issuer's public key as a JSON Web Key Set.
func (i *testIssuer) jwksServer(t *testing.T) *httptest.Server {
	t.Helper()
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &i.key.PublicKey, KeyID: i.keyID, Algorithm: "RS256", Use: "sig"}}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(set)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestValidateJWT walks the checks of a JWT method: signature by static
// keys or a JWKS URL, audience, issuer, expiry and not-before with their
// leeways, and the signing algorithm.
func TestValidateJWT(t *testing.T) {
	iss := newTestIssuer(t)
	other := newTestIssuer(t)
	jwks := iss.jwksServer(t)
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	good := josejwt.Claims{Issuer: "https://idp.test", Subject: "alice", Audience: josejwt.Audience{"nomad"},
		IssuedAt: josejwt.NewNumericDate(now.Add(-time.Minute)), Expiry: josejwt.NewNumericDate(now.Add(time.Hour))}
	with := func(edit func(c *josejwt.Claims)) josejwt.Claims {
		c := good
		edit(&c)
		return c
	}
	static := &structs.ACLAuthMethodConfig{JWTValidationPubKeys: []string{iss.publicPEM(t)},
		BoundAudiences: []string{"nomad"}, BoundIssuer: []string{"https://idp.test", "https://other.test"}}
	byJWKS := &structs.ACLAuthMethodConfig{JWKSURL: jwks.URL, BoundAudiences: []string{"nomad"}}

	cases := []struct {
		name  string
		cfg   *structs.ACLAuthMethodConfig
		token string
		want  string // "" for a valid token
	}{
		{"good, static key", static, iss.sign(t, good, map[string]interface{}{"team": "eng"}), ""},
		{"good, JWKS", byJWKS, iss.sign(t, good, nil), ""},
		{"bad signature", static, other.sign(t, good, nil), "no known key successfully validated"},
		{"bad signature, JWKS", byJWKS, other.sign(t, good, nil), "signature"},
		{"expired", static, iss.sign(t, with(func(c *josejwt.Claims) {
			c.IssuedAt = josejwt.NewNumericDate(now.Add(-2 * time.Hour))
			c.Expiry = josejwt.NewNumericDate(now.Add(-time.Hour))
		}), nil), "expired"},
		{"expired within the leeway", &structs.ACLAuthMethodConfig{JWTValidationPubKeys: static.JWTValidationPubKeys,
			ExpirationLeeway: 2 * time.Hour, ClockSkewLeeway: 2 * time.Hour},
			iss.sign(t, with(func(c *josejwt.Claims) {
				c.IssuedAt = josejwt.NewNumericDate(now.Add(-2 * time.Hour))
				c.Expiry = josejwt.NewNumericDate(now.Add(-time.Hour))
			}), nil), ""},
		{"not yet valid", static, iss.sign(t, with(func(c *josejwt.Claims) {
			c.NotBefore = josejwt.NewNumericDate(now.Add(30 * time.Minute))
		}), nil), "token not yet valid"},
		{"wrong audience", static, iss.sign(t, with(func(c *josejwt.Claims) { c.Audience = josejwt.Audience{"vault"} }), nil),
			"audience"},
		{"wrong issuer", static, iss.sign(t, with(func(c *josejwt.Claims) { c.Issuer = "https://evil.test" }), nil),
			`invalid issuer "https://evil.test"`},
		{"second bound issuer", static, iss.sign(t, with(func(c *josejwt.Claims) { c.Issuer = "https://other.test" }), nil), ""},
		{"algorithm not allowed", &structs.ACLAuthMethodConfig{JWTValidationPubKeys: static.JWTValidationPubKeys,
			SigningAlgs: []string{"ES256"}}, iss.sign(t, good, nil), "unexpected algorithm"},
		{"not a JWT", static, "not-a-jwt", "three parts"},
		{"unparsable key", &structs.ACLAuthMethodConfig{JWTValidationPubKeys: []string{"garbage"}}, iss.sign(t, good, nil),
			"JWTValidationPubKeys[0]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			claims, err := ValidateJWT(context.Background(), tc.token, tc.cfg, now)
			if tc.want != "" {
				must.ErrorContains(t, err, tc.want)
				return
			}
			must.NoError(t, err)
			must.Eq(t, "alice", claims["sub"])
		})
	}
}

// TestValidateJWT_ECDSA: a method that allows ES256 accepts a token its
// EC key signed.
func TestValidateJWT_ECDSA(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must.NoError(t, err)
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key}, nil)
	must.NoError(t, err)
	now := time.Now()
	tok, err := josejwt.Signed(signer).Claims(josejwt.Claims{Subject: "bob",
		IssuedAt: josejwt.NewNumericDate(now), Expiry: josejwt.NewNumericDate(now.Add(time.Hour))}).Serialize()
	must.NoError(t, err)
	cfg := &structs.ACLAuthMethodConfig{JWTValidationPubKeys: []string{pemOf(t, &key.PublicKey)}, SigningAlgs: []string{"ES256"}}
	claims, err := ValidateJWT(context.Background(), tok, cfg, now)
	must.NoError(t, err)
	must.Eq(t, "bob", claims["sub"])
}
