package nomad

import (
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/keyring"
	"github.com/opennomad/nomad/structs"
)

func testOIDCAuthMethod(name string, isDefault bool) *structs.ACLAuthMethod {
	return &structs.ACLAuthMethod{Name: name, Type: structs.ACLAuthMethodTypeOIDC,
		TokenLocality: structs.ACLAuthMethodTokenLocalityLocal, MaxTokenTTL: 15 * time.Minute, Default: isDefault,
		Config: &structs.ACLAuthMethodConfig{OIDCDiscoveryURL: "https://idp.example.com", OIDCClientID: "nomad",
			BoundAudiences: []string{"nomad"}}}
}

// TestACLEndpoint_AuthMethods: management writes and reads, anyone lists,
// invalid methods are refused naming the field, one default only, and a
// deleted method takes its binding rules with it.
func TestACLEndpoint_AuthMethods(t *testing.T) {
	s, boot := newBootstrappedACLServer(t, nil)
	mgmt := boot.SecretID

	invalid := []struct {
		name string
		edit func(m *structs.ACLAuthMethod)
		want string
	}{
		{"bad name", func(m *structs.ACLAuthMethod) { m.Name = "a b" }, "invalid name 'a b'"},
		{"bad type", func(m *structs.ACLAuthMethod) { m.Type = "SAML" }, "invalid token type 'SAML'"},
		{"bad locality", func(m *structs.ACLAuthMethod) { m.TokenLocality = "galaxy" }, "invalid token locality 'galaxy'"},
		{"ttl too long", func(m *structs.ACLAuthMethod) { m.MaxTokenTTL = 48 * time.Hour }, "invalid MaxTokenTTL value '48h0m0s'"},
		{"no config", func(m *structs.ACLAuthMethod) { m.Config = nil }, "missing Config"},
		{"oidc without client", func(m *structs.ACLAuthMethod) { m.Config.OIDCClientID = "" }, "Config.OIDCClientID is required"},
		{"jwt without keys", func(m *structs.ACLAuthMethod) { m.Type = structs.ACLAuthMethodTypeJWT; m.Config.OIDCDiscoveryURL = "" },
			"exactly one of Config.JWTValidationPubKeys"},
	}
	for _, tc := range invalid {
		t.Run(tc.name, func(t *testing.T) {
			m := testOIDCAuthMethod("bad", false)
			tc.edit(m)
			var out structs.ACLAuthMethodsUpsertResponse
			err := s.RPC("ACL.UpsertAuthMethods", &structs.ACLAuthMethodsUpsertRequest{
				AuthMethods: []*structs.ACLAuthMethod{m}, WriteRequest: asTokenWrite(mgmt)}, &out)
			must.ErrorContains(t, err, tc.want)
			must.ErrorIs(t, err, structs.ErrInvalid)
		})
	}

	var up structs.ACLAuthMethodsUpsertResponse
	must.NoError(t, s.RPC("ACL.UpsertAuthMethods", &structs.ACLAuthMethodsUpsertRequest{
		AuthMethods: []*structs.ACLAuthMethod{testOIDCAuthMethod("sso", true)}, WriteRequest: asTokenWrite(mgmt)}, &up))
	must.Len(t, 1, up.AuthMethods)
	must.Eq(t, structs.DefaultACLAuthMethodTokenNameFormat, up.AuthMethods[0].TokenNameFormat)
	must.False(t, up.AuthMethods[0].CreateTime.IsZero())

	err := s.RPC("ACL.UpsertAuthMethods", &structs.ACLAuthMethodsUpsertRequest{
		AuthMethods: []*structs.ACLAuthMethod{testOIDCAuthMethod("other", true)}, WriteRequest: asTokenWrite(mgmt)}, &up)
	must.ErrorContains(t, err, "default method already exists: sso")

	// Anyone lists; reading one and writing need a management token.
	var list structs.ACLAuthMethodsListResponse
	must.NoError(t, s.RPC("ACL.ListAuthMethods", &structs.ACLAuthMethodsListRequest{}, &list))
	must.Len(t, 1, list.AuthMethods)
	must.True(t, list.AuthMethods[0].Default)
	var get structs.ACLAuthMethodGetResponse
	err = s.RPC("ACL.GetAuthMethod", &structs.ACLAuthMethodGetRequest{MethodName: "sso"}, &get)
	must.ErrorIs(t, err, structs.ErrPermissionDenied)
	err = s.RPC("ACL.UpsertAuthMethods", &structs.ACLAuthMethodsUpsertRequest{
		AuthMethods: []*structs.ACLAuthMethod{testOIDCAuthMethod("x", false)}}, &up)
	must.ErrorIs(t, err, structs.ErrPermissionDenied)
	must.NoError(t, s.RPC("ACL.GetAuthMethod", &structs.ACLAuthMethodGetRequest{MethodName: "sso",
		QueryOptions: asTokenQuery(mgmt)}, &get))
	must.Eq(t, "https://idp.example.com", get.AuthMethod.Config.OIDCDiscoveryURL)

	// Binding rules.
	rule := &structs.ACLBindingRule{Description: "eng", AuthMethod: "sso", Selector: "eng in list.groups",
		BindType: structs.ACLBindingRuleBindTypeRole, BindName: "eng"}
	var ru structs.ACLBindingRulesUpsertResponse
	must.NoError(t, s.RPC("ACL.UpsertBindingRules", &structs.ACLBindingRulesUpsertRequest{
		ACLBindingRules: []*structs.ACLBindingRule{rule}, WriteRequest: asTokenWrite(mgmt)}, &ru))
	must.Len(t, 1, ru.ACLBindingRules)
	must.UUIDv4(t, ru.ACLBindingRules[0].ID)
	id := ru.ACLBindingRules[0].ID

	badRules := []struct {
		name string
		rule *structs.ACLBindingRule
		want string
	}{
		{"missing method", &structs.ACLBindingRule{AuthMethod: "nope", BindType: "management"}, "cannot find auth method nope"},
		{"bad selector", &structs.ACLBindingRule{AuthMethod: "sso", BindType: "management", Selector: "a =="}, "Selector is invalid"},
		{"unknown ID", &structs.ACLBindingRule{ID: structs.GenerateUUID(), AuthMethod: "sso", BindType: "management"}, "cannot find binding rule"},
	}
	for _, tc := range badRules {
		t.Run(tc.name, func(t *testing.T) {
			err := s.RPC("ACL.UpsertBindingRules", &structs.ACLBindingRulesUpsertRequest{
				ACLBindingRules: []*structs.ACLBindingRule{tc.rule}, WriteRequest: asTokenWrite(mgmt)}, &ru)
			must.ErrorContains(t, err, tc.want)
			must.ErrorIs(t, err, structs.ErrInvalid)
		})
	}

	var rl structs.ACLBindingRulesListResponse
	must.ErrorIs(t, s.RPC("ACL.ListBindingRules", &structs.ACLBindingRulesListRequest{}, &rl), structs.ErrPermissionDenied)
	must.NoError(t, s.RPC("ACL.ListBindingRules", &structs.ACLBindingRulesListRequest{AuthMethod: "other",
		QueryOptions: asTokenQuery(mgmt)}, &rl))
	must.Len(t, 0, rl.ACLBindingRules)
	must.NoError(t, s.RPC("ACL.ListBindingRules", &structs.ACLBindingRulesListRequest{AuthMethod: "sso",
		QueryOptions: asTokenQuery(mgmt)}, &rl))
	must.Len(t, 1, rl.ACLBindingRules)

	var gr structs.ACLBindingRuleResponse
	must.NoError(t, s.RPC("ACL.GetBindingRule", &structs.ACLBindingRuleRequest{ACLBindingRuleID: id,
		QueryOptions: asTokenQuery(mgmt)}, &gr))
	must.Eq(t, "eng in list.groups", gr.ACLBindingRule.Selector)

	var wr structs.GenericResponse
	must.NoError(t, s.RPC("ACL.DeleteAuthMethods", &structs.ACLAuthMethodsDeleteRequest{Names: []string{"sso"},
		WriteRequest: asTokenWrite(mgmt)}, &wr))
	must.NoError(t, s.RPC("ACL.GetBindingRule", &structs.ACLBindingRuleRequest{ACLBindingRuleID: id,
		QueryOptions: asTokenQuery(mgmt)}, &gr))
	must.Nil(t, gr.ACLBindingRule)
	err = s.RPC("ACL.DeleteAuthMethods", &structs.ACLAuthMethodsDeleteRequest{Names: []string{"sso"},
		WriteRequest: asTokenWrite(mgmt)}, &wr)
	must.ErrorIs(t, err, structs.ErrACLAuthMethodNotFound)
}

// TestACLEndpoint_ClientIntroductionToken: the token verifies against the
// published key set and carries the node's claims; it needs node write.
func TestACLEndpoint_ClientIntroductionToken(t *testing.T) {
	s, boot := newBootstrappedACLServer(t, nil)

	var out structs.ACLCreateClientIntroductionTokenResponse
	err := s.RPC("ACL.CreateClientIntroductionToken", &structs.ACLCreateClientIntroductionTokenRequest{}, &out)
	must.ErrorIs(t, err, structs.ErrPermissionDenied)

	err = s.RPC("ACL.CreateClientIntroductionToken", &structs.ACLCreateClientIntroductionTokenRequest{
		TTL: time.Hour, WriteRequest: asTokenWrite(boot.SecretID)}, &out)
	must.ErrorContains(t, err, "TTL 1h0m0s exceeds the maximum")

	must.NoError(t, s.RPC("ACL.CreateClientIntroductionToken", &structs.ACLCreateClientIntroductionTokenRequest{
		TTL: time.Minute, NodeName: "n1", WriteRequest: asTokenWrite(boot.SecretID)}, &out))
	parsed, err := jwt.ParseSigned(out.JWT, []jose.SignatureAlgorithm{jose.RS256})
	must.NoError(t, err)
	keys, err := s.State().RootKeys(nil)
	must.NoError(t, err)
	set, err := keyring.JWKS(keyring.PublicKeys(keys))
	must.NoError(t, err)
	found := set.Key(parsed.Headers[0].KeyID)
	must.Len(t, 1, found)
	var claims struct {
		NodeName string `json:"nomad_node_name"`
		NodePool string `json:"nomad_node_pool"`
		jwt.Claims
	}
	must.NoError(t, parsed.Claims(found[0].Key, &claims))
	must.Eq(t, "n1", claims.NodeName)
	must.Eq(t, structs.NodePoolDefault, claims.NodePool)
	must.NoError(t, claims.ValidateWithLeeway(jwt.Expected{AnyAudience: jwt.Audience{"nomadproject.io"},
		Time: time.Now()}, 0))
	must.Eq(t, time.Minute, claims.Expiry.Time().Sub(claims.IssuedAt.Time()))
}

// TestACLEndpoint_BlockingAuthMethodList: a blocking list wakes on the
// write of a method.
func TestACLEndpoint_BlockingAuthMethodList(t *testing.T) {
	s, boot := newBootstrappedACLServer(t, nil)
	var first structs.ACLAuthMethodsListResponse
	must.NoError(t, s.RPC("ACL.ListAuthMethods", &structs.ACLAuthMethodsListRequest{}, &first))

	done := make(chan structs.ACLAuthMethodsListResponse, 1)
	errs := make(chan error, 1)
	// An empty list answers index 0 (as Nomad's), which would not block:
	// wait past the store's latest index instead.
	minIndex := max(first.Index, latestIndex(t, s))
	go func() {
		var out structs.ACLAuthMethodsListResponse
		q := structs.QueryOptions{MinQueryIndex: minIndex, MaxQueryTime: time.Minute}
		errs <- s.RPC("ACL.ListAuthMethods", &structs.ACLAuthMethodsListRequest{QueryOptions: q}, &out)
		done <- out
	}()
	var up structs.ACLAuthMethodsUpsertResponse
	must.NoError(t, s.RPC("ACL.UpsertAuthMethods", &structs.ACLAuthMethodsUpsertRequest{
		AuthMethods: []*structs.ACLAuthMethod{testOIDCAuthMethod("sso", false)}, WriteRequest: asTokenWrite(boot.SecretID)}, &up))
	select {
	case err := <-errs:
		must.NoError(t, err)
		out := <-done
		must.Len(t, 1, out.AuthMethods)
		must.Eq(t, up.Index, out.Index)
	case <-time.After(30 * time.Second):
		t.Fatal("the blocking list did not wake")
	}
}
