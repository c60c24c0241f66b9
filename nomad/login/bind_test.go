package login

import (
	"testing"

	"github.com/hashicorp/go-memdb"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

// fakeRules is a RuleSource of fixed rules, roles and policies.
type fakeRules struct {
	rules    []*structs.ACLBindingRule
	roles    map[string]*structs.ACLRole
	policies map[string]*structs.ACLPolicy
}

func (f *fakeRules) ACLBindingRules(memdb.WatchSet, string) ([]*structs.ACLBindingRule, error) {
	return f.rules, nil
}
func (f *fakeRules) ACLRoleByName(_ memdb.WatchSet, name string) (*structs.ACLRole, error) {
	return f.roles[name], nil
}
func (f *fakeRules) ACLPolicyByName(_ memdb.WatchSet, name string) (*structs.ACLPolicy, error) {
	return f.policies[name], nil
}

// TestBind: selectors over values and lists, bind names filled from the
// claims (lowercased), roles and policies bound only when they exist,
// management over everything, rules of other methods ignored.
func TestBind(t *testing.T) {
	method := &structs.ACLAuthMethod{Name: "corp"}
	rule := func(selector, typ, name string) *structs.ACLBindingRule {
		return &structs.ACLBindingRule{ID: selector + "/" + name, AuthMethod: "corp", Selector: selector, BindType: typ, BindName: name}
	}
	src := &fakeRules{
		roles:    map[string]*structs.ACLRole{"eng": {ID: "role-eng", Name: "eng"}, "ops": {ID: "role-ops", Name: "ops"}},
		policies: map[string]*structs.ACLPolicy{"readonly": {Name: "readonly"}, "team-eng": {Name: "team-eng"}},
	}
	claims := &ClaimSet{structs.ACLAuthClaims{
		Value: map[string]string{"team": "ENG", "admin": "false"},
		List:  map[string][]string{"groups": {"dev", "eng"}},
	}}
	cases := []struct {
		name  string
		rules []*structs.ACLBindingRule
		want  *Bindings
		err   string
	}{
		{"no rules", nil, &Bindings{}, ""},
		{"catch-all policy", []*structs.ACLBindingRule{rule("", "policy", "readonly")},
			&Bindings{Policies: []string{"readonly"}}, ""},
		{"list selector, role", []*structs.ACLBindingRule{rule(`"eng" in list.groups`, "role", "eng"),
			rule(`"ops" in list.groups`, "role", "ops")},
			&Bindings{Roles: []*structs.ACLTokenRoleLink{{ID: "role-eng"}}}, ""},
		{"templated, lowercased", []*structs.ACLBindingRule{rule(`value.team == "ENG"`, "policy", "team-${value.team}")},
			&Bindings{Policies: []string{"team-eng"}}, ""},
		{"missing role skipped", []*structs.ACLBindingRule{rule("", "role", "nope")}, &Bindings{}, ""},
		{"management wins", []*structs.ACLBindingRule{rule("", "policy", "readonly"), rule("", "management", "")},
			&Bindings{Management: true}, ""},
		{"management not selected", []*structs.ACLBindingRule{rule(`value.admin == "true"`, "management", "")},
			&Bindings{}, ""},
		{"other method", []*structs.ACLBindingRule{{ID: "x", AuthMethod: "other", BindType: "management"}}, &Bindings{}, ""},
		{"bad selector matches nothing", []*structs.ACLBindingRule{rule(`value.team ==`, "policy", "readonly")}, &Bindings{}, ""},
		{"unknown value in name", []*structs.ACLBindingRule{rule("", "policy", "${value.nope}")}, nil, "cannot compute"},
		{"invalid computed name", []*structs.ACLBindingRule{rule("", "policy", "a b")}, nil, "is invalid"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src.rules = tc.rules
			got, err := Bind(src, method, claims)
			if tc.err != "" {
				must.ErrorContains(t, err, tc.err)
				must.ErrorIs(t, err, structs.ErrInvalid)
				return
			}
			must.NoError(t, err)
			must.Eq(t, tc.want, got)
			must.Eq(t, tc.want.Management || len(tc.want.Policies)+len(tc.want.Roles) > 0, !got.None())
		})
	}
}
