package state

import (
	"testing"
	"time"

	"github.com/hashicorp/go-memdb"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

func mockAuthMethod(name string, isDefault bool) *structs.ACLAuthMethod {
	return &structs.ACLAuthMethod{
		Name: name, Type: structs.ACLAuthMethodTypeOIDC, TokenLocality: structs.ACLAuthMethodTokenLocalityLocal,
		TokenNameFormat: structs.DefaultACLAuthMethodTokenNameFormat, MaxTokenTTL: time.Hour, Default: isDefault,
		Config: &structs.ACLAuthMethodConfig{
			OIDCDiscoveryURL: "https://idp.example.com", OIDCClientID: "nomad", BoundAudiences: []string{"nomad"},
			ClaimMappings: map[string]string{"email": "email"}, ExpirationLeeway: time.Second,
		},
		CreateTime: time.Unix(1_700_000_000, 0).UTC(), ModifyTime: time.Unix(1_700_000_000, 0).UTC(),
	}
}

func mockBindingRule(method string) *structs.ACLBindingRule {
	return &structs.ACLBindingRule{
		ID: structs.GenerateUUID(), Description: "engineers", AuthMethod: method,
		Selector: "engineering in list.groups", BindType: structs.ACLBindingRuleBindTypeRole, BindName: "eng",
		CreateTime: time.Unix(1_700_000_000, 0).UTC(), ModifyTime: time.Unix(1_700_000_000, 0).UTC(),
	}
}

func TestACLAuthMethods_UpsertDelete(t *testing.T) {
	s := testStore(t)
	must.NoError(t, s.UpsertACLAuthMethods(10, []*structs.ACLAuthMethod{mockAuthMethod("a", true)}))

	ws := memdb.NewWatchSet()
	m, err := s.ACLAuthMethodByName(ws, "a")
	must.NoError(t, err)
	must.Eq(t, 10, m.CreateIndex)
	must.SliceNotEmpty(t, m.Hash)

	// A second default is refused; the same method stays default on update.
	err = s.UpsertACLAuthMethods(11, []*structs.ACLAuthMethod{mockAuthMethod("b", true)})
	must.ErrorContains(t, err, "default method already exists: a")
	must.ErrorIs(t, err, structs.ErrInvalid)
	must.NoError(t, s.UpsertACLAuthMethods(12, []*structs.ACLAuthMethod{mockAuthMethod("a", true)}))
	must.False(t, ws.Watch(time.After(5*time.Second)), must.Sprint("the watch fires"))
	m, err = s.ACLAuthMethodByName(nil, "a")
	must.NoError(t, err)
	must.Eq(t, 10, m.CreateIndex)
	must.Eq(t, 12, m.ModifyIndex)
	def, err := s.ACLDefaultAuthMethod(nil)
	must.NoError(t, err)
	must.Eq(t, "a", def.Name)

	// Deleting a method deletes its binding rules.
	rule := mockBindingRule("a")
	must.NoError(t, s.UpsertACLBindingRules(13, []*structs.ACLBindingRule{rule}))
	must.NoError(t, s.DeleteACLAuthMethods(14, []string{"a"}))
	got, err := s.ACLBindingRuleByID(nil, rule.ID)
	must.NoError(t, err)
	must.Nil(t, got)
	idx, err := s.Index(TableACLBindingRules)
	must.NoError(t, err)
	must.Eq(t, 14, idx)

	err = s.DeleteACLAuthMethods(15, []string{"a"})
	must.ErrorIs(t, err, structs.ErrACLAuthMethodNotFound)
}

func TestACLBindingRules_UpsertRules(t *testing.T) {
	s := testStore(t)
	must.NoError(t, s.UpsertACLAuthMethods(10, []*structs.ACLAuthMethod{mockAuthMethod("a", false)}))
	rule := mockBindingRule("a")
	must.NoError(t, s.UpsertACLBindingRules(11, []*structs.ACLBindingRule{rule}))

	cases := []struct {
		name string
		edit func(r *structs.ACLBindingRule)
		want string
	}{
		{"missing method", func(r *structs.ACLBindingRule) { r.AuthMethod = "nope" }, "cannot find auth method nope"},
		{"bad selector", func(r *structs.ACLBindingRule) { r.Selector = "groups ==" }, "Selector is invalid"},
		{"no bind name", func(r *structs.ACLBindingRule) { r.BindName = "" }, "BindName is missing"},
		{"bad bind type", func(r *structs.ACLBindingRule) { r.BindType = "root" }, "unsupported BindType 'root'"},
		{"no ID", func(r *structs.ACLBindingRule) { r.ID = "" }, "missing ID"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := mockBindingRule("a")
			tc.edit(r)
			err := s.UpsertACLBindingRules(12, []*structs.ACLBindingRule{r})
			must.ErrorContains(t, err, tc.want)
			must.ErrorIs(t, err, structs.ErrInvalid)
		})
	}

	rules, err := s.ACLBindingRules(nil, rule.ID[:4])
	must.NoError(t, err)
	must.Len(t, 1, rules)
	must.NoError(t, s.DeleteACLBindingRules(13, []string{rule.ID}))
	must.ErrorIs(t, s.DeleteACLBindingRules(14, []string{rule.ID}), structs.ErrACLBindingRuleNotFound)
}
