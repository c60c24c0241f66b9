package endpoints

import (
	"reflect"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/acl"
	"github.com/opennomad/nomad/structs"
)

var authInfoType = reflect.TypeOf((*structs.AuthInfo)(nil)).Elem()

// TestRules_EveryMethodDeclaresOne: every method the registry serves has
// a rule beside its endpoint, every rule names a served method, and a
// rule that checks a token is on a method whose request carries one.
func TestRules_EveryMethodDeclaresOne(t *testing.T) {
	for _, e := range All(nil) {
		typ := reflect.TypeOf(e.Receiver)
		served := map[string]bool{}
		for i := 0; i < typ.NumMethod(); i++ {
			m := typ.Method(i)
			served[m.Name] = true
			rule, ok := e.Rules[m.Name]
			if !ok {
				t.Errorf("%s.%s has no rule: add one to the endpoint's rules table", e.Name, m.Name)
				continue
			}
			if rule.ChecksToken() && !m.Type.In(1).Implements(authInfoType) {
				t.Errorf("%s.%s: rule %q checks a token, but %s carries none", e.Name, m.Name, rule.Need, m.Type.In(1))
			}
		}
		for name := range e.Rules {
			if !served[name] {
				t.Errorf("%s: rule for %q, which is not a served method", e.Name, name)
			}
		}
	}
}

// TestRules_Allow shows what each kind of rule lets through, for a
// management token, a token reading namespace "web", and no permissions.
func TestRules_Allow(t *testing.T) {
	readWeb, err := acl.Parse(`namespace "web" { policy = "read" }
node { policy = "read" }`)
	must.NoError(t, err)
	reader, err := acl.NewACL(false, []*acl.Policy{readWeb})
	must.NoError(t, err)
	none, err := acl.NewACL(false, nil)
	must.NoError(t, err)

	cases := []struct {
		name                  string
		rule                  Rule
		ns                    string
		management, read, nil bool
	}{
		{"public", Public(), "web", true, true, true},
		{"internal", Internal(), "web", true, true, true},
		{"self", Self("the method's own"), "web", true, true, true},
		{"read-job in the namespace read", NamespaceAny(acl.NamespaceCapabilityReadJob), "web", true, true, false},
		{"read-job elsewhere", NamespaceAny(acl.NamespaceCapabilityReadJob), "db", true, false, false},
		{"read-job in any namespace", NamespaceAny(acl.NamespaceCapabilityReadJob), "*", true, true, false},
		{"submit-job or register-job, read only", NamespaceAny(acl.NamespaceCapabilitySubmitJob, acl.NamespaceCapabilityRegisterJob), "web", true, false, false},
		{"node read", NodeRead(), "", true, true, false},
		{"node write", NodeWrite(), "", true, false, false},
		{"operator read", OperatorRead(), "", true, false, false},
		{"keyring-read", OperatorCapability(acl.OperatorCapabilityKeyringRead), "", true, false, false},
		{"management", Management(), "", true, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			must.Eq(t, tc.management, tc.rule.Allows(acl.ManagementACL, tc.ns))
			must.Eq(t, tc.read, tc.rule.Allows(reader, tc.ns))
			// A token without policies, and no ACL at all, pass only the
			// rules that check no token.
			must.Eq(t, tc.nil, tc.rule.Allows(none, tc.ns))
			must.Eq(t, tc.nil, tc.rule.Allows(nil, tc.ns))
			must.True(t, tc.rule.Allows(acl.ACLsDisabled, tc.ns))
		})
	}
}
