package agent

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	josejwt "github.com/go-jose/go-jose/v4/jwt"
	nomadapi "github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// TestACLHTTP_LoginJWT logs in with HashiCorp's Go client, without a
// token, through a JWT method whose key is made here; a token signed by
// another key is answered 401.
func TestACLHTTP_LoginJWT(t *testing.T) {
	ra := startDevAgentWithACLs(t)
	client, err := nomadapi.NewClient(&nomadapi.Config{Address: ra.base})
	must.NoError(t, err)
	boot, _, err := client.ACLTokens().Bootstrap(nil)
	must.NoError(t, err)
	client.SetSecretID(boot.SecretID)

	key, err := rsa.GenerateKey(rand.Reader, 2048)
	must.NoError(t, err)
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	must.NoError(t, err)
	_, err = client.ACLPolicies().Upsert(&nomadapi.ACLPolicy{Name: "readnode", Rules: `node { policy = "read" }`}, nil)
	must.NoError(t, err)
	_, _, err = client.ACLAuthMethods().Create(&nomadapi.ACLAuthMethod{Name: "ci", Type: nomadapi.ACLAuthMethodTypeJWT,
		TokenLocality: nomadapi.ACLAuthMethodTokenLocalityLocal, MaxTokenTTL: time.Hour,
		Config: &nomadapi.ACLAuthMethodConfig{BoundAudiences: []string{"nomad"},
			JWTValidationPubKeys: []string{string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))}}}, nil)
	must.NoError(t, err)
	_, _, err = client.ACLBindingRules().Create(&nomadapi.ACLBindingRule{AuthMethod: "ci",
		BindType: nomadapi.ACLBindingRuleBindTypePolicy, BindName: "readnode"}, nil)
	must.NoError(t, err)

	sign := func(k *rsa.PrivateKey) string {
		signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: k}, nil)
		must.NoError(t, err)
		now := time.Now()
		tok, err := josejwt.Signed(signer).Claims(josejwt.Claims{Subject: "ci-runner", Audience: josejwt.Audience{"nomad"},
			IssuedAt: josejwt.NewNumericDate(now), Expiry: josejwt.NewNumericDate(now.Add(time.Hour))}).Serialize()
		must.NoError(t, err)
		return tok
	}

	anon, err := nomadapi.NewClient(&nomadapi.Config{Address: ra.base})
	must.NoError(t, err)
	tok, _, err := anon.ACLAuth().Login(&nomadapi.ACLLoginRequest{AuthMethodName: "ci", LoginToken: sign(key)}, nil)
	must.NoError(t, err)
	must.Eq(t, "client", tok.Type)
	must.Eq(t, []string{"readnode"}, tok.Policies)
	must.Eq(t, "JWT-ci", tok.Name)
	must.Eq(t, time.Hour, tok.ExpirationTTL)

	// The token reads nodes.
	anon.SetSecretID(tok.SecretID)
	_, _, err = anon.Nodes().List(nil)
	must.NoError(t, err)

	other, err := rsa.GenerateKey(rand.Reader, 2048)
	must.NoError(t, err)
	resp, body := ra.doWithHeaders("POST", "/v1/acl/login",
		`{"AuthMethodName":"ci","LoginToken":"`+sign(other)+`"}`, nil)
	must.Eq(t, http.StatusUnauthorized, resp.StatusCode)
	must.StrContains(t, body, "unable to validate provided token")
	resp, body = ra.doWithHeaders("POST", "/v1/acl/login", `{"AuthMethodName":"nope","LoginToken":"x"}`, nil)
	must.Eq(t, http.StatusBadRequest, resp.StatusCode)
	must.StrContains(t, body, `auth-method "nope" not found`)
	resp, _ = ra.doWithHeaders("GET", "/v1/acl/login", "", nil)
	must.Eq(t, http.StatusMethodNotAllowed, resp.StatusCode)
}
