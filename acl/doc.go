// Package acl is Nomad's ACL policy language and the permission object
// compiled from it. It is pure: no I/O, no state store, nothing of the
// server. It imports only package structs (for the error kind
// structs.ErrInvalid) and github.com/hashicorp/hcl v1 at
// v1.0.1-vault-7, the HCL library and version Nomad itself uses, so that
// policies written for Nomad parse here exactly as they do there.
//
// # Files
//
//   - capabilities.go: the policy values and capability names, which
//     values each block accepts, and the shorthand expansions.
//   - policy.go: Policy and its blocks, and Parse.
//   - glob.go: label globs, capability sets and the label lookup table.
//   - acl.go: ACL, NewACL, ManagementACL, ACLsDisabled and the Allow
//     methods the endpoints call.
//
// # Policies
//
// A policy's rules are HCL1, or HCL1-JSON when the first non-space
// character is "{":
//
//	namespace "default" {
//	  policy       = "read"
//	  capabilities = ["alloc-exec"]
//	  variables {
//	    path "app/*" { capabilities = ["read"] }
//	  }
//	}
//	namespace "ci-*" { policy = "write" }
//	node_pool "gpu" { policy = "read" }
//	host_volume "certs" { policy = "read" }
//	node     { policy = "read" }
//	agent    { policy = "read" }
//	operator { policy = "read" capabilities = ["snapshot-save"] }
//	quota    { policy = "read" }
//	plugin   { policy = "list" }
//
// Parse checks them strictly, as Nomad does when a policy is written, and
// expands each policy value ("read", "write", "scale", "deny") into the
// capabilities it stands for, added to the block's explicit list. Every
// Parse error is of kind structs.ErrInvalid, so the HTTP layer answers
// 400; errors give the line of the offending value in the HCL syntax
// (hcl's JSON parser records no lines).
//
// What the hcl library does, Parse does too: its JSON parser stops
// quietly at text it cannot read, keeping what came before. As in Nomad,
// empty rules are an empty policy, not an error. Parse is stricter than the
// bare decoder in two ways, each refusing what Nomad would accept without
// a word: a labelled block without its label (namespace { ... } would be
// a namespace named after its first key), and a label on a block that
// takes none. An argument set twice, which the decoder refuses with an
// obscure message, is reported as a duplicate key. And Parse reads nested
// JSON objects the way the HCL syntax reads blocks: the decoder alone
// would give the path's capabilities in
// {"namespace":{"a":{"variables":{"path":{"x":{...}}}}}} to namespace "a".
//
// # Permissions
//
// NewACL merges the policies of one token into an immutable *ACL.
// Capabilities are united per exact label; deny wipes the label's set and
// blocks later additions, whatever the order of the policies. The
// level-only blocks (agent, node, operator, quota, plugin) keep the
// highest level: deny > write > read > list. Plugin write passes neither
// AllowPluginRead nor AllowPluginList, as in Nomad.
//
// A name (namespace, node pool, host volume) is governed by the block
// whose label equals it; failing that, by the matching glob ("*" is any
// run of characters, "/" included) with the smallest
// len(name) - len(glob) + count("*") — the one that leaves the least to
// its stars. Equal globs are decided by their sort order, so the answer
// never depends on the order policies were written. Variables rules are
// looked up the same way over the pair (namespace, path).
//
// An operation on namespace "*" passes when any namespace grants it,
// which list endpoints across namespaces rely on. A nil *ACL allows
// nothing; ManagementACL and ACLsDisabled allow everything.
//
// Not yet here: the implicit variables rules of workload identities, and
// Enterprise blocks (sentinel), which a Community build refuses as
// unknown keys.
package acl
