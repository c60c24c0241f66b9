package login

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	capoidc "github.com/hashicorp/cap/oidc"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

const testRedirect = "http://127.0.0.1:4649/oidc/callback"

// startTestOIDC starts cap's in-process provider (discovery, JWKS,
// token and UserInfo endpoints, over TLS with its own CA) and an OIDC
// method that trusts it.
func startTestOIDC(t *testing.T, pkce bool) (*capoidc.TestProvider, *structs.ACLAuthMethod) {
	t.Helper()
	tp := capoidc.StartTestProvider(t)
	tp.SetClientCreds("nomad-client", "nomad-secret")
	tp.SetAllowedRedirectURIs([]string{testRedirect})
	tp.SetExpectedAuthCode("the-code")
	tp.SetCustomClaims(map[string]interface{}{"groups": []interface{}{"eng", "dev"}, "email": "alice@example.com"})
	method := &structs.ACLAuthMethod{Name: "sso", Type: structs.ACLAuthMethodTypeOIDC,
		TokenLocality: structs.ACLAuthMethodTokenLocalityLocal, MaxTokenTTL: time.Hour,
		Config: &structs.ACLAuthMethodConfig{OIDCDiscoveryURL: tp.Addr(), OIDCClientID: "nomad-client",
			OIDCClientSecret: "nomad-secret", DiscoveryCaPem: []string{tp.CACert()}, SigningAlgs: []string{"ES256"},
			AllowedRedirectURIs: []string{testRedirect}, BoundAudiences: []string{"nomad-client"}, OIDCEnablePKCE: pkce,
			ClaimMappings: map[string]string{"email": "email"}, ListClaimMappings: map[string]string{"groups": "groups"}}}
	return tp, method
}

// visit follows an authorization URL as the user's browser would, up to
// the provider's redirect, and returns the state and code it carries.
func visit(t *testing.T, tp *capoidc.TestProvider, authURL string) (state, code string) {
	t.Helper()
	client := tp.HTTPClient()
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := client.Get(authURL)
	must.NoError(t, err)
	resp.Body.Close()
	must.Eq(t, http.StatusFound, resp.StatusCode)
	loc, err := url.Parse(resp.Header.Get("Location"))
	must.NoError(t, err)
	return loc.Query().Get("state"), loc.Query().Get("code")
}

// TestOIDC_Flow: the authorization URL carries the state, the caller's
// nonce and a PKCE challenge; the code the provider hands back is
// exchanged for a verified ID token whose claims, and UserInfo's, come
// back.
func TestOIDC_Flow(t *testing.T) {
	tp, method := startTestOIDC(t, true)
	ctx := context.Background()
	tp.SetExpectedAuthNonce("client-nonce")

	authURL, req, err := StartOIDC(ctx, method, testRedirect, "client-nonce", time.Minute)
	must.NoError(t, err)
	u, err := url.Parse(authURL)
	must.NoError(t, err)
	q := u.Query()
	must.Eq(t, req.State(), q.Get("state"))
	must.Eq(t, "client-nonce", q.Get("nonce"))
	must.Eq(t, "S256", q.Get("code_challenge_method"))
	must.NotEq(t, "", q.Get("code_challenge"))
	must.Eq(t, testRedirect, q.Get("redirect_uri"))

	tp.SetPKCEVerifier(req.PKCEVerifier())
	state, code := visit(t, tp, authURL)
	must.Eq(t, req.State(), state)

	id, user, err := CompleteOIDC(ctx, method, req, state, code)
	must.NoError(t, err)
	must.Eq[interface{}](t, "alice@example.com", id["sub"])
	must.Eq[interface{}](t, []interface{}{"eng", "dev"}, id["groups"])
	must.Eq[interface{}](t, "bob", user["friend"])

	t.Run("wrong code", func(t *testing.T) {
		_, _, err := CompleteOIDC(ctx, method, req, state, "stolen")
		must.ErrorIs(t, err, structs.ErrUnauthenticated)
	})
	t.Run("wrong state", func(t *testing.T) {
		_, _, err := CompleteOIDC(ctx, method, req, "st_other", code)
		must.ErrorIs(t, err, structs.ErrUnauthenticated)
	})
	t.Run("user info off", func(t *testing.T) {
		off := method.Copy()
		off.Config.OIDCDisableUserInfo = true
		_, user, err := CompleteOIDC(ctx, off, req, state, code)
		must.NoError(t, err)
		must.Nil(t, user)
	})
}

// TestOIDC_RedirectURIRefused: a redirect URI the method does not allow
// is refused before the provider is asked anything.
func TestOIDC_RedirectURIRefused(t *testing.T) {
	_, method := startTestOIDC(t, false)
	_, _, err := StartOIDC(context.Background(), method, "https://evil.example/cb", "n", time.Minute)
	must.ErrorIs(t, err, structs.ErrInvalid)
	must.ErrorContains(t, err, "AllowedRedirectURIs")
}

// TestPending: a login is taken once, not after its TTL, and a full store
// refuses new logins until old ones expire.
func TestPending(t *testing.T) {
	now := time.Now()
	req := func(state string) *capoidc.Req {
		r, err := capoidc.NewRequest(time.Minute, testRedirect, capoidc.WithState(state))
		must.NoError(t, err)
		return r
	}
	p := NewPending(time.Minute, 2)
	must.NoError(t, p.Put(&PendingLogin{Method: "sso", Request: req("a")}, now))
	must.NoError(t, p.Put(&PendingLogin{Method: "sso", Request: req("b")}, now))
	must.ErrorIs(t, p.Put(&PendingLogin{Request: req("c")}, now), structs.ErrBackpressure)

	must.Eq(t, "sso", p.Take("a", now).Method)
	must.Nil(t, p.Take("a", now))
	must.Nil(t, p.Take("b", now.Add(2*time.Minute)))
	must.Eq(t, 0, p.Len())

	must.NoError(t, p.Put(&PendingLogin{Request: req("d")}, now))
	must.NoError(t, p.Put(&PendingLogin{Request: req("e")}, now))
	must.NoError(t, p.Put(&PendingLogin{Request: req("f")}, now.Add(2*time.Minute)))
	must.Eq(t, 1, p.Len())
}
