package fsm

import (
	"bytes"
	"io"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/state/statetest"
	"github.com/opennomad/nomad/structs"
)

// TestFSM_ACL applies the life of the ACL objects through Raft entries —
// bootstrap, policies, a role, a token, refused entries, deletions — and
// restores a snapshot of the result.
func TestFSM_ACL(t *testing.T) {
	f, _ := newTestFSM(t)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

	boot := &structs.ACLToken{Name: "Bootstrap Token", Type: structs.ACLManagementToken, Global: true}
	boot.Canonicalize(now)
	mustApply(t, f, 10, structs.ACLTokenBootstrapRequestType, &structs.ACLTokenBootstrapRequest{Token: boot})
	again := boot.Copy()
	again.AccessorID, again.SecretID = structs.GenerateUUID(), structs.GenerateUUID()
	err := mustFail(t, f, 11, structs.ACLTokenBootstrapRequestType, &structs.ACLTokenBootstrapRequest{Token: again})
	must.ErrorIs(t, err, structs.ErrACLBootstrapDone)

	mustApply(t, f, 12, structs.ACLPoliciesUpsertRequestType, &structs.ACLPolicyUpsertRequest{Policies: []*structs.ACLPolicy{
		{Name: "read", Rules: `node { policy = "read" }`}, {Name: "write", Rules: `node { policy = "write" }`}}})
	role := &structs.ACLRole{ID: structs.GenerateUUID(), Name: "ops", Policies: []*structs.ACLRolePolicyLink{{Name: "write"}}}
	mustApply(t, f, 13, structs.ACLRolesUpsertRequestType, &structs.ACLRolesUpsertRequest{Roles: []*structs.ACLRole{role}})
	tok := &structs.ACLToken{Name: "ci", Type: structs.ACLClientToken, Policies: []string{"read"},
		Roles: []*structs.ACLTokenRoleLink{{ID: role.ID}}, ExpirationTTL: time.Hour}
	tok.Canonicalize(now)
	mustApply(t, f, 14, structs.ACLTokensUpsertRequestType, &structs.ACLTokenUpsertRequest{Tokens: []*structs.ACLToken{tok}})
	ott := &structs.OneTimeToken{OneTimeSecretID: structs.GenerateUUID(), AccessorID: tok.AccessorID,
		ExpiresAt: now.Add(structs.OneTimeTokenTTL)}
	mustApply(t, f, 15, structs.OneTimeTokenUpsertRequestType, &structs.OneTimeTokenUpsertRequest{OneTimeToken: ott})

	err = mustFail(t, f, 16, structs.ACLRolesUpsertRequestType, &structs.ACLRolesUpsertRequest{Roles: []*structs.ACLRole{
		{ID: structs.GenerateUUID(), Name: "ops", Policies: []*structs.ACLRolePolicyLink{{Name: "read"}}}}})
	must.ErrorContains(t, err, "role with name ops already exists")

	got, err := f.State().ACLTokenBySecretID(nil, tok.SecretID)
	must.NoError(t, err)
	must.Eq(t, tok.AccessorID, got.AccessorID)
	must.Eq(t, uint64(14), got.CreateIndex)
	must.True(t, tok.ExpirationTime.Equal(*got.ExpirationTime))

	snap, err := f.Snapshot()
	must.NoError(t, err)
	sink := &memSink{}
	must.NoError(t, snap.Persist(sink))
	fresh, _ := newTestFSM(t)
	must.NoError(t, fresh.Restore(io.NopCloser(bytes.NewReader(sink.Bytes()))))
	statetest.SameState(t, f.State(), fresh.State())
	reset, err := fresh.State().ACLBootstrapIndex()
	must.NoError(t, err)
	must.Eq(t, uint64(10), reset)

	mustApply(t, f, 17, structs.OneTimeTokenDeleteRequestType, &structs.OneTimeTokenDeleteRequest{
		OneTimeSecretIDs: []string{ott.OneTimeSecretID}})
	gone, err := f.State().OneTimeTokenBySecret(nil, ott.OneTimeSecretID)
	must.NoError(t, err)
	must.Nil(t, gone)
	mustApply(t, f, 18, structs.ACLTokensDeleteRequestType, &structs.ACLTokenDeleteRequest{AccessorIDs: []string{tok.AccessorID}})
	mustApply(t, f, 19, structs.ACLRolesDeleteRequestType, &structs.ACLRolesDeleteByIDRequest{ACLRoleIDs: []string{role.ID}})
	mustApply(t, f, 20, structs.ACLPoliciesDeleteRequestType, &structs.ACLPolicyDeleteRequest{Names: []string{"read", "write"}})
	tokens, _ := f.State().ACLTokens(nil, "")
	must.Len(t, 1, tokens, must.Sprint("the bootstrap token stays"))
	policies, _ := f.State().ACLPolicies(nil, "")
	must.Len(t, 0, policies)

	// A reset names the current reset index.
	mustApply(t, f, 21, structs.ACLTokenBootstrapRequestType, &structs.ACLTokenBootstrapRequest{Token: again, ResetIndex: 10})
	reset, _ = f.State().ACLBootstrapIndex()
	must.Eq(t, uint64(21), reset)
}
