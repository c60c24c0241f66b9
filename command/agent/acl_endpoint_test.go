package agent

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

// startDevAgentWithACLs starts a dev agent with acl.enabled = true.
func startDevAgentWithACLs(t *testing.T) *realAgent {
	t.Helper()
	return startDevAgentWith(t, func(c *Config) { c.ACL.Enabled = true })
}

// doWith is realAgent.do with request headers.
func (ra *realAgent) doWithHeaders(method, path, body string, header map[string]string) (*http.Response, string) {
	ra.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, ra.base+path, rd)
	must.NoError(ra.t, err)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	must.NoError(ra.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	must.NoError(ra.t, err)
	return resp, string(b)
}

// TestACLHTTP_Disabled: with ACLs off the ACL routes answer 400 "ACL
// support disabled", token self the ACLs-disabled token.
func TestACLHTTP_Disabled(t *testing.T) {
	ra := startDevAgent(t)
	for _, c := range []struct{ method, path string }{
		{"PUT", "/v1/acl/bootstrap"}, {"GET", "/v1/acl/policies"}, {"GET", "/v1/acl/tokens"},
		{"GET", "/v1/acl/roles"}, {"GET", "/v1/acl/policy/x"},
	} {
		resp, body := ra.do(c.method, c.path, "")
		must.Eq(t, http.StatusBadRequest, resp.StatusCode, must.Sprint(c.path))
		must.Eq(t, "ACL support disabled", body)
	}
	resp, body := ra.do("GET", "/v1/acl/token/self", "")
	must.Eq(t, http.StatusOK, resp.StatusCode)
	must.StrContains(t, body, `"AccessorID":"acls-disabled"`)
	must.StrContains(t, body, `"Name":"ACLs disabled token"`)
}

// TestACLHTTP_Routes walks the ACL routes over HTTP with Nomad's
// statuses and texts.
func TestACLHTTP_Routes(t *testing.T) {
	ra := startDevAgentWithACLs(t)

	resp, body := ra.do("PUT", "/v1/acl/bootstrap", `{"BootstrapSecret":"nope"}`)
	must.Eq(t, http.StatusBadRequest, resp.StatusCode)
	must.Eq(t, "invalid acl token", body)

	resp, body = ra.do("POST", "/v1/acl/bootstrap", "")
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	var boot structs.ACLToken
	must.NoError(t, json.Unmarshal([]byte(body), &boot))
	must.Eq(t, "Bootstrap Token", boot.Name)
	must.StrContains(t, body, `"ExpirationTTL":""`)
	mgmt := map[string]string{"X-Nomad-Token": boot.SecretID}

	resp, body = ra.do("PUT", "/v1/acl/bootstrap", "")
	must.Eq(t, http.StatusBadRequest, resp.StatusCode)
	must.StrHasPrefix(t, "ACL bootstrap already done (reset index: ", body)

	// Without a token, the management routes are denied.
	resp, body = ra.do("GET", "/v1/acl/tokens", "")
	must.Eq(t, http.StatusForbidden, resp.StatusCode)
	must.Eq(t, "Permission denied", body)

	resp, body = ra.doWithHeaders("PUT", "/v1/acl/policy/readnode", `{"Name":"other","Rules":"node { policy = \"read\" }"}`, mgmt)
	must.Eq(t, http.StatusBadRequest, resp.StatusCode)
	must.Eq(t, "ACL policy name does not match request path", body)
	resp, body = ra.doWithHeaders("PUT", "/v1/acl/policy/readnode", `{"Name":"readnode","Rules":"nodes {}"}`, mgmt)
	must.Eq(t, http.StatusBadRequest, resp.StatusCode)
	must.StrHasPrefix(t, "policy 0 invalid: failed to parse rules", body)
	resp, body = ra.doWithHeaders("PUT", "/v1/acl/policy/readnode", `{"Name":"readnode","Rules":"node { policy = \"read\" }"}`, mgmt)
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	must.Eq(t, "", body)
	must.NotEq(t, "", resp.Header.Get("X-Nomad-Index"))

	resp, body = ra.doWithHeaders("GET", "/v1/acl/policy/missing", "", mgmt)
	must.Eq(t, http.StatusNotFound, resp.StatusCode)
	must.Eq(t, "ACL policy not found", body)

	// A bearer token, the scheme in any case.
	resp, body = ra.doWithHeaders("PUT", "/v1/acl/token", `{"Name":"ci","Type":"client","Policies":["readnode"],"ExpirationTTL":"1h"}`,
		map[string]string{"Authorization": "bearer " + boot.SecretID})
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	var tok structs.ACLToken
	must.NoError(t, json.Unmarshal([]byte(body), &tok))
	must.Eq(t, time.Hour, tok.ExpirationTTL)
	must.StrContains(t, body, `"ExpirationTTL":"1h0m0s"`)

	resp, body = ra.doWithHeaders("PUT", "/v1/acl/token", `{"Type":"client"}`, mgmt)
	must.Eq(t, http.StatusBadRequest, resp.StatusCode)
	must.Eq(t, "token 0 invalid: client token missing policies or roles", body)
	resp, body = ra.doWithHeaders("PUT", "/v1/acl/token/"+tok.AccessorID, `{"AccessorID":"other","Type":"client"}`, mgmt)
	must.Eq(t, http.StatusBadRequest, resp.StatusCode)
	must.Eq(t, "ACL token accessor does not match request path", body)

	// Lists never carry secrets.
	resp, body = ra.doWithHeaders("GET", "/v1/acl/tokens", "", mgmt)
	must.Eq(t, http.StatusOK, resp.StatusCode)
	must.StrNotContains(t, body, tok.SecretID)
	must.StrNotContains(t, body, boot.SecretID)
	must.StrContains(t, body, tok.AccessorID)

	self := map[string]string{"X-Nomad-Token": tok.SecretID}
	resp, body = ra.doWithHeaders("GET", "/v1/acl/token/self", "", self)
	must.Eq(t, http.StatusOK, resp.StatusCode)
	must.StrContains(t, body, tok.SecretID)
	resp, body = ra.doWithHeaders("PUT", "/v1/acl/token/self", "", self)
	must.Eq(t, http.StatusMethodNotAllowed, resp.StatusCode)
	must.Eq(t, "Invalid method", body)
	resp, body = ra.doWithHeaders("GET", "/v1/acl/token/self", "", map[string]string{"X-Nomad-Token": structs.GenerateUUID()})
	must.Eq(t, http.StatusForbidden, resp.StatusCode)
	must.Eq(t, "Permission denied", body)
	resp, body = ra.doWithHeaders("GET", "/v1/acl/policy/self", "", self)
	must.Eq(t, http.StatusOK, resp.StatusCode)
	must.StrContains(t, body, `"Name":"readnode"`)

	resp, body = ra.doWithHeaders("GET", "/v1/acl/token/"+structs.GenerateUUID(), "", mgmt)
	must.Eq(t, http.StatusNotFound, resp.StatusCode)
	must.Eq(t, "ACL token not found", body)
	resp, body = ra.doWithHeaders("DELETE", "/v1/acl/token/"+tok.AccessorID, "", mgmt)
	must.Eq(t, http.StatusOK, resp.StatusCode)
	must.Eq(t, "", body)
	resp, body = ra.doWithHeaders("DELETE", "/v1/acl/token/"+tok.AccessorID, "", mgmt)
	must.Eq(t, http.StatusBadRequest, resp.StatusCode)
	must.Eq(t, "Cannot delete nonexistent tokens: "+tok.AccessorID, body)

	// Roles.
	resp, body = ra.doWithHeaders("PUT", "/v1/acl/role", `{"Name":"ops","Policies":[{"Name":"missing"}]}`, mgmt)
	must.Eq(t, http.StatusBadRequest, resp.StatusCode)
	must.Eq(t, "cannot find policy missing", body)
	resp, body = ra.doWithHeaders("PUT", "/v1/acl/role", `{"Name":"ops","Policies":[{"Name":"readnode"}]}`, mgmt)
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	var role structs.ACLRole
	must.NoError(t, json.Unmarshal([]byte(body), &role))
	resp, body = ra.doWithHeaders("PUT", "/v1/acl/role/"+role.ID, `{"ID":"x","Name":"ops","Policies":[{"Name":"readnode"}]}`, mgmt)
	must.Eq(t, http.StatusBadRequest, resp.StatusCode)
	must.Eq(t, "ACL role ID does not match request path", body)
	resp, _ = ra.doWithHeaders("GET", "/v1/acl/role/name/ops", "", mgmt)
	must.Eq(t, http.StatusOK, resp.StatusCode)
	resp, body = ra.doWithHeaders("GET", "/v1/acl/role/"+structs.GenerateUUID(), "", mgmt)
	must.Eq(t, http.StatusNotFound, resp.StatusCode)
	must.Eq(t, "ACL role not found", body)
	resp, _ = ra.doWithHeaders("DELETE", "/v1/acl/role/"+role.ID, "", mgmt)
	must.Eq(t, http.StatusOK, resp.StatusCode)

	// The login routes name the fields a request lacks.
	for p, want := range map[string]string{
		"/v1/acl/login":              "invalid login request: missing auth method name; missing login token",
		"/v1/acl/oidc/auth-url":      "invalid OIDC auth-url request: missing auth method name",
		"/v1/acl/oidc/complete-auth": "invalid OIDC complete-auth request: missing auth method name",
	} {
		resp, body = ra.doWithHeaders("PUT", p, "{}", nil)
		must.Eq(t, http.StatusBadRequest, resp.StatusCode, must.Sprint(p))
		must.StrContains(t, body, want)
	}
}

// TestACLHTTP_NomadClient drives the ACL API with HashiCorp's own Go
// client, as its api tests do (makeACLClient: an agent with ACLs on, then
// a bootstrap without a body).
func TestACLHTTP_NomadClient(t *testing.T) {
	ra := startDevAgentWithACLs(t)
	client, err := nomadapi.NewClient(&nomadapi.Config{Address: ra.base})
	must.NoError(t, err)

	_, _, err = client.ACLTokens().BootstrapOpts("foo-bar", nil)
	must.ErrorContains(t, err, "Unexpected response code: 400 (invalid acl token)")
	boot, wm, err := client.ACLTokens().Bootstrap(nil)
	must.NoError(t, err)
	must.Positive(t, wm.LastIndex)
	client.SetSecretID(boot.SecretID)

	// Policies.
	policies, qm, err := client.ACLPolicies().List(nil)
	must.NoError(t, err)
	must.Len(t, 0, policies)
	must.Positive(t, qm.LastIndex)
	policy := &nomadapi.ACLPolicy{Name: "test", Description: "test", Rules: `namespace "default" { policy = "read" }`}
	_, err = client.ACLPolicies().Upsert(policy, nil)
	must.NoError(t, err)
	info, _, err := client.ACLPolicies().Info("test", nil)
	must.NoError(t, err)
	must.Eq(t, policy.Rules, info.Rules)

	// Roles and tokens.
	role, _, err := client.ACLRoles().Create(&nomadapi.ACLRole{Name: "ops",
		Policies: []*nomadapi.ACLRolePolicyLink{{Name: "test"}}}, nil)
	must.NoError(t, err)
	created, _, err := client.ACLTokens().Create(&nomadapi.ACLToken{Name: "ci", Type: "client",
		Policies: []string{"test"}, Roles: []*nomadapi.ACLTokenRoleLink{{Name: "ops"}}, ExpirationTTL: 10 * time.Minute}, nil)
	must.NoError(t, err)
	must.Eq(t, []*nomadapi.ACLTokenRoleLink{{ID: role.ID, Name: "ops"}}, created.Roles)
	must.Eq(t, 10*time.Minute, created.ExpirationTTL)

	got, _, err := client.ACLTokens().Info(created.AccessorID, nil)
	must.NoError(t, err)
	must.Eq(t, created, got)

	created.Name = "renamed"
	updated, _, err := client.ACLTokens().Update(created, nil)
	must.NoError(t, err)
	must.Eq(t, "renamed", updated.Name)
	created.ExpirationTTL = time.Hour
	_, _, err = client.ACLTokens().Update(created, nil)
	must.ErrorContains(t, err, "cannot update expiration TTL")

	uploaded, _, err := client.ACLTokens().Upload(&nomadapi.ACLToken{AccessorID: structs.GenerateUUID(),
		SecretID: structs.GenerateUUID(), Type: "client", Policies: []string{"test"}}, nil)
	must.NoError(t, err)

	tokens, _, err := client.ACLTokens().List(nil)
	must.NoError(t, err)
	must.Len(t, 3, tokens)
	must.Eq(t, boot.AccessorID, tokens[0].AccessorID, must.Sprint("oldest first"))

	// Pages follow the list's order; filters see the stubs' fields.
	page, qm, err := client.ACLTokens().List(&nomadapi.QueryOptions{PerPage: 2})
	must.NoError(t, err)
	must.Eq(t, []string{tokens[0].AccessorID, tokens[1].AccessorID}, []string{page[0].AccessorID, page[1].AccessorID})
	must.NotEq(t, "", qm.NextToken)
	page, qm, err = client.ACLTokens().List(&nomadapi.QueryOptions{PerPage: 2, NextToken: qm.NextToken})
	must.NoError(t, err)
	must.Len(t, 1, page)
	must.Eq(t, tokens[2].AccessorID, page[0].AccessorID)
	must.Eq(t, "", qm.NextToken)
	page, _, err = client.ACLTokens().List(&nomadapi.QueryOptions{Filter: `Type == "management"`})
	must.NoError(t, err)
	must.Len(t, 1, page)

	selfClient, err := nomadapi.NewClient(&nomadapi.Config{Address: ra.base, SecretID: uploaded.SecretID})
	must.NoError(t, err)
	self, _, err := selfClient.ACLTokens().Self(nil)
	must.NoError(t, err)
	must.Eq(t, uploaded.AccessorID, self.AccessorID)
	must.Eq(t, uploaded.SecretID, self.SecretID)

	byName, _, err := client.ACLRoles().GetByName("ops", nil)
	must.NoError(t, err)
	must.Eq(t, role.ID, byName.ID)
	roles, _, err := client.ACLRoles().List(nil)
	must.NoError(t, err)
	must.Len(t, 1, roles)

	// One-time tokens: made for the caller's token, exchanged once.
	ott, _, err := selfClient.ACLTokens().UpsertOneTimeToken(nil)
	must.NoError(t, err)
	must.Eq(t, uploaded.AccessorID, ott.AccessorID)
	anonClient, err := nomadapi.NewClient(&nomadapi.Config{Address: ra.base})
	must.NoError(t, err)
	_, _, err = anonClient.ACLTokens().UpsertOneTimeToken(nil)
	must.ErrorContains(t, err, "403")
	exchanged, _, err := anonClient.ACLTokens().ExchangeOneTimeToken(ott.OneTimeSecretID, nil)
	must.NoError(t, err)
	must.Eq(t, uploaded.SecretID, exchanged.SecretID)
	_, _, err = anonClient.ACLTokens().ExchangeOneTimeToken(ott.OneTimeSecretID, nil)
	must.ErrorContains(t, err, "403")

	_, err = client.ACLTokens().Delete(uploaded.AccessorID, nil)
	must.NoError(t, err)
	_, err = client.ACLRoles().Delete(role.ID, nil)
	must.NoError(t, err)
	_, err = client.ACLPolicies().Delete("test", nil)
	must.NoError(t, err)
	_, _, err = client.ACLPolicies().Info("test", nil)
	must.ErrorContains(t, err, "404")
}
