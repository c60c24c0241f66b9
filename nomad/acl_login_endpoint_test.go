package nomad

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	josejwt "github.com/go-jose/go-jose/v4/jwt"
	capoidc "github.com/hashicorp/cap/oidc"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

// jwtProvider is an identity provider for the tests: a key made here,
// published as a JWKS by an httptest server.
type jwtProvider struct {
	key    *rsa.PrivateKey
	signer jose.Signer
	jwks   *httptest.Server
}

func newJWTProvider(t *testing.T) *jwtProvider {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	must.NoError(t, err)
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", "idp-1"))
	must.NoError(t, err)
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "idp-1", Algorithm: "RS256", Use: "sig"}}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(set)
	}))
	t.Cleanup(srv.Close)
	return &jwtProvider{key: key, signer: signer, jwks: srv}
}

func (p *jwtProvider) sign(t *testing.T, std josejwt.Claims, extra map[string]interface{}) string {
	t.Helper()
	tok, err := josejwt.Signed(p.signer).Claims(std).Claims(extra).Serialize()
	must.NoError(t, err)
	return tok
}

// TestACLEndpoint_LoginJWT logs in through a JWT method without a token:
// good tokens earn what the binding rules bind (a policy, a role,
// management) for the method's MaxTokenTTL; bad tokens (expired, for
// another audience or issuer, signed by another key) are refused as
// unauthenticated; a login no rule binds is refused with Nomad's text.
func TestACLEndpoint_LoginJWT(t *testing.T) {
	s, boot := newBootstrappedACLServer(t, nil)
	mgmt := boot.SecretID
	idp := newJWTProvider(t)
	stranger := newJWTProvider(t)

	var wr structs.GenericResponse
	must.NoError(t, s.RPC("ACL.UpsertPolicies", &structs.ACLPolicyUpsertRequest{Policies: []*structs.ACLPolicy{
		{Name: "readnode", Rules: aclTestReadNodeRules}, {Name: "team-web", Rules: `namespace "default" { policy = "read" }`}},
		WriteRequest: asTokenWrite(mgmt)}, &wr))
	var roles structs.ACLRolesUpsertResponse
	must.NoError(t, s.RPC("ACL.UpsertRoles", &structs.ACLRolesUpsertRequest{Roles: []*structs.ACLRole{
		{Name: "operators", Policies: []*structs.ACLRolePolicyLink{{Name: "readnode"}}}}, WriteRequest: asTokenWrite(mgmt)}, &roles))
	roleID := roles.Roles[0].ID

	method := &structs.ACLAuthMethod{Name: "ci", Type: structs.ACLAuthMethodTypeJWT,
		TokenLocality: structs.ACLAuthMethodTokenLocalityGlobal, MaxTokenTTL: 30 * time.Minute,
		TokenNameFormat: "${auth_method_name}-${value.user}",
		Config: &structs.ACLAuthMethodConfig{JWKSURL: idp.jwks.URL, BoundAudiences: []string{"nomad"},
			BoundIssuer: []string{"https://idp.test"}, ClaimMappings: map[string]string{"sub": "user", "team": "team"},
			ListClaimMappings: map[string]string{"groups": "groups"}}}
	var am structs.ACLAuthMethodsUpsertResponse
	must.NoError(t, s.RPC("ACL.UpsertAuthMethods", &structs.ACLAuthMethodsUpsertRequest{
		AuthMethods: []*structs.ACLAuthMethod{method, testOIDCAuthMethod("sso", false)}, WriteRequest: asTokenWrite(mgmt)}, &am))
	var br structs.ACLBindingRulesUpsertResponse
	must.NoError(t, s.RPC("ACL.UpsertBindingRules", &structs.ACLBindingRulesUpsertRequest{ACLBindingRules: []*structs.ACLBindingRule{
		{AuthMethod: "ci", Selector: `"ops" in list.groups`, BindType: structs.ACLBindingRuleBindTypeRole, BindName: "operators"},
		{AuthMethod: "ci", Selector: `"team" in value`, BindType: structs.ACLBindingRuleBindTypePolicy, BindName: "team-${value.team}"},
		{AuthMethod: "ci", Selector: `"admins" in list.groups`, BindType: structs.ACLBindingRuleBindTypeManagement},
	}, WriteRequest: asTokenWrite(mgmt)}, &br))

	now := time.Now()
	std := josejwt.Claims{Issuer: "https://idp.test", Subject: "alice", Audience: josejwt.Audience{"nomad"},
		IssuedAt: josejwt.NewNumericDate(now), Expiry: josejwt.NewNumericDate(now.Add(time.Hour))}
	with := func(edit func(c *josejwt.Claims)) josejwt.Claims {
		c := std
		edit(&c)
		return c
	}
	cases := []struct {
		name     string
		method   string
		token    string
		kind     error  // nil for a login that succeeds
		errText  string // part of the error
		wantType string
		policies []string
		roles    []string
	}{
		{name: "policy bind", method: "ci", token: idp.sign(t, std, map[string]interface{}{"team": "Web"}),
			wantType: structs.ACLClientToken, policies: []string{"team-web"}},
		{name: "role bind", method: "ci", token: idp.sign(t, std, map[string]interface{}{"groups": []string{"ops"}}),
			wantType: structs.ACLClientToken, roles: []string{roleID}},
		{name: "role and policy", method: "ci", token: idp.sign(t, std, map[string]interface{}{"groups": []string{"ops"}, "team": "web"}),
			wantType: structs.ACLClientToken, policies: []string{"team-web"}, roles: []string{roleID}},
		{name: "management bind", method: "ci", token: idp.sign(t, std, map[string]interface{}{"groups": []string{"ops", "admins"}}),
			wantType: structs.ACLManagementToken},
		{name: "no matching rule", method: "ci", token: idp.sign(t, std, map[string]interface{}{"groups": []string{"guests"}}),
			kind: structs.ErrInvalid, errText: "no role or policy bindings matched"},
		{name: "rule names a missing policy", method: "ci", token: idp.sign(t, std, map[string]interface{}{"team": "nobody"}),
			kind: structs.ErrInvalid, errText: "no role or policy bindings matched"},
		{name: "expired", method: "ci", token: idp.sign(t, with(func(c *josejwt.Claims) {
			c.IssuedAt = josejwt.NewNumericDate(now.Add(-3 * time.Hour))
			c.Expiry = josejwt.NewNumericDate(now.Add(-2 * time.Hour))
		}), map[string]interface{}{"team": "web"}), kind: structs.ErrUnauthenticated, errText: "unable to validate provided token"},
		{name: "wrong audience", method: "ci", token: idp.sign(t, with(func(c *josejwt.Claims) { c.Audience = josejwt.Audience{"vault"} }),
			map[string]interface{}{"team": "web"}), kind: structs.ErrUnauthenticated, errText: "audience"},
		{name: "wrong issuer", method: "ci", token: idp.sign(t, with(func(c *josejwt.Claims) { c.Issuer = "https://evil.test" }),
			map[string]interface{}{"team": "web"}), kind: structs.ErrUnauthenticated, errText: "issuer"},
		{name: "bad signature", method: "ci", token: stranger.sign(t, std, map[string]interface{}{"team": "web"}),
			kind: structs.ErrUnauthenticated, errText: "unable to validate provided token"},
		{name: "unknown method", method: "nope", token: idp.sign(t, std, nil),
			kind: structs.ErrInvalid, errText: `auth-method "nope" not found`},
		{name: "OIDC method", method: "sso", token: idp.sign(t, std, nil),
			kind: structs.ErrInvalid, errText: "unsupported auth-method type: OIDC"},
		{name: "no token", method: "ci", kind: structs.ErrInvalid, errText: "invalid login request: missing login token"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out structs.ACLLoginResponse
			err := s.RPC("ACL.Login", &structs.ACLLoginRequest{AuthMethodName: tc.method, LoginToken: tc.token}, &out)
			if tc.kind != nil {
				must.ErrorIs(t, err, tc.kind)
				must.ErrorContains(t, err, tc.errText)
				return
			}
			must.NoError(t, err)
			tok := out.ACLToken
			must.NotNil(t, tok)
			must.Eq(t, tc.wantType, tok.Type)
			must.Eq(t, "ci-alice", tok.Name)
			must.True(t, tok.Global)
			must.Eq(t, 30*time.Minute, tok.ExpirationTTL)
			must.NotNil(t, tok.ExpirationTime)
			must.SliceContainsAll(t, tc.policies, tok.Policies)
			var ids []string
			for _, r := range tok.Roles {
				ids = append(ids, r.ID)
				must.Eq(t, "operators", r.Name)
			}
			must.SliceContainsAll(t, tc.roles, ids)
			must.Positive(t, out.Index)

			// The token is stored, and works as its bindings say.
			var who structs.SingleACLTokenResponse
			must.NoError(t, s.RPC("ACL.WhoAmI", &structs.ACLWhoAmIRequest{QueryOptions: asTokenQuery(tok.SecretID)}, &who))
			must.Eq(t, tok.AccessorID, who.Token.AccessorID)
		})
	}
}

// TestACLEndpoint_LoginOIDC logs in through an OIDC method against cap's
// in-process provider: the auth URL, the user's visit, the completion
// with the state and code the provider sent back, and the token the
// binding rules earn; a login completes once, and only with the nonce
// and redirect URI it began with.
func TestACLEndpoint_LoginOIDC(t *testing.T) {
	s, boot := newBootstrappedACLServer(t, nil)
	mgmt := boot.SecretID
	tp := capoidc.StartTestProvider(t)
	const redirect = "http://localhost:4649/oidc/callback"
	tp.SetClientCreds("nomad-client", "nomad-secret")
	tp.SetAllowedRedirectURIs([]string{redirect})
	tp.SetExpectedAuthCode("the-code")
	tp.SetCustomClaims(map[string]interface{}{"groups": []interface{}{"eng"}})

	var wr structs.GenericResponse
	must.NoError(t, s.RPC("ACL.UpsertPolicies", &structs.ACLPolicyUpsertRequest{Policies: []*structs.ACLPolicy{
		{Name: "readnode", Rules: aclTestReadNodeRules}}, WriteRequest: asTokenWrite(mgmt)}, &wr))
	method := &structs.ACLAuthMethod{Name: "corp", Type: structs.ACLAuthMethodTypeOIDC,
		TokenLocality: structs.ACLAuthMethodTokenLocalityLocal, MaxTokenTTL: time.Hour,
		Config: &structs.ACLAuthMethodConfig{OIDCDiscoveryURL: tp.Addr(), OIDCClientID: "nomad-client",
			OIDCClientSecret: "nomad-secret", DiscoveryCaPem: []string{tp.CACert()}, SigningAlgs: []string{"ES256"},
			AllowedRedirectURIs: []string{redirect}, BoundAudiences: []string{"nomad-client"},
			ListClaimMappings: map[string]string{"groups": "groups"}}}
	var am structs.ACLAuthMethodsUpsertResponse
	must.NoError(t, s.RPC("ACL.UpsertAuthMethods", &structs.ACLAuthMethodsUpsertRequest{
		AuthMethods: []*structs.ACLAuthMethod{method}, WriteRequest: asTokenWrite(mgmt)}, &am))
	var br structs.ACLBindingRulesUpsertResponse
	must.NoError(t, s.RPC("ACL.UpsertBindingRules", &structs.ACLBindingRulesUpsertRequest{ACLBindingRules: []*structs.ACLBindingRule{
		{AuthMethod: "corp", Selector: `"eng" in list.groups`, BindType: structs.ACLBindingRuleBindTypePolicy, BindName: "readnode"},
	}, WriteRequest: asTokenWrite(mgmt)}, &br))

	begin := func(nonce string) (state, code string) {
		t.Helper()
		tp.SetExpectedAuthNonce(nonce)
		var out structs.ACLOIDCAuthURLResponse
		must.NoError(t, s.RPC("ACL.OIDCAuthURL", &structs.ACLOIDCAuthURLRequest{AuthMethodName: "corp",
			RedirectURI: redirect, ClientNonce: nonce}, &out))
		client := tp.HTTPClient()
		client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		resp, err := client.Get(out.AuthURL)
		must.NoError(t, err)
		resp.Body.Close()
		loc, err := url.Parse(resp.Header.Get("Location"))
		must.NoError(t, err)
		return loc.Query().Get("state"), loc.Query().Get("code")
	}
	complete := func(nonce, state, code, redirectURI string) (*structs.ACLToken, error) {
		var out structs.ACLLoginResponse
		err := s.RPC("ACL.OIDCCompleteAuth", &structs.ACLOIDCCompleteAuthRequest{AuthMethodName: "corp",
			ClientNonce: nonce, State: state, Code: code, RedirectURI: redirectURI}, &out)
		return out.ACLToken, err
	}

	state, code := begin("nonce-1")
	tok, err := complete("nonce-1", state, code, redirect)
	must.NoError(t, err)
	must.Eq(t, structs.ACLClientToken, tok.Type)
	must.Eq(t, []string{"readnode"}, tok.Policies)
	must.Eq(t, "OIDC-corp", tok.Name)
	must.False(t, tok.Global)
	_, err = complete("nonce-1", state, code, redirect)
	must.ErrorIs(t, err, structs.ErrInvalid)
	must.ErrorContains(t, err, "no OIDC login in progress")

	state, code = begin("nonce-2")
	_, err = complete("someone-else", state, code, redirect)
	must.ErrorIs(t, err, structs.ErrInvalid)

	var out structs.ACLOIDCAuthURLResponse
	err = s.RPC("ACL.OIDCAuthURL", &structs.ACLOIDCAuthURLRequest{AuthMethodName: "corp",
		RedirectURI: "https://evil.example/cb", ClientNonce: "n"}, &out)
	must.ErrorIs(t, err, structs.ErrInvalid)
	must.ErrorContains(t, err, "AllowedRedirectURIs")
	err = s.RPC("ACL.OIDCAuthURL", &structs.ACLOIDCAuthURLRequest{AuthMethodName: "corp"}, &out)
	must.ErrorContains(t, err, "invalid OIDC auth-url request")

	// Claims no rule binds: refused, with Nomad's text.
	tp.SetCustomClaims(map[string]interface{}{"groups": []interface{}{"guests"}})
	state, code = begin("nonce-3")
	_, err = complete("nonce-3", state, code, redirect)
	must.ErrorContains(t, err, "no role or policy bindings matched")
}

// TestACLEndpoint_LoginThroughFollower: both steps of an OIDC login made
// through a follower are served by the leader, where the login waits
// between them; a JWT refused as unauthenticated keeps its kind across
// the hop.
func TestACLEndpoint_LoginThroughFollower(t *testing.T) {
	servers := newInmemCluster(t, 3, func(c *Config) { c.ACLEnabled = true }).servers
	leader := leaderOf(t, servers)
	var follower *Server
	for _, s := range servers {
		if s != leader {
			follower = s
			break
		}
	}
	var boot structs.ACLTokenUpsertResponse
	must.NoError(t, follower.RPC("ACL.Bootstrap", &structs.ACLTokenBootstrapRequest{}, &boot))
	mgmt := boot.Tokens[0].SecretID

	tp := capoidc.StartTestProvider(t)
	const redirect = "http://localhost:4649/oidc/callback"
	tp.SetClientCreds("nomad-client", "nomad-secret")
	tp.SetAllowedRedirectURIs([]string{redirect})
	tp.SetExpectedAuthCode("the-code")
	tp.SetExpectedAuthNonce("follower-nonce")
	idp := newJWTProvider(t)
	var am structs.ACLAuthMethodsUpsertResponse
	must.NoError(t, follower.RPC("ACL.UpsertAuthMethods", &structs.ACLAuthMethodsUpsertRequest{AuthMethods: []*structs.ACLAuthMethod{
		{Name: "corp", Type: structs.ACLAuthMethodTypeOIDC, TokenLocality: structs.ACLAuthMethodTokenLocalityLocal,
			MaxTokenTTL: time.Hour, Config: &structs.ACLAuthMethodConfig{OIDCDiscoveryURL: tp.Addr(),
				OIDCClientID: "nomad-client", OIDCClientSecret: "nomad-secret", DiscoveryCaPem: []string{tp.CACert()},
				SigningAlgs: []string{"ES256"}, AllowedRedirectURIs: []string{redirect}}},
		{Name: "ci", Type: structs.ACLAuthMethodTypeJWT, TokenLocality: structs.ACLAuthMethodTokenLocalityLocal,
			MaxTokenTTL: time.Hour, Config: &structs.ACLAuthMethodConfig{JWKSURL: idp.jwks.URL}},
	}, WriteRequest: asTokenWrite(mgmt)}, &am))
	var br structs.ACLBindingRulesUpsertResponse
	must.NoError(t, follower.RPC("ACL.UpsertBindingRules", &structs.ACLBindingRulesUpsertRequest{ACLBindingRules: []*structs.ACLBindingRule{
		{AuthMethod: "corp", BindType: structs.ACLBindingRuleBindTypeManagement}}, WriteRequest: asTokenWrite(mgmt)}, &br))

	var start structs.ACLOIDCAuthURLResponse
	must.NoError(t, follower.RPC("ACL.OIDCAuthURL", &structs.ACLOIDCAuthURLRequest{AuthMethodName: "corp",
		RedirectURI: redirect, ClientNonce: "follower-nonce"}, &start))
	client := tp.HTTPClient()
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := client.Get(start.AuthURL)
	must.NoError(t, err)
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	must.NoError(t, err)
	var done structs.ACLLoginResponse
	must.NoError(t, follower.RPC("ACL.OIDCCompleteAuth", &structs.ACLOIDCCompleteAuthRequest{AuthMethodName: "corp",
		ClientNonce: "follower-nonce", State: loc.Query().Get("state"), Code: loc.Query().Get("code"), RedirectURI: redirect}, &done))
	must.Eq(t, structs.ACLManagementToken, done.ACLToken.Type)

	err = follower.RPC("ACL.Login", &structs.ACLLoginRequest{AuthMethodName: "ci", LoginToken: "not-a-jwt"}, &done)
	must.True(t, structs.IsKind(err, structs.ErrUnauthenticated), must.Sprintf("got %v", err))
}
