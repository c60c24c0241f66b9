package endpoints

import (
	"github.com/opennomad/nomad/acl"
)

// A Rule is what one RPC method needs of its caller's ACL token. Every
// served method has one, declared in a table beside its endpoint
// (jobRules, nodeRules, ...), and the RPC registry checks it before the
// method runs, for the namespace the request targets: the one
// authorization step of every endpoint. A method that serves several
// namespaces ("*") or objects of other namespaces than the request's
// filters what it answers with the same token's ACL (Server.ResolveACL).
//
// rules_test.go fails when a served method has no rule, so a method added
// without one cannot be served.
type Rule struct {
	// Need says in words what the rule asks for, as an operator reads it
	// in the documentation and in test failures.
	Need string
	// kind tells the registry how to apply the rule.
	kind ruleKind
	// allow decides, for kind ruleACL, whether a token's ACL passes for
	// the request's namespace.
	allow func(a *acl.ACL, ns string) bool
}

type ruleKind uint8

const (
	// ruleACL: the token's ACL must pass allow.
	ruleACL ruleKind = iota
	// rulePublic: anyone, with or without a token.
	rulePublic
	// ruleInternal: the servers' and clients' own calls (workers, the
	// garbage collector, client nodes). They carry no user token. With
	// mutual TLS they will be held to a server or client certificate;
	// until then, as in Nomad without TLS, the RPC port itself must be
	// reachable only by the cluster (see the security page).
	ruleInternal
	// ruleSelf: the method authorizes itself (the ACL endpoints, whose
	// rules depend on the object asked for).
	ruleSelf
)

// Rules maps the methods of one endpoint ("Register") to their rules.
type Rules map[string]Rule

// Public is a rule any caller passes.
func Public() Rule { return Rule{Need: "nothing", kind: rulePublic} }

// Internal is the rule of the cluster's own calls; see ruleInternal.
func Internal() Rule { return Rule{Need: "a server or client of the cluster", kind: ruleInternal} }

// Self is the rule of a method that authorizes its request itself; need
// says what it asks for.
func Self(need string) Rule { return Rule{Need: need, kind: ruleSelf} }

// NamespaceAny passes a token that holds any of the capabilities in the
// request's namespace ("*": in any namespace).
func NamespaceAny(capabilities ...string) Rule {
	need := "namespace capability " + capabilities[0]
	for _, c := range capabilities[1:] {
		need += " or " + c
	}
	return Rule{Need: need, allow: func(a *acl.ACL, ns string) bool { return a.AllowNsOpAny(ns, capabilities...) }}
}

// NodeRead passes node read; NodeWrite node write.
func NodeRead() Rule  { return level("node read", (*acl.ACL).AllowNodeRead) }
func NodeWrite() Rule { return level("node write", (*acl.ACL).AllowNodeWrite) }

// AgentRead passes agent read; AgentWrite agent write.
func AgentRead() Rule  { return level("agent read", (*acl.ACL).AllowAgentRead) }
func AgentWrite() Rule { return level("agent write", (*acl.ACL).AllowAgentWrite) }

// OperatorRead passes operator read; OperatorWrite operator write.
func OperatorRead() Rule  { return level("operator read", (*acl.ACL).AllowOperatorRead) }
func OperatorWrite() Rule { return level("operator write", (*acl.ACL).AllowOperatorWrite) }

// OperatorCapability passes a token holding the operator capability
// (snapshot-save, keyring-read, ...).
func OperatorCapability(capability string) Rule {
	return Rule{Need: "operator capability " + capability,
		allow: func(a *acl.ACL, _ string) bool { return a.AllowOperatorCapability(capability) }}
}

// Management passes management tokens only.
func Management() Rule { return level("a management token", (*acl.ACL).IsManagement) }

func level(need string, allow func(*acl.ACL) bool) Rule {
	return Rule{Need: need, allow: func(a *acl.ACL, _ string) bool { return allow(a) }}
}

// ChecksToken reports whether the registry must resolve the caller's
// token for this rule.
func (r Rule) ChecksToken() bool { return r.kind == ruleACL }

// Allows reports whether an ACL passes the rule for namespace ns. Rules
// that do not check a token allow every ACL.
func (r Rule) Allows(a *acl.ACL, ns string) bool {
	if r.kind != ruleACL {
		return true
	}
	return r.allow(a, ns)
}
