package command

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"net"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	josejwt "github.com/go-jose/go-jose/v4/jwt"
	capoidc "github.com/hashicorp/cap/oidc"

	"github.com/opennomad/nomad/api"
	"github.com/opennomad/nomad/command/agent"
)

// loginAgent starts a real dev agent with ACLs on, bootstrapped, with a
// policy "readnode", and returns it with a management client.
func loginAgent(t *testing.T) (*realAgent, *api.Client) {
	t.Helper()
	c := newRealAgentWith(t, func(cfg *agent.Config) { cfg.ACL.Enabled = true })
	client, err := api.NewClient(&api.Config{Address: c.Addr()})
	if err != nil {
		t.Fatal(err)
	}
	boot, _, err := client.ACLTokens().Bootstrap(nil)
	if err != nil {
		t.Fatal(err)
	}
	client, err = api.NewClient(&api.Config{Address: c.Addr(), SecretID: boot.SecretID})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.ACLPolicies().Upsert(&api.ACLPolicy{Name: "readnode", Rules: `node { policy = "read" }`}, nil); err != nil {
		t.Fatal(err)
	}
	return c, client
}

// addLoginMethod creates an auth method whose every login gets the
// "readnode" policy.
func addLoginMethod(t *testing.T, client *api.Client, m *api.ACLAuthMethod) {
	t.Helper()
	if _, _, err := client.ACLAuthMethods().Create(m, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := client.ACLBindingRules().Create(&api.ACLBindingRule{AuthMethod: m.Name, BindType: "policy",
		BindName: "readnode"}, nil); err != nil {
		t.Fatal(err)
	}
}

// TestLoginCommand_JWT: `nomad login` posts the JWT given and prints the
// token; without -method it uses the default method; a JWT method
// without -login-token, or a token the method does not accept, fails.
func TestLoginCommand_JWT(t *testing.T) {
	c, client := loginAgent(t)
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	addLoginMethod(t, client, &api.ACLAuthMethod{Name: "ci", Type: "JWT", TokenLocality: "local",
		MaxTokenTTL: time.Hour, Default: true,
		Config: &api.ACLAuthMethodConfig{JWTValidationPubKeys: []string{
			string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))}}})
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key}, nil)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	jwt, err := josejwt.Signed(signer).Claims(josejwt.Claims{Subject: "runner",
		IssuedAt: josejwt.NewNumericDate(now), Expiry: josejwt.NewNumericDate(now.Add(time.Hour))}).Serialize()
	if err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name   string
		args   []string
		code   int
		outHas []string
		errHas string
	}{
		{"named method", []string{"login", "-method=ci", "-login-token=" + jwt}, 0,
			[]string{"Successfully logged in via JWT and ci", "Secret ID", "Name           = JWT-ci", "Policies       = [readnode]"}, ""},
		{"default method", []string{"login", "-login-token=" + jwt}, 0, []string{"Successfully logged in via JWT and ci"}, ""},
		{"json", []string{"login", "-json", "-login-token=" + jwt}, 0, []string{`"SecretID"`, `"Name": "JWT-ci"`}, ""},
		{"no login token", []string{"login", "-method=ci"}, 1, nil, "-login-token"},
		{"bad token", []string{"login", "-method=ci", "-login-token=garbage"}, 1, nil, "unable to validate provided token"},
		{"unknown method", []string{"login", "-method=nope", "-login-token=x"}, 1, nil, `auth method "nope" not found`},
		{"bad type", []string{"login", "-method=ci", "-type=saml", "-login-token=x"}, 1, nil, `Unsupported auth method type "SAML"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := runCommand(t, c.Addr(), runOpts{}, tc.args...)
			if res.code != tc.code {
				t.Fatalf("code %d, want %d; stdout:\n%s\nstderr:\n%s", res.code, tc.code, res.stdout, res.stderr)
			}
			for _, want := range tc.outHas {
				if !strings.Contains(res.stdout, want) {
					t.Errorf("stdout lacks %q:\n%s", want, res.stdout)
				}
			}
			if tc.errHas != "" && !strings.Contains(res.stderr, tc.errHas) {
				t.Errorf("stderr lacks %q:\n%s", tc.errHas, res.stderr)
			}
		})
	}
}

// TestLoginCommand_OIDC: `nomad login` against cap's in-process OIDC
// provider. The test's browser visits the URL the command opens; the
// provider sends it back to the command's callback listener; the command
// completes the login and prints the token.
func TestLoginCommand_OIDC(t *testing.T) {
	c, client := loginAgent(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	callbackAddr := "127.0.0.1:" + strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	redirect := "http://" + callbackAddr + "/oidc/callback"

	tp := capoidc.StartTestProvider(t)
	tp.SetClientCreds("nomad-client", "nomad-secret")
	tp.SetAllowedRedirectURIs([]string{redirect})
	tp.SetExpectedAuthCode("the-code")
	addLoginMethod(t, client, &api.ACLAuthMethod{Name: "corp", Type: "OIDC", TokenLocality: "local",
		MaxTokenTTL: time.Hour,
		Config: &api.ACLAuthMethodConfig{OIDCDiscoveryURL: tp.Addr(), OIDCClientID: "nomad-client",
			OIDCClientSecret: "nomad-secret", DiscoveryCaPem: []string{tp.CACert()}, SigningAlgs: []string{"ES256"},
			AllowedRedirectURIs: []string{redirect}, BoundAudiences: []string{"nomad-client"}}})

	var opened string
	openURL = func(u string) error {
		opened = u
		parsed, err := url.Parse(u)
		if err != nil {
			return err
		}
		tp.SetExpectedAuthNonce(parsed.Query().Get("nonce"))
		resp, err := tp.HTTPClient().Get(u) // follows the redirect to the callback
		if err != nil {
			return err
		}
		return resp.Body.Close()
	}
	t.Cleanup(func() { openURL = openInBrowser })

	res := runCommand(t, c.Addr(), runOpts{}, "login", "-method=corp", "-oidc-callback-addr="+callbackAddr)
	if res.code != 0 {
		t.Fatalf("code %d; stdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	for _, want := range []string{"Launching browser to:", opened, "Successfully logged in via OIDC and corp",
		"Name           = OIDC-corp", "Policies       = [readnode]"} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, res.stdout)
		}
	}
}
