package nomad

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/clock"
	"github.com/opennomad/nomad/nomad/endpoints"
	"github.com/opennomad/nomad/structs"
)

// newBootstrappedACLServer starts a server with ACLs on and bootstraps it; it
// returns the server and the bootstrap token.
func newBootstrappedACLServer(t *testing.T, cb func(*Config)) (*Server, *structs.ACLToken) {
	t.Helper()
	s := newTestServer(t, func(c *Config) {
		c.ACLEnabled = true
		if cb != nil {
			cb(c)
		}
	})
	var boot structs.ACLTokenUpsertResponse
	must.NoError(t, s.RPC("ACL.Bootstrap", &structs.ACLTokenBootstrapRequest{}, &boot))
	must.Len(t, 1, boot.Tokens)
	return s, boot.Tokens[0]
}

const aclTestReadNodeRules = `node { policy = "read" }`

func asTokenWrite(secret string) structs.WriteRequest { return structs.WriteRequest{AuthToken: secret} }
func asTokenQuery(secret string) structs.QueryOptions { return structs.QueryOptions{AuthToken: secret} }

// TestACLEndpoint_Disabled: with ACLs off every ACL RPC answers "ACL
// support disabled" but WhoAmI, which names the ACLs-disabled token.
func TestACLEndpoint_Disabled(t *testing.T) {
	s := newTestServer(t, nil)
	calls := []struct {
		method      string
		args, reply interface{}
	}{
		{"ACL.Bootstrap", &structs.ACLTokenBootstrapRequest{}, &structs.ACLTokenUpsertResponse{}},
		{"ACL.UpsertPolicies", &structs.ACLPolicyUpsertRequest{}, &structs.GenericResponse{}},
		{"ACL.DeletePolicies", &structs.ACLPolicyDeleteRequest{}, &structs.GenericResponse{}},
		{"ACL.ListPolicies", &structs.ACLPolicyListRequest{}, &structs.ACLPolicyListResponse{}},
		{"ACL.GetPolicy", &structs.ACLPolicySpecificRequest{Name: "a"}, &structs.SingleACLPolicyResponse{}},
		{"ACL.GetPolicies", &structs.ACLPolicySetRequest{}, &structs.ACLPolicySetResponse{}},
		{"ACL.UpsertTokens", &structs.ACLTokenUpsertRequest{}, &structs.ACLTokenUpsertResponse{}},
		{"ACL.DeleteTokens", &structs.ACLTokenDeleteRequest{}, &structs.GenericResponse{}},
		{"ACL.ListTokens", &structs.ACLTokenListRequest{}, &structs.ACLTokenListResponse{}},
		{"ACL.GetToken", &structs.ACLTokenSpecificRequest{}, &structs.SingleACLTokenResponse{}},
		{"ACL.ResolveToken", &structs.ResolveACLTokenRequest{}, &structs.ResolveACLTokenResponse{}},
		{"ACL.UpsertRoles", &structs.ACLRolesUpsertRequest{}, &structs.ACLRolesUpsertResponse{}},
		{"ACL.DeleteRoles", &structs.ACLRolesDeleteByIDRequest{}, &structs.GenericResponse{}},
		{"ACL.ListRoles", &structs.ACLRolesListRequest{}, &structs.ACLRolesListResponse{}},
		{"ACL.UpsertAuthMethods", &structs.ACLAuthMethodsUpsertRequest{}, &structs.ACLAuthMethodsUpsertResponse{}},
		{"ACL.ListAuthMethods", &structs.ACLAuthMethodsListRequest{}, &structs.ACLAuthMethodsListResponse{}},
		{"ACL.ListBindingRules", &structs.ACLBindingRulesListRequest{}, &structs.ACLBindingRulesListResponse{}},
		{"ACL.GetRole", &structs.ACLRoleByIDRequest{}, &structs.ACLRoleByIDResponse{}},
		{"ACL.GetRoleByName", &structs.ACLRoleByNameRequest{}, &structs.ACLRoleByIDResponse{}},
		{"ACL.UpsertOneTimeToken", &structs.OneTimeTokenUpsertRequest{}, &structs.OneTimeTokenUpsertResponse{}},
		{"ACL.ExchangeOneTimeToken", &structs.OneTimeTokenExchangeRequest{}, &structs.OneTimeTokenExchangeResponse{}},
		{"ACL.ReapExpired", &structs.ACLReapExpiredRequest{}, &structs.GenericResponse{}},
		{"ACL.Login", &structs.ACLLoginRequest{}, &structs.ACLLoginResponse{}},
		{"ACL.OIDCAuthURL", &structs.ACLOIDCAuthURLRequest{}, &structs.ACLOIDCAuthURLResponse{}},
		{"ACL.OIDCCompleteAuth", &structs.ACLOIDCCompleteAuthRequest{}, &structs.ACLLoginResponse{}},
	}
	for _, c := range calls {
		t.Run(c.method, func(t *testing.T) {
			err := s.RPC(c.method, c.args, c.reply)
			must.ErrorIs(t, err, structs.ErrACLDisabled)
		})
	}
	var who structs.SingleACLTokenResponse
	must.NoError(t, s.RPC("ACL.WhoAmI", &structs.ACLWhoAmIRequest{}, &who))
	must.Eq(t, "acls-disabled", who.Token.AccessorID)
}

// TestACLEndpoint_BootstrapOnceAndReset bootstraps, is refused a second
// time, then bootstraps again through the reset file.
func TestACLEndpoint_BootstrapOnceAndReset(t *testing.T) {
	dir := t.TempDir()
	s := newTestServer(t, func(c *Config) { c.ACLEnabled, c.DevMode, c.DataDir = true, false, dir })

	var bad structs.ACLTokenUpsertResponse
	err := s.RPC("ACL.Bootstrap", &structs.ACLTokenBootstrapRequest{BootstrapSecret: "not-a-uuid"}, &bad)
	must.ErrorContains(t, err, "invalid acl token")
	must.ErrorIs(t, err, structs.ErrInvalid)

	secret := structs.GenerateUUID()
	var first structs.ACLTokenUpsertResponse
	must.NoError(t, s.RPC("ACL.Bootstrap", &structs.ACLTokenBootstrapRequest{BootstrapSecret: secret}, &first))
	boot := first.Tokens[0]
	must.Eq(t, secret, boot.SecretID)
	must.Eq(t, "Bootstrap Token", boot.Name)
	must.Eq(t, structs.ACLManagementToken, boot.Type)
	must.True(t, boot.Global)
	must.Eq(t, first.Index, boot.CreateIndex)

	var again structs.ACLTokenUpsertResponse
	err = s.RPC("ACL.Bootstrap", &structs.ACLTokenBootstrapRequest{}, &again)
	must.ErrorIs(t, err, structs.ErrACLBootstrapDone)
	must.ErrorContains(t, err, "ACL bootstrap already done (reset index: "+strconv.FormatUint(first.Index, 10)+")")

	resetFile := filepath.Join(dir, endpoints.ACLBootstrapResetFile)
	must.NoError(t, os.WriteFile(resetFile, []byte("1"), 0o600))
	err = s.RPC("ACL.Bootstrap", &structs.ACLTokenBootstrapRequest{}, &again)
	must.ErrorContains(t, err, "Invalid bootstrap reset index (specified 1, reset index: "+strconv.FormatUint(first.Index, 10)+")")

	must.NoError(t, os.WriteFile(resetFile, []byte(strconv.FormatUint(first.Index, 10)+"\n"), 0o600))
	must.NoError(t, s.RPC("ACL.Bootstrap", &structs.ACLTokenBootstrapRequest{}, &again))
	must.NotEq(t, boot.AccessorID, again.Tokens[0].AccessorID)
	// The reset index moved: the same file allows nothing more.
	err = s.RPC("ACL.Bootstrap", &structs.ACLTokenBootstrapRequest{}, &again)
	must.ErrorContains(t, err, "Invalid bootstrap reset index")
}

// TestACLEndpoint_Policies writes, reads, lists and deletes policies, and
// who may do what.
func TestACLEndpoint_Policies(t *testing.T) {
	s, boot := newBootstrappedACLServer(t, nil)
	mgmt := boot.SecretID

	var wr structs.GenericResponse
	err := s.RPC("ACL.UpsertPolicies", &structs.ACLPolicyUpsertRequest{
		Policies: []*structs.ACLPolicy{{Name: "bad", Rules: `nodes { policy = "read" }`}}, WriteRequest: asTokenWrite(mgmt)}, &wr)
	must.ErrorContains(t, err, "policy 0 invalid: failed to parse rules")
	must.ErrorIs(t, err, structs.ErrInvalid)

	must.NoError(t, s.RPC("ACL.UpsertPolicies", &structs.ACLPolicyUpsertRequest{Policies: []*structs.ACLPolicy{
		{Name: "readnode", Description: "reads nodes", Rules: aclTestReadNodeRules},
		{Name: "anonymous", Rules: aclTestReadNodeRules},
		{Name: "other", Rules: aclTestReadNodeRules},
	}, WriteRequest: asTokenWrite(mgmt)}, &wr))
	must.Positive(t, wr.Index)

	// A client token holding readnode.
	var created structs.ACLTokenUpsertResponse
	must.NoError(t, s.RPC("ACL.UpsertTokens", &structs.ACLTokenUpsertRequest{Tokens: []*structs.ACLToken{
		{Name: "reader", Type: structs.ACLClientToken, Policies: []string{"readnode"}}}, WriteRequest: asTokenWrite(mgmt)}, &created))
	reader := created.Tokens[0].SecretID

	cases := []struct {
		name   string
		secret string
		policy string
		want   error
	}{
		{"management reads any", mgmt, "other", nil},
		{"holder reads its policy", reader, "readnode", nil},
		{"holder may not read another", reader, "other", structs.ErrPermissionDenied},
		{"anyone reads anonymous", "", "anonymous", nil},
		{"anonymous may not read others", "", "readnode", structs.ErrPermissionDenied},
		{"unknown secret", structs.GenerateUUID(), "anonymous", structs.ErrPermissionDenied},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out structs.SingleACLPolicyResponse
			err := s.RPC("ACL.GetPolicy", &structs.ACLPolicySpecificRequest{Name: tc.policy, QueryOptions: asTokenQuery(tc.secret)}, &out)
			if tc.want != nil {
				must.ErrorIs(t, err, tc.want)
				return
			}
			must.NoError(t, err)
			must.Eq(t, tc.policy, out.Policy.Name)
			must.Eq(t, aclTestReadNodeRules, out.Policy.Rules)
			must.NotEq(t, 0, len(out.Policy.Hash))
		})
	}

	var list structs.ACLPolicyListResponse
	must.NoError(t, s.RPC("ACL.ListPolicies", &structs.ACLPolicyListRequest{QueryOptions: asTokenQuery(mgmt)}, &list))
	must.Len(t, 3, list.Policies)
	must.Eq(t, "anonymous", list.Policies[0].Name)
	must.NoError(t, s.RPC("ACL.ListPolicies", &structs.ACLPolicyListRequest{QueryOptions: asTokenQuery(reader)}, &list))
	must.Len(t, 1, list.Policies)
	must.Eq(t, "readnode", list.Policies[0].Name)

	// Writes are for management tokens only.
	err = s.RPC("ACL.UpsertPolicies", &structs.ACLPolicyUpsertRequest{Policies: []*structs.ACLPolicy{
		{Name: "mine", Rules: aclTestReadNodeRules}}, WriteRequest: asTokenWrite(reader)}, &wr)
	must.ErrorIs(t, err, structs.ErrPermissionDenied)

	// Deleting a name that does not exist is fine.
	must.NoError(t, s.RPC("ACL.DeletePolicies", &structs.ACLPolicyDeleteRequest{Names: []string{"other", "never"},
		WriteRequest: asTokenWrite(mgmt)}, &wr))
	var one structs.SingleACLPolicyResponse
	must.NoError(t, s.RPC("ACL.GetPolicy", &structs.ACLPolicySpecificRequest{Name: "other", QueryOptions: asTokenQuery(mgmt)}, &one))
	must.Nil(t, one.Policy)
}

// TestACLEndpoint_Tokens creates, updates, reads, lists and deletes
// tokens.
func TestACLEndpoint_Tokens(t *testing.T) {
	s, boot := newBootstrappedACLServer(t, nil)
	mgmt := boot.SecretID
	var wr structs.GenericResponse
	must.NoError(t, s.RPC("ACL.UpsertPolicies", &structs.ACLPolicyUpsertRequest{Policies: []*structs.ACLPolicy{
		{Name: "readnode", Rules: aclTestReadNodeRules}}, WriteRequest: asTokenWrite(mgmt)}, &wr))
	var roles structs.ACLRolesUpsertResponse
	must.NoError(t, s.RPC("ACL.UpsertRoles", &structs.ACLRolesUpsertRequest{Roles: []*structs.ACLRole{
		{Name: "ops", Policies: []*structs.ACLRolePolicyLink{{Name: "readnode"}}}}, WriteRequest: asTokenWrite(mgmt)}, &roles))
	role := roles.Roles[0]

	invalid := []struct {
		name  string
		token *structs.ACLToken
		want  string
	}{
		{"no grants", &structs.ACLToken{Type: structs.ACLClientToken}, "token 0 invalid: client token missing policies or roles"},
		{"ttl too long", &structs.ACLToken{Type: structs.ACLManagementToken, ExpirationTTL: 48 * time.Hour},
			"expiration time cannot be more than 24h0m0s in the future (was 48h0m0s)"},
		{"ttl too short", &structs.ACLToken{Type: structs.ACLManagementToken, ExpirationTTL: time.Second},
			"expiration time cannot be less than 1m0s in the future (was 1s)"},
		{"unknown role", &structs.ACLToken{Type: structs.ACLClientToken, Roles: []*structs.ACLTokenRoleLink{{Name: "nope"}}},
			"cannot find role nope"},
		{"unknown accessor", &structs.ACLToken{AccessorID: "abc", Type: structs.ACLClientToken, Policies: []string{"x"}},
			"cannot find token abc"},
	}
	for _, tc := range invalid {
		t.Run(tc.name, func(t *testing.T) {
			var out structs.ACLTokenUpsertResponse
			err := s.RPC("ACL.UpsertTokens", &structs.ACLTokenUpsertRequest{Tokens: []*structs.ACLToken{tc.token},
				WriteRequest: asTokenWrite(mgmt)}, &out)
			must.ErrorContains(t, err, tc.want)
			must.ErrorIs(t, err, structs.ErrInvalid)
		})
	}

	var created structs.ACLTokenUpsertResponse
	must.NoError(t, s.RPC("ACL.UpsertTokens", &structs.ACLTokenUpsertRequest{Tokens: []*structs.ACLToken{{
		Name: "ci", Type: structs.ACLClientToken, Policies: []string{"readnode"}, ExpirationTTL: time.Hour,
		Roles: []*structs.ACLTokenRoleLink{{Name: "ops"}, {ID: role.ID}}}}, WriteRequest: asTokenWrite(mgmt)}, &created))
	tok := created.Tokens[0]
	must.True(t, structs.IsUUID(tok.AccessorID))
	must.True(t, structs.IsUUID(tok.SecretID))
	must.Eq(t, []*structs.ACLTokenRoleLink{{ID: role.ID, Name: "ops"}}, tok.Roles)
	must.Eq(t, tok.CreateTime.Add(time.Hour), *tok.ExpirationTime)

	// Updates keep the secret and the expiry; the TTL cannot change.
	upd := tok.Copy()
	upd.Name, upd.SecretID = "renamed", ""
	var updated structs.ACLTokenUpsertResponse
	must.NoError(t, s.RPC("ACL.UpsertTokens", &structs.ACLTokenUpsertRequest{Tokens: []*structs.ACLToken{upd},
		WriteRequest: asTokenWrite(mgmt)}, &updated))
	must.Eq(t, "renamed", updated.Tokens[0].Name)
	must.Eq(t, tok.SecretID, updated.Tokens[0].SecretID)
	must.Eq(t, tok.CreateIndex, updated.Tokens[0].CreateIndex)
	upd.ExpirationTTL = 2 * time.Hour
	err := s.RPC("ACL.UpsertTokens", &structs.ACLTokenUpsertRequest{Tokens: []*structs.ACLToken{upd},
		WriteRequest: asTokenWrite(mgmt)}, &updated)
	must.ErrorContains(t, err, "cannot update expiration TTL")

	// An upload keeps the IDs given.
	upload := &structs.ACLToken{AccessorID: structs.GenerateUUID(), SecretID: structs.GenerateUUID(),
		Type: structs.ACLClientToken, Policies: []string{"readnode"}}
	var uploaded structs.ACLTokenUpsertResponse
	must.NoError(t, s.RPC("ACL.UpsertTokens", &structs.ACLTokenUpsertRequest{Tokens: []*structs.ACLToken{upload},
		WriteRequest: asTokenWrite(mgmt)}, &uploaded))
	must.Eq(t, upload.SecretID, uploaded.Tokens[0].SecretID)

	// The token reads itself; another client token may not.
	var got structs.SingleACLTokenResponse
	must.NoError(t, s.RPC("ACL.GetToken", &structs.ACLTokenSpecificRequest{AccessorID: tok.AccessorID,
		QueryOptions: asTokenQuery(tok.SecretID)}, &got))
	must.Eq(t, tok.SecretID, got.Token.SecretID)
	err = s.RPC("ACL.GetToken", &structs.ACLTokenSpecificRequest{AccessorID: tok.AccessorID,
		QueryOptions: asTokenQuery(upload.SecretID)}, &got)
	must.ErrorIs(t, err, structs.ErrPermissionDenied)
	must.NoError(t, s.RPC("ACL.GetToken", &structs.ACLTokenSpecificRequest{AccessorID: structs.GenerateUUID(),
		QueryOptions: asTokenQuery(mgmt)}, &got))
	must.Nil(t, got.Token)

	var who structs.SingleACLTokenResponse
	must.NoError(t, s.RPC("ACL.WhoAmI", &structs.ACLWhoAmIRequest{QueryOptions: asTokenQuery(tok.SecretID)}, &who))
	must.Eq(t, tok.AccessorID, who.Token.AccessorID)
	must.NoError(t, s.RPC("ACL.WhoAmI", &structs.ACLWhoAmIRequest{}, &who))
	must.Eq(t, "anonymous", who.Token.AccessorID)
	err = s.RPC("ACL.WhoAmI", &structs.ACLWhoAmIRequest{QueryOptions: asTokenQuery(structs.GenerateUUID())}, &who)
	must.ErrorIs(t, err, structs.ErrPermissionDenied)

	var resolved structs.ResolveACLTokenResponse
	must.NoError(t, s.RPC("ACL.ResolveToken", &structs.ResolveACLTokenRequest{SecretID: tok.SecretID}, &resolved))
	must.Eq(t, tok.AccessorID, resolved.Token.AccessorID)
	must.NoError(t, s.RPC("ACL.ResolveToken", &structs.ResolveACLTokenRequest{SecretID: structs.GenerateUUID()}, &resolved))
	must.Nil(t, resolved.Token)

	var list structs.ACLTokenListResponse
	must.NoError(t, s.RPC("ACL.ListTokens", &structs.ACLTokenListRequest{QueryOptions: asTokenQuery(mgmt)}, &list))
	must.Len(t, 3, list.Tokens)
	must.Eq(t, boot.AccessorID, list.Tokens[0].AccessorID, must.Sprint("oldest first"))
	err = s.RPC("ACL.ListTokens", &structs.ACLTokenListRequest{QueryOptions: asTokenQuery(tok.SecretID)}, &list)
	must.ErrorIs(t, err, structs.ErrPermissionDenied)

	// A deleted role drops out of the token's links.
	must.NoError(t, s.RPC("ACL.DeleteRoles", &structs.ACLRolesDeleteByIDRequest{ACLRoleIDs: []string{role.ID},
		WriteRequest: asTokenWrite(mgmt)}, &wr))
	must.NoError(t, s.RPC("ACL.GetToken", &structs.ACLTokenSpecificRequest{AccessorID: tok.AccessorID,
		QueryOptions: asTokenQuery(mgmt)}, &got))
	must.Len(t, 0, got.Token.Roles)

	err = s.RPC("ACL.DeleteTokens", &structs.ACLTokenDeleteRequest{AccessorIDs: []string{tok.AccessorID, "missing"},
		WriteRequest: asTokenWrite(mgmt)}, &wr)
	must.ErrorContains(t, err, "Cannot delete nonexistent tokens: missing")
	must.NoError(t, s.RPC("ACL.DeleteTokens", &structs.ACLTokenDeleteRequest{AccessorIDs: []string{tok.AccessorID},
		WriteRequest: asTokenWrite(mgmt)}, &wr))
	err = s.RPC("ACL.WhoAmI", &structs.ACLWhoAmIRequest{QueryOptions: asTokenQuery(tok.SecretID)}, &who)
	must.ErrorIs(t, err, structs.ErrPermissionDenied)
}

// TestACLEndpoint_Roles creates, renames, reads and deletes roles.
func TestACLEndpoint_Roles(t *testing.T) {
	s, boot := newBootstrappedACLServer(t, nil)
	mgmt := boot.SecretID
	var wr structs.GenericResponse
	must.NoError(t, s.RPC("ACL.UpsertPolicies", &structs.ACLPolicyUpsertRequest{Policies: []*structs.ACLPolicy{
		{Name: "readnode", Rules: aclTestReadNodeRules}}, WriteRequest: asTokenWrite(mgmt)}, &wr))

	invalid := []struct {
		name string
		role *structs.ACLRole
		want string
	}{
		{"no policies", &structs.ACLRole{Name: "a"}, "role 0 invalid: at least one policy should be specified"},
		{"missing policy", &structs.ACLRole{Name: "a", Policies: []*structs.ACLRolePolicyLink{{Name: "nope"}}}, "cannot find policy nope"},
		{"unknown ID", &structs.ACLRole{ID: structs.GenerateUUID(), Name: "a",
			Policies: []*structs.ACLRolePolicyLink{{Name: "readnode"}}}, "cannot find role"},
	}
	for _, tc := range invalid {
		t.Run(tc.name, func(t *testing.T) {
			var out structs.ACLRolesUpsertResponse
			err := s.RPC("ACL.UpsertRoles", &structs.ACLRolesUpsertRequest{Roles: []*structs.ACLRole{tc.role},
				WriteRequest: asTokenWrite(mgmt)}, &out)
			must.ErrorContains(t, err, tc.want)
		})
	}

	var created structs.ACLRolesUpsertResponse
	must.NoError(t, s.RPC("ACL.UpsertRoles", &structs.ACLRolesUpsertRequest{Roles: []*structs.ACLRole{
		{Name: "ops", Policies: []*structs.ACLRolePolicyLink{{Name: "readnode"}, {Name: "readnode"}}}},
		WriteRequest: asTokenWrite(mgmt)}, &created))
	role := created.Roles[0]
	must.True(t, structs.IsUUID(role.ID))
	must.Len(t, 1, role.Policies)

	var dup structs.ACLRolesUpsertResponse
	err := s.RPC("ACL.UpsertRoles", &structs.ACLRolesUpsertRequest{Roles: []*structs.ACLRole{
		{Name: "ops", Policies: []*structs.ACLRolePolicyLink{{Name: "readnode"}}}}, WriteRequest: asTokenWrite(mgmt)}, &dup)
	must.ErrorContains(t, err, "role with name ops already exists")

	var byName structs.ACLRoleByIDResponse
	must.NoError(t, s.RPC("ACL.GetRoleByName", &structs.ACLRoleByNameRequest{RoleName: "ops", QueryOptions: asTokenQuery(mgmt)}, &byName))
	must.Eq(t, role.ID, byName.ACLRole.ID)

	// A linked token reads the role and lists it; an anonymous caller
	// sees nothing.
	var tokens structs.ACLTokenUpsertResponse
	must.NoError(t, s.RPC("ACL.UpsertTokens", &structs.ACLTokenUpsertRequest{Tokens: []*structs.ACLToken{
		{Type: structs.ACLClientToken, Roles: []*structs.ACLTokenRoleLink{{ID: role.ID}}}}, WriteRequest: asTokenWrite(mgmt)}, &tokens))
	linked := tokens.Tokens[0].SecretID
	var byID structs.ACLRoleByIDResponse
	must.NoError(t, s.RPC("ACL.GetRole", &structs.ACLRoleByIDRequest{RoleID: role.ID, QueryOptions: asTokenQuery(linked)}, &byID))
	must.Eq(t, "ops", byID.ACLRole.Name)
	var list structs.ACLRolesListResponse
	must.NoError(t, s.RPC("ACL.ListRoles", &structs.ACLRolesListRequest{QueryOptions: asTokenQuery(linked)}, &list))
	must.Len(t, 1, list.ACLRoles)
	must.NoError(t, s.RPC("ACL.ListRoles", &structs.ACLRolesListRequest{}, &list))
	must.Len(t, 0, list.ACLRoles)
	err = s.RPC("ACL.GetRole", &structs.ACLRoleByIDRequest{RoleID: role.ID}, &byID)
	must.ErrorIs(t, err, structs.ErrPermissionDenied)
	// The linked token holds the role's policy.
	var pol structs.SingleACLPolicyResponse
	must.NoError(t, s.RPC("ACL.GetPolicy", &structs.ACLPolicySpecificRequest{Name: "readnode", QueryOptions: asTokenQuery(linked)}, &pol))

	renamed := role.Copy()
	renamed.Name = "operators"
	var upd structs.ACLRolesUpsertResponse
	must.NoError(t, s.RPC("ACL.UpsertRoles", &structs.ACLRolesUpsertRequest{Roles: []*structs.ACLRole{renamed},
		WriteRequest: asTokenWrite(mgmt)}, &upd))
	must.Eq(t, role.CreateIndex, upd.Roles[0].CreateIndex)
	var who structs.SingleACLTokenResponse
	must.NoError(t, s.RPC("ACL.WhoAmI", &structs.ACLWhoAmIRequest{QueryOptions: asTokenQuery(linked)}, &who))
	must.Eq(t, "operators", who.Token.Roles[0].Name, must.Sprint("reads name roles as they are now"))

	err = s.RPC("ACL.DeleteRoles", &structs.ACLRolesDeleteByIDRequest{ACLRoleIDs: []string{structs.GenerateUUID()},
		WriteRequest: asTokenWrite(mgmt)}, &wr)
	must.ErrorIs(t, err, structs.ErrACLRoleNotFound)
	must.NoError(t, s.RPC("ACL.DeleteRoles", &structs.ACLRolesDeleteByIDRequest{ACLRoleIDs: []string{role.ID},
		WriteRequest: asTokenWrite(mgmt)}, &wr))
}

// TestACLEndpoint_BlockingPolicyList: a policy list waiting on its index
// wakes when a policy is written.
func TestACLEndpoint_BlockingPolicyList(t *testing.T) {
	s, boot := newBootstrappedACLServer(t, nil)
	var first structs.ACLPolicyListResponse
	must.NoError(t, s.RPC("ACL.ListPolicies", &structs.ACLPolicyListRequest{QueryOptions: asTokenQuery(boot.SecretID)}, &first))

	done := make(chan structs.ACLPolicyListResponse, 1)
	errs := make(chan error, 1)
	go func() {
		var out structs.ACLPolicyListResponse
		q := asTokenQuery(boot.SecretID)
		q.MinQueryIndex, q.MaxQueryTime = first.Index, time.Minute
		errs <- s.RPC("ACL.ListPolicies", &structs.ACLPolicyListRequest{QueryOptions: q}, &out)
		done <- out
	}()
	var wr structs.GenericResponse
	must.NoError(t, s.RPC("ACL.UpsertPolicies", &structs.ACLPolicyUpsertRequest{Policies: []*structs.ACLPolicy{
		{Name: "readnode", Rules: aclTestReadNodeRules}}, WriteRequest: asTokenWrite(boot.SecretID)}, &wr))
	select {
	case err := <-errs:
		must.NoError(t, err)
		out := <-done
		must.Len(t, 1, out.Policies)
		must.Eq(t, wr.Index, out.Index)
	case <-time.After(30 * time.Second):
		t.Fatal("the blocking list did not wake")
	}
}

// TestACLEndpoint_ThreeServers: ACL writes through a follower reach the
// leader and replicate to every server, a follower's stale read finds the
// token, and refusals keep their kind across the network hop.
func TestACLEndpoint_ThreeServers(t *testing.T) {
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
	err := follower.RPC("ACL.Bootstrap", &structs.ACLTokenBootstrapRequest{}, &structs.ACLTokenUpsertResponse{})
	must.True(t, structs.IsKind(err, structs.ErrACLBootstrapDone), must.Sprintf("got %v", err))

	mgmt := boot.Tokens[0].SecretID
	var wr structs.GenericResponse
	must.NoError(t, follower.RPC("ACL.UpsertPolicies", &structs.ACLPolicyUpsertRequest{Policies: []*structs.ACLPolicy{
		{Name: "readnode", Rules: aclTestReadNodeRules}}, WriteRequest: asTokenWrite(mgmt)}, &wr))
	var created structs.ACLTokenUpsertResponse
	must.NoError(t, follower.RPC("ACL.UpsertTokens", &structs.ACLTokenUpsertRequest{Tokens: []*structs.ACLToken{
		{Type: structs.ACLClientToken, Policies: []string{"readnode"}}}, WriteRequest: asTokenWrite(mgmt)}, &created))
	client := created.Tokens[0]

	err = follower.RPC("ACL.ListTokens", &structs.ACLTokenListRequest{QueryOptions: asTokenQuery(client.SecretID)},
		&structs.ACLTokenListResponse{})
	must.True(t, structs.IsKind(err, structs.ErrPermissionDenied), must.Sprintf("got %v", err))

	for _, s := range servers {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := s.State().SnapshotMinIndex(ctx, created.Index)
		cancel()
		must.NoError(t, err)
		got, err := s.State().ACLTokenBySecretID(nil, client.SecretID)
		must.NoError(t, err)
		must.Eq(t, client.AccessorID, got.AccessorID)
	}
	q := asTokenQuery(client.SecretID)
	q.AllowStale = true
	var who structs.SingleACLTokenResponse
	must.NoError(t, follower.RPC("ACL.WhoAmI", &structs.ACLWhoAmIRequest{QueryOptions: q}, &who))
	must.Eq(t, client.AccessorID, who.Token.AccessorID)
}

// TestACLEndpoint_OneTimeTokens makes one-time tokens and exchanges them:
// once, before they expire, for a token that still exists.
func TestACLEndpoint_OneTimeTokens(t *testing.T) {
	fake := clock.NewFake(time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC))
	s, boot := newBootstrappedACLServer(t, func(c *Config) { c.Clock = fake })
	mgmt := boot.SecretID

	var anon structs.OneTimeTokenUpsertResponse
	err := s.RPC("ACL.UpsertOneTimeToken", &structs.OneTimeTokenUpsertRequest{}, &anon)
	must.ErrorIs(t, err, structs.ErrPermissionDenied, must.Sprint("the anonymous caller has nothing to hand on"))

	var made structs.OneTimeTokenUpsertResponse
	must.NoError(t, s.RPC("ACL.UpsertOneTimeToken", &structs.OneTimeTokenUpsertRequest{WriteRequest: asTokenWrite(mgmt)}, &made))
	ott := made.OneTimeToken
	must.Eq(t, boot.AccessorID, ott.AccessorID)
	must.True(t, structs.IsUUID(ott.OneTimeSecretID))
	must.Eq(t, fake.Now().Add(10*time.Minute), ott.ExpiresAt)

	var got structs.OneTimeTokenExchangeResponse
	must.NoError(t, s.RPC("ACL.ExchangeOneTimeToken", &structs.OneTimeTokenExchangeRequest{OneTimeSecretID: ott.OneTimeSecretID}, &got))
	must.Eq(t, mgmt, got.Token.SecretID)
	err = s.RPC("ACL.ExchangeOneTimeToken", &structs.OneTimeTokenExchangeRequest{OneTimeSecretID: ott.OneTimeSecretID}, &got)
	must.ErrorIs(t, err, structs.ErrPermissionDenied, must.Sprint("only once"))

	// Expired.
	must.NoError(t, s.RPC("ACL.UpsertOneTimeToken", &structs.OneTimeTokenUpsertRequest{WriteRequest: asTokenWrite(mgmt)}, &made))
	fake.Advance(11 * time.Minute)
	err = s.RPC("ACL.ExchangeOneTimeToken", &structs.OneTimeTokenExchangeRequest{OneTimeSecretID: made.OneTimeToken.OneTimeSecretID}, &got)
	must.ErrorIs(t, err, structs.ErrPermissionDenied)

	// The token it was made for is gone.
	var created structs.ACLTokenUpsertResponse
	must.NoError(t, s.RPC("ACL.UpsertTokens", &structs.ACLTokenUpsertRequest{Tokens: []*structs.ACLToken{
		{Type: structs.ACLManagementToken}}, WriteRequest: asTokenWrite(mgmt)}, &created))
	must.NoError(t, s.RPC("ACL.UpsertOneTimeToken", &structs.OneTimeTokenUpsertRequest{
		WriteRequest: asTokenWrite(created.Tokens[0].SecretID)}, &made))
	var wr structs.GenericResponse
	must.NoError(t, s.RPC("ACL.DeleteTokens", &structs.ACLTokenDeleteRequest{AccessorIDs: []string{created.Tokens[0].AccessorID},
		WriteRequest: asTokenWrite(mgmt)}, &wr))
	err = s.RPC("ACL.ExchangeOneTimeToken", &structs.OneTimeTokenExchangeRequest{OneTimeSecretID: made.OneTimeToken.OneTimeSecretID}, &got)
	must.ErrorIs(t, err, structs.ErrPermissionDenied)
}

// TestACLEndpoint_ReapExpired removes expired tokens and one-time tokens,
// and only those, on the leader's clock; it needs no token.
func TestACLEndpoint_ReapExpired(t *testing.T) {
	fake := clock.NewFake(time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC))
	s, boot := newBootstrappedACLServer(t, func(c *Config) { c.Clock = fake })
	mgmt := boot.SecretID
	var wr structs.GenericResponse
	must.NoError(t, s.RPC("ACL.UpsertPolicies", &structs.ACLPolicyUpsertRequest{Policies: []*structs.ACLPolicy{
		{Name: "readnode", Rules: aclTestReadNodeRules}}, WriteRequest: asTokenWrite(mgmt)}, &wr))
	var created structs.ACLTokenUpsertResponse
	must.NoError(t, s.RPC("ACL.UpsertTokens", &structs.ACLTokenUpsertRequest{Tokens: []*structs.ACLToken{
		{Name: "short", Type: structs.ACLClientToken, Policies: []string{"readnode"}, ExpirationTTL: time.Minute},
		{Name: "long", Type: structs.ACLClientToken, Policies: []string{"readnode"}, ExpirationTTL: time.Hour},
	}, WriteRequest: asTokenWrite(mgmt)}, &created))
	var ott structs.OneTimeTokenUpsertResponse
	must.NoError(t, s.RPC("ACL.UpsertOneTimeToken", &structs.OneTimeTokenUpsertRequest{WriteRequest: asTokenWrite(mgmt)}, &ott))

	// Nothing has expired yet.
	must.NoError(t, s.RPC("ACL.ReapExpired", &structs.ACLReapExpiredRequest{}, &wr))
	tokens, _ := s.State().ACLTokens(nil, "")
	must.Len(t, 3, tokens)

	fake.Advance(11 * time.Minute)
	// An expired token is refused before it is collected.
	var who structs.SingleACLTokenResponse
	err := s.RPC("ACL.WhoAmI", &structs.ACLWhoAmIRequest{QueryOptions: asTokenQuery(created.Tokens[0].SecretID)}, &who)
	must.ErrorIs(t, err, structs.ErrACLTokenExpired)

	must.NoError(t, s.RPC("ACL.ReapExpired", &structs.ACLReapExpiredRequest{}, &wr))
	tokens, _ = s.State().ACLTokens(nil, "")
	must.Len(t, 2, tokens)
	for _, tok := range tokens {
		must.NotEq(t, "short", tok.Name)
	}
	otts, _ := s.State().OneTimeTokens(nil)
	must.Len(t, 0, otts)
}
