package fsm

import (
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

func TestFSM_ACLAuthMethodsAndBindingRules(t *testing.T) {
	f, _ := newTestFSM(t)
	method := &structs.ACLAuthMethod{Name: "sso", Type: structs.ACLAuthMethodTypeOIDC,
		TokenLocality: structs.ACLAuthMethodTokenLocalityLocal, MaxTokenTTL: time.Hour,
		Config: &structs.ACLAuthMethodConfig{OIDCDiscoveryURL: "https://idp.example.com", OIDCClientID: "nomad"}}
	mustApply(t, f, 10, structs.ACLAuthMethodsUpsertRequestType,
		&structs.ACLAuthMethodsUpsertRequest{AuthMethods: []*structs.ACLAuthMethod{method}})
	rule := &structs.ACLBindingRule{ID: structs.GenerateUUID(), AuthMethod: "sso",
		BindType: structs.ACLBindingRuleBindTypeManagement}
	mustApply(t, f, 11, structs.ACLBindingRulesUpsertRequestType,
		&structs.ACLBindingRulesUpsertRequest{ACLBindingRules: []*structs.ACLBindingRule{rule}})

	got, err := f.State().ACLAuthMethodByName(nil, "sso")
	must.NoError(t, err)
	must.Eq(t, "https://idp.example.com", got.Config.OIDCDiscoveryURL)
	stored, err := f.State().ACLBindingRuleByID(nil, rule.ID)
	must.NoError(t, err)
	must.Eq(t, 11, stored.CreateIndex)

	mustApply(t, f, 12, structs.ACLBindingRulesDeleteRequestType,
		&structs.ACLBindingRulesDeleteRequest{ACLBindingRuleIDs: []string{rule.ID}})
	mustApply(t, f, 13, structs.ACLAuthMethodsDeleteRequestType,
		&structs.ACLAuthMethodsDeleteRequest{Names: []string{"sso"}})
	methods, err := f.State().ACLAuthMethods(nil)
	must.NoError(t, err)
	must.Len(t, 0, methods)
}
