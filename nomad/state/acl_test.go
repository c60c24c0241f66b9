package state

import (
	"testing"
	"time"

	"github.com/hashicorp/go-memdb"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

func mockACLPolicy(name string) *structs.ACLPolicy {
	return &structs.ACLPolicy{Name: name, Description: "test", Rules: `node { policy = "read" }`}
}

func mockACLToken(policies ...string) *structs.ACLToken {
	t := &structs.ACLToken{Name: "test", Type: structs.ACLClientToken, Policies: policies}
	t.Canonicalize(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	return t
}

func TestACLPolicies_UpsertListDelete(t *testing.T) {
	s := testStore(t)
	ws := memdb.NewWatchSet()
	_, err := s.ACLPolicies(ws, "")
	must.NoError(t, err)

	a, b := mockACLPolicy("a-read"), mockACLPolicy("b-write")
	must.NoError(t, s.UpsertACLPolicies(10, []*structs.ACLPolicy{b, a}))
	must.False(t, ws.Watch(time.After(5*time.Second)), must.Sprint("the list's watch fires"))
	must.Eq(t, uint64(10), mustIndex(t, s, TableACLPolicies))
	must.Eq(t, uint64(0), a.CreateIndex, must.Sprint("the caller's objects are not written into"))

	changed := a.Copy()
	changed.Description = "changed"
	must.NoError(t, s.UpsertACLPolicies(11, []*structs.ACLPolicy{changed}))
	got, err := s.ACLPolicyByName(nil, "a-read")
	must.NoError(t, err)
	must.Eq(t, "changed", got.Description)
	must.Eq(t, uint64(10), got.CreateIndex)
	must.Eq(t, uint64(11), got.ModifyIndex)
	must.NotEq(t, 0, len(got.Hash))

	list, err := s.ACLPolicies(nil, "")
	must.NoError(t, err)
	must.Len(t, 2, list)
	must.Eq(t, "a-read", list[0].Name)
	list, err = s.ACLPolicies(nil, "b")
	must.NoError(t, err)
	must.Len(t, 1, list)

	// Deleting a name that does not exist is no error.
	must.NoError(t, s.DeleteACLPolicies(12, []string{"a-read", "nope"}))
	got, err = s.ACLPolicyByName(nil, "a-read")
	must.NoError(t, err)
	must.Nil(t, got)
	must.Eq(t, uint64(12), mustIndex(t, s, TableACLPolicies))

	must.ErrorIs(t, s.UpsertACLPolicies(13, []*structs.ACLPolicy{{Name: "bad name"}}), structs.ErrInvalid)
}

func TestACLTokens_UpsertLookupDelete(t *testing.T) {
	s := testStore(t)
	first, second := mockACLToken("a"), mockACLToken("b")
	must.NoError(t, s.UpsertACLTokens(10, []*structs.ACLToken{first}))
	must.NoError(t, s.UpsertACLTokens(11, []*structs.ACLToken{second}))

	bySecret, err := s.ACLTokenBySecretID(nil, second.SecretID)
	must.NoError(t, err)
	must.Eq(t, second.AccessorID, bySecret.AccessorID)
	none, err := s.ACLTokenBySecretID(nil, "")
	must.NoError(t, err)
	must.Nil(t, none)

	list, err := s.ACLTokens(nil, "")
	must.NoError(t, err)
	must.Len(t, 2, list)
	must.Eq(t, first.AccessorID, list[0].AccessorID, must.Sprint("oldest first"))
	list, err = s.ACLTokens(nil, second.AccessorID[:8])
	must.NoError(t, err)
	must.Len(t, 1, list)

	// An update keeps the CreateIndex.
	upd := first.Copy()
	upd.Name = "renamed"
	must.NoError(t, s.UpsertACLTokens(12, []*structs.ACLToken{upd}))
	got, err := s.ACLTokenByAccessorID(nil, first.AccessorID)
	must.NoError(t, err)
	must.Eq(t, "renamed", got.Name)
	must.Eq(t, uint64(10), got.CreateIndex)
	must.Eq(t, uint64(12), got.ModifyIndex)

	// No two tokens share a secret.
	thief := mockACLToken("c")
	thief.SecretID = first.SecretID
	must.ErrorIs(t, s.UpsertACLTokens(13, []*structs.ACLToken{thief}), structs.ErrInvalid)

	// Deleting a missing token refuses the whole write.
	err = s.DeleteACLTokens(13, []string{first.AccessorID, "missing"})
	must.ErrorContains(t, err, "Cannot delete nonexistent tokens: missing")
	got, _ = s.ACLTokenByAccessorID(nil, first.AccessorID)
	must.NotNil(t, got)
	must.NoError(t, s.DeleteACLTokens(13, []string{first.AccessorID}))
	got, _ = s.ACLTokenByAccessorID(nil, first.AccessorID)
	must.Nil(t, got)
}

func TestACLBootstrap_OnceThenReset(t *testing.T) {
	s := testStore(t)
	boot := func() *structs.ACLToken {
		tok := &structs.ACLToken{Name: "Bootstrap Token", Type: structs.ACLManagementToken, Global: true}
		tok.Canonicalize(time.Now())
		return tok
	}
	idx, err := s.ACLBootstrapIndex()
	must.NoError(t, err)
	must.Eq(t, uint64(0), idx)

	must.NoError(t, s.BootstrapACLToken(10, 0, boot()))
	idx, _ = s.ACLBootstrapIndex()
	must.Eq(t, uint64(10), idx)

	cases := []struct {
		name  string
		reset uint64
	}{{"no reset", 0}, {"wrong reset index", 9}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := s.BootstrapACLToken(11, tc.reset, boot())
			must.ErrorIs(t, err, structs.ErrACLBootstrapDone)
			must.ErrorContains(t, err, "ACL bootstrap already done (reset index: 10)")
		})
	}
	must.NoError(t, s.BootstrapACLToken(12, 10, boot()))
	idx, _ = s.ACLBootstrapIndex()
	must.Eq(t, uint64(12), idx)
	tokens, _ := s.ACLTokens(nil, "")
	must.Len(t, 2, tokens)
}

func TestACLRoles_UpsertRules(t *testing.T) {
	s := testStore(t)
	must.NoError(t, s.UpsertACLPolicies(10, []*structs.ACLPolicy{mockACLPolicy("p1")}))
	role := &structs.ACLRole{ID: structs.GenerateUUID(), Name: "ops", Policies: []*structs.ACLRolePolicyLink{{Name: "p1"}}}
	must.NoError(t, s.UpsertACLRoles(11, []*structs.ACLRole{role}))

	cases := []struct {
		name string
		role *structs.ACLRole
		want string
	}{
		{"name taken", &structs.ACLRole{ID: structs.GenerateUUID(), Name: "ops",
			Policies: []*structs.ACLRolePolicyLink{{Name: "p1"}}}, "role with name ops already exists"},
		{"missing policy", &structs.ACLRole{ID: structs.GenerateUUID(), Name: "dev",
			Policies: []*structs.ACLRolePolicyLink{{Name: "nope"}}}, "cannot find policy nope"},
		{"no policies", &structs.ACLRole{ID: structs.GenerateUUID(), Name: "dev"}, "at least one policy should be specified"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			must.ErrorContains(t, s.UpsertACLRoles(12, []*structs.ACLRole{tc.role}), tc.want)
			must.Eq(t, uint64(11), mustIndex(t, s, TableACLRoles))
		})
	}

	byName, err := s.ACLRoleByName(nil, "ops")
	must.NoError(t, err)
	must.Eq(t, role.ID, byName.ID)
	renamed := role.Copy()
	renamed.Name = "operators"
	must.NoError(t, s.UpsertACLRoles(12, []*structs.ACLRole{renamed}))
	byName, _ = s.ACLRoleByName(nil, "ops")
	must.Nil(t, byName)
	byID, _ := s.ACLRoleByID(nil, role.ID)
	must.Eq(t, "operators", byID.Name)
	must.Eq(t, uint64(11), byID.CreateIndex)

	must.ErrorIs(t, s.DeleteACLRoles(13, []string{"missing"}), structs.ErrACLRoleNotFound)
	must.NoError(t, s.DeleteACLRoles(13, []string{role.ID}))
	roles, _ := s.ACLRoles(nil, "")
	must.Len(t, 0, roles)
}

func TestOneTimeTokens_UpsertDelete(t *testing.T) {
	s := testStore(t)
	tok := mockACLToken("p")
	must.NoError(t, s.UpsertACLTokens(10, []*structs.ACLToken{tok}))

	ott := &structs.OneTimeToken{OneTimeSecretID: structs.GenerateUUID(), AccessorID: tok.AccessorID,
		ExpiresAt: time.Date(2026, 1, 2, 3, 14, 5, 0, time.UTC)}
	must.NoError(t, s.UpsertOneTimeToken(11, ott))
	got, err := s.OneTimeTokenBySecret(nil, ott.OneTimeSecretID)
	must.NoError(t, err)
	must.Eq(t, tok.AccessorID, got.AccessorID)
	must.Eq(t, uint64(11), got.CreateIndex)

	// Only for a token that exists.
	orphan := &structs.OneTimeToken{OneTimeSecretID: structs.GenerateUUID(), AccessorID: "gone"}
	must.ErrorIs(t, s.UpsertOneTimeToken(12, orphan), structs.ErrACLTokenNotFound)

	// Only once: a second exchange's delete is refused whole.
	must.ErrorIs(t, s.DeleteOneTimeTokens(12, []string{ott.OneTimeSecretID, "unknown"}), structs.ErrNotFound)
	got, _ = s.OneTimeTokenBySecret(nil, ott.OneTimeSecretID)
	must.NotNil(t, got)
	must.NoError(t, s.DeleteOneTimeTokens(12, []string{ott.OneTimeSecretID}))
	must.ErrorIs(t, s.DeleteOneTimeTokens(13, []string{ott.OneTimeSecretID}), structs.ErrNotFound)
	got, err = s.OneTimeTokenBySecret(nil, ott.OneTimeSecretID)
	must.NoError(t, err)
	must.Nil(t, got)
	must.Eq(t, uint64(12), mustIndex(t, s, TableOneTimeTokens))
}
