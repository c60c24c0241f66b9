package agent

import (
	"net/http"
	"strings"
	"testing"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// TestACLHTTP_AuthMethodsAndBindingRules drives the routes with
// HashiCorp's Go client, then checks the texts of refusals.
func TestACLHTTP_AuthMethodsAndBindingRules(t *testing.T) {
	ra := startDevAgentWithACLs(t)
	client, err := nomadapi.NewClient(&nomadapi.Config{Address: ra.base})
	must.NoError(t, err)
	boot, _, err := client.ACLTokens().Bootstrap(nil)
	must.NoError(t, err)
	client.SetSecretID(boot.SecretID)
	mgmt := map[string]string{"X-Nomad-Token": boot.SecretID}

	method := &nomadapi.ACLAuthMethod{Name: "sso", Type: nomadapi.ACLAuthMethodTypeOIDC,
		TokenLocality: nomadapi.ACLAuthMethodTokenLocalityLocal, MaxTokenTTL: 15 * time.Minute, Default: true,
		Config: &nomadapi.ACLAuthMethodConfig{OIDCDiscoveryURL: "https://idp.example.com", OIDCClientID: "nomad",
			ExpirationLeeway: time.Second}}
	created, _, err := client.ACLAuthMethods().Create(method, nil)
	must.NoError(t, err)
	must.Eq(t, 15*time.Minute, created.MaxTokenTTL)
	must.Eq(t, time.Second, created.Config.ExpirationLeeway)
	got, _, err := client.ACLAuthMethods().Get("sso", nil)
	must.NoError(t, err)
	must.Eq(t, "nomad", got.Config.OIDCClientID)

	rule, _, err := client.ACLBindingRules().Create(&nomadapi.ACLBindingRule{AuthMethod: "sso",
		Selector: "eng in list.groups", BindType: "policy", BindName: "eng"}, nil)
	must.NoError(t, err)
	must.UUIDv4(t, rule.ID)
	resp, body := ra.doWithHeaders("GET", "/v1/acl/binding-rules?auth_method=other", "", mgmt)
	must.Eq(t, http.StatusOK, resp.StatusCode)
	must.Eq(t, "[]", strings.TrimSpace(body))

	cases := []struct {
		method, path, body string
		code               int
		want               string
	}{
		{"GET", "/v1/acl/auth-method/nope", "", http.StatusNotFound, "ACL auth-method not found"},
		{"GET", "/v1/acl/binding-rule/nope", "", http.StatusNotFound, "ACL binding rule not found"},
		{"PUT", "/v1/acl/auth-method/other", `{"Name":"sso"}`, http.StatusBadRequest,
			"ACL auth-method name does not match request path"},
		{"PUT", "/v1/acl/binding-rule/" + rule.ID, `{"ID":"x"}`, http.StatusBadRequest,
			"ACL binding rule ID does not match request path"},
		{"PUT", "/v1/acl/auth-method", `{"Name":"x","Type":"OIDC","TokenLocality":"moon","MaxTokenTTL":"1h","Config":{"OIDCDiscoveryURL":"u","OIDCClientID":"c"}}`,
			http.StatusBadRequest, "auth method 0 invalid: invalid token locality 'moon'"},
		{"PUT", "/v1/acl/binding-rule", `{"AuthMethod":"sso","BindType":"role"}`, http.StatusBadRequest,
			"binding rule 0 invalid: BindName is missing"},
	}
	for _, tc := range cases {
		resp, body := ra.doWithHeaders(tc.method, tc.path, tc.body, mgmt)
		must.Eq(t, tc.code, resp.StatusCode, must.Sprint(tc.path, body))
		must.Eq(t, tc.want, body)
	}

	// Deleting the method takes its rule with it.
	_, err = client.ACLAuthMethods().Delete("sso", nil)
	must.NoError(t, err)
	rules, _, err := client.ACLBindingRules().List(nil)
	must.NoError(t, err)
	must.Len(t, 0, rules)

	tok, _, err := client.ACLIdentity().CreateClientIntroductionToken(
		&nomadapi.ACLIdentityClientIntroductionTokenRequest{TTL: time.Minute, NodeName: "n1"}, nil)
	must.NoError(t, err)
	must.StrContains(t, tok.JWT, ".")
}
