package nomad

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

// startACLRegion is startRegionServer with ACLs on and regionA as the
// authoritative region.
func startACLRegion(t *testing.T, region, name, replicationToken, join string) *Server {
	t.Helper()
	cfg := testConfig()
	cfg.Region = region
	cfg.NodeName = name
	cfg.ACLEnabled = true
	cfg.AuthoritativeRegion = "regionA"
	cfg.ReplicationToken = replicationToken
	s := startConfiguredRegionServer(t, cfg, 1, join)
	waitForLeadership(t, s)
	return s
}

// Shared ACL objects are written in the authoritative region, whichever
// region is asked, and copied into the other: policies, roles, auth
// methods, binding rules and global tokens, their changes and deletions.
// Local tokens stay where they were made.
func TestACLReplication_TwoRegions(t *testing.T) {
	a := startACLRegion(t, "regionA", "a1", "", "")
	var boot structs.ACLTokenUpsertResponse
	must.NoError(t, a.RPC("ACL.Bootstrap", &structs.ACLTokenBootstrapRequest{}, &boot))
	mgmt := boot.Tokens[0].SecretID
	b := startACLRegion(t, "regionB", "b1", mgmt, a.config.Cluster.SerfAddr)

	// Objects made in regionA.
	var gr structs.GenericResponse
	must.NoError(t, a.RPC("ACL.UpsertPolicies", &structs.ACLPolicyUpsertRequest{Policies: []*structs.ACLPolicy{
		{Name: "readnode", Rules: aclTestReadNodeRules}}, WriteRequest: asTokenWrite(mgmt)}, &gr))
	var roles structs.ACLRolesUpsertResponse
	must.NoError(t, a.RPC("ACL.UpsertRoles", &structs.ACLRolesUpsertRequest{Roles: []*structs.ACLRole{
		{Name: "ops", Policies: []*structs.ACLRolePolicyLink{{Name: "readnode"}}}}, WriteRequest: asTokenWrite(mgmt)}, &roles))
	var methods structs.ACLAuthMethodsUpsertResponse
	must.NoError(t, a.RPC("ACL.UpsertAuthMethods", &structs.ACLAuthMethodsUpsertRequest{
		AuthMethods: []*structs.ACLAuthMethod{testOIDCAuthMethod("sso", true)}, WriteRequest: asTokenWrite(mgmt)}, &methods))
	var rules structs.ACLBindingRulesUpsertResponse
	must.NoError(t, a.RPC("ACL.UpsertBindingRules", &structs.ACLBindingRulesUpsertRequest{
		ACLBindingRules: []*structs.ACLBindingRule{{AuthMethod: "sso", BindType: structs.ACLBindingRuleBindTypeRole, BindName: "ops"}},
		WriteRequest:    asTokenWrite(mgmt)}, &rules))
	global := upsertToken(t, a, mgmt, &structs.ACLToken{Name: "g", Type: structs.ACLClientToken, Global: true,
		Roles: []*structs.ACLTokenRoleLink{{Name: "ops"}}})
	localA := upsertToken(t, a, mgmt, &structs.ACLToken{Name: "l", Type: structs.ACLClientToken, Policies: []string{"readnode"}})

	waitFor(t, func() bool {
		st := b.State()
		p, _ := st.ACLPolicyByName(nil, "readnode")
		r, _ := st.ACLRoleByID(nil, roles.Roles[0].ID)
		m, _ := st.ACLAuthMethodByName(nil, "sso")
		br, _ := st.ACLBindingRuleByID(nil, rules.ACLBindingRules[0].ID)
		g, _ := st.ACLTokenByAccessorID(nil, global.AccessorID)
		return p != nil && r != nil && m != nil && br != nil && g != nil
	})
	// The copies are the same objects, and the global tokens work in
	// regionB: the bootstrap token and the one linked to a role.
	p, _ := b.State().ACLPolicyByName(nil, "readnode")
	must.Eq(t, aclTestReadNodeRules, p.Rules)
	g, _ := b.State().ACLTokenByAccessorID(nil, global.AccessorID)
	must.Eq(t, global.SecretID, g.SecretID)
	must.Eq(t, global.Hash, g.Hash)
	aclObj, err := b.ResolveACL(global.SecretID)
	must.NoError(t, err)
	must.True(t, aclObj.AllowNodeRead())
	must.False(t, aclObj.AllowNodeWrite())
	_, err = b.ResolveACL(mgmt)
	must.NoError(t, err)
	// A local token is its region's alone.
	l, _ := b.State().ACLTokenByAccessorID(nil, localA.AccessorID)
	must.Nil(t, l)

	// Writes made through regionB land in regionA first.
	must.NoError(t, b.RPC("ACL.UpsertPolicies", &structs.ACLPolicyUpsertRequest{Policies: []*structs.ACLPolicy{
		{Name: "viab", Rules: aclTestReadNodeRules}}, WriteRequest: asTokenWrite(mgmt)}, &gr))
	inA, _ := a.State().ACLPolicyByName(nil, "viab")
	must.NotNil(t, inA)
	globalViaB := upsertToken(t, b, mgmt, &structs.ACLToken{Name: "gb", Type: structs.ACLClientToken, Global: true,
		Policies: []string{"viab"}})
	inA2, _ := a.State().ACLTokenByAccessorID(nil, globalViaB.AccessorID)
	must.NotNil(t, inA2)
	localB := upsertToken(t, b, mgmt, &structs.ACLToken{Name: "lb", Type: structs.ACLClientToken, Policies: []string{"viab"}})
	notInA, _ := a.State().ACLTokenByAccessorID(nil, localB.AccessorID)
	must.Nil(t, notInA)
	err = b.RPC("ACL.UpsertTokens", &structs.ACLTokenUpsertRequest{Tokens: []*structs.ACLToken{
		{Type: structs.ACLClientToken, Global: true, Policies: []string{"viab"}},
		{Type: structs.ACLClientToken, Policies: []string{"viab"}}}, WriteRequest: asTokenWrite(mgmt)},
		&structs.ACLTokenUpsertResponse{})
	must.ErrorIs(t, err, structs.ErrInvalid)
	// So is a deletion mixing them (global is regionB's copy by now), and
	// it deletes neither.
	err = b.RPC("ACL.DeleteTokens", &structs.ACLTokenDeleteRequest{
		AccessorIDs: []string{global.AccessorID, localB.AccessorID}, WriteRequest: asTokenWrite(mgmt)}, &gr)
	must.ErrorIs(t, err, structs.ErrInvalid)
	kept, _ := b.State().ACLTokenByAccessorID(nil, localB.AccessorID)
	must.NotNil(t, kept)
	// The bootstrap is regionA's, done already.
	err = b.RPC("ACL.Bootstrap", &structs.ACLTokenBootstrapRequest{}, &structs.ACLTokenUpsertResponse{})
	must.ErrorIs(t, err, structs.ErrACLBootstrapDone)

	// Changes and deletions follow; the local token of regionB stays.
	must.NoError(t, a.RPC("ACL.UpsertPolicies", &structs.ACLPolicyUpsertRequest{Policies: []*structs.ACLPolicy{
		{Name: "readnode", Description: "changed", Rules: aclTestReadNodeRules}}, WriteRequest: asTokenWrite(mgmt)}, &gr))
	must.NoError(t, a.RPC("ACL.DeleteBindingRules", &structs.ACLBindingRulesDeleteRequest{
		ACLBindingRuleIDs: []string{rules.ACLBindingRules[0].ID}, WriteRequest: asTokenWrite(mgmt)}, &gr))
	must.NoError(t, b.RPC("ACL.DeleteTokens", &structs.ACLTokenDeleteRequest{
		AccessorIDs: []string{global.AccessorID}, WriteRequest: asTokenWrite(mgmt)}, &gr))
	waitFor(t, func() bool {
		st := b.State()
		p, _ := st.ACLPolicyByName(nil, "readnode")
		br, _ := st.ACLBindingRuleByID(nil, rules.ACLBindingRules[0].ID)
		g, _ := st.ACLTokenByAccessorID(nil, global.AccessorID)
		v, _ := st.ACLPolicyByName(nil, "viab")
		return p != nil && p.Description == "changed" && br == nil && g == nil && v != nil
	})
	gone, _ := a.State().ACLTokenByAccessorID(nil, global.AccessorID)
	must.Nil(t, gone)
	stays, _ := b.State().ACLTokenByAccessorID(nil, localB.AccessorID)
	must.NotNil(t, stays)
}

// upsertToken creates tok through s and returns the stored token.
func upsertToken(t *testing.T, s *Server, mgmt string, tok *structs.ACLToken) *structs.ACLToken {
	t.Helper()
	var out structs.ACLTokenUpsertResponse
	must.NoError(t, s.RPC("ACL.UpsertTokens", &structs.ACLTokenUpsertRequest{Tokens: []*structs.ACLToken{tok},
		WriteRequest: asTokenWrite(mgmt)}, &out))
	must.Len(t, 1, out.Tokens)
	return out.Tokens[0]
}
