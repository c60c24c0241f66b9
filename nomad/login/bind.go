package login

import (
	"fmt"
	"slices"

	"github.com/hashicorp/go-bexpr"
	"github.com/hashicorp/go-memdb"

	"github.com/opennomad/nomad/structs"
)

// RuleSource is the state a login's binding reads (the state store).
type RuleSource interface {
	ACLBindingRules(ws memdb.WatchSet, prefix string) ([]*structs.ACLBindingRule, error)
	ACLRoleByName(ws memdb.WatchSet, name string) (*structs.ACLRole, error)
	ACLPolicyByName(ws memdb.WatchSet, name string) (*structs.ACLPolicy, error)
}

// Bindings are what the token of a login holds: everything
// (Management), or its policies and roles.
type Bindings struct {
	Management bool
	Policies   []string
	Roles      []*structs.ACLTokenRoleLink
}

// None reports whether the login earned nothing: Nomad then refuses it
// rather than make a token that can do nothing.
func (b *Bindings) None() bool {
	return !b.Management && len(b.Policies) == 0 && len(b.Roles) == 0
}

// Bind evaluates the method's binding rules against a login's claims. A
// rule applies when its selector matches (an empty selector matches every
// login; one that fails to evaluate matches none). A management rule
// makes a management token, whatever else applies. A role or policy rule
// fills its BindName template with the claims' values, lowercased, and
// binds the role or policy of that name if it exists now; one that does
// not is skipped, so a rule may name roles that are created later. A
// template that names a value the login lacks, or makes a name no role
// or policy may have, is an error of kind structs.ErrInvalid.
func Bind(src RuleSource, method *structs.ACLAuthMethod, claims *ClaimSet) (*Bindings, error) {
	rules, err := src.ACLBindingRules(nil, "")
	if err != nil {
		return nil, err
	}
	out := &Bindings{}
	vars := claims.vars()
	for _, rule := range rules {
		if rule.AuthMethod != method.Name || !selectorMatches(rule.Selector, claims) {
			continue
		}
		if rule.BindType == structs.ACLBindingRuleBindTypeManagement {
			return &Bindings{Management: true}, nil
		}
		name, err := interpolate(rule.BindName, vars, true)
		if err != nil {
			return nil, structs.KindErrorf(structs.ErrInvalid, "binding rule %s: cannot compute %q bind name: %v",
				rule.ID, rule.BindType, err)
		}
		if !structs.IsValidACLName(name) {
			return nil, structs.KindErrorf(structs.ErrInvalid, "binding rule %s: computed %q bind name is invalid: %q",
				rule.ID, rule.BindType, name)
		}
		switch rule.BindType {
		case structs.ACLBindingRuleBindTypeRole:
			role, err := src.ACLRoleByName(nil, name)
			if err != nil {
				return nil, err
			}
			if role != nil && !slices.ContainsFunc(out.Roles, func(l *structs.ACLTokenRoleLink) bool { return l.ID == role.ID }) {
				out.Roles = append(out.Roles, &structs.ACLTokenRoleLink{ID: role.ID})
			}
		case structs.ACLBindingRuleBindTypePolicy:
			policy, err := src.ACLPolicyByName(nil, name)
			if err != nil {
				return nil, err
			}
			if policy != nil && !slices.Contains(out.Policies, policy.Name) {
				out.Policies = append(out.Policies, policy.Name)
			}
		default:
			return nil, fmt.Errorf("binding rule %s: unknown bind type %q", rule.ID, rule.BindType)
		}
	}
	return out, nil
}

// selectorMatches evaluates a rule's selector over the claims.
func selectorMatches(selector string, claims *ClaimSet) bool {
	if selector == "" {
		return true
	}
	eval, err := bexpr.CreateEvaluator(selector)
	if err != nil {
		return false
	}
	ok, err := eval.Evaluate(&claims.ACLAuthClaims)
	return err == nil && ok
}
