package acl

import (
	"errors"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

// withoutRaw returns p with Raw cleared, to compare the HCL and JSON forms
// of one policy.
func withoutRaw(p *Policy) *Policy {
	if p == nil {
		return nil
	}
	c := *p
	c.Raw = ""
	return &c
}

// TestParse parses each policy in its HCL and its JSON form: both must
// give the same Policy, shorthands expanded.
func TestParse(t *testing.T) {
	cases := []struct {
		name string
		hcl  string
		json string
		want *Policy
	}{
		{
			name: "namespace read",
			hcl:  `namespace "default" { policy = "read" }`,
			json: `{"namespace":{"default":{"policy":"read"}}}`,
			want: &Policy{Namespaces: []*NamespacePolicy{{
				Name: "default", Policy: "read",
				Capabilities: []string{"list-jobs", "parse-job", "read-job", "csi-list-volume", "csi-read-volume",
					"read-job-scaling", "list-scaling-policies", "read-scaling-policy", "host-volume-read"},
			}}},
		},
		{
			name: "explicit capabilities come first, then the expansion",
			hcl: `namespace "default" {
				policy       = "scale"
				capabilities = ["alloc-node-exec"]
			}`,
			json: `{"namespace":{"default":{"policy":"scale","capabilities":["alloc-node-exec"]}}}`,
			want: &Policy{Namespaces: []*NamespacePolicy{{
				Name: "default", Policy: "scale",
				Capabilities: []string{"alloc-node-exec", "list-scaling-policies", "read-scaling-policy",
					"read-job-scaling", "scale-job", "read-job", "submit-recommendation"},
			}}},
		},
		{
			name: "host-volume capabilities imply lesser ones",
			hcl:  `namespace "a" { capabilities = ["host-volume-register"] }`,
			json: `{"namespace":{"a":{"capabilities":["host-volume-register"]}}}`,
			want: &Policy{Namespaces: []*NamespacePolicy{{
				Name: "a", Capabilities: []string{"host-volume-register", "host-volume-create", "host-volume-read"},
			}}},
		},
		{
			name: "two namespaces, a glob among them, and variables",
			hcl: `
				namespace "prod-*" {
				  policy = "deny"
				  variables {
				    path "app/*" { capabilities = ["read"] }
				    path "secret" { capabilities = ["write", "deny"] }
				  }
				}
				namespace "dev" { capabilities = ["submit-job"] }`,
			json: `{"namespace":{
				"prod-*":{"policy":"deny","variables":{"path":{
					"app/*":{"capabilities":["read"]},
					"secret":{"capabilities":["write","deny"]}}}},
				"dev":{"capabilities":["submit-job"]}}}`,
			want: &Policy{Namespaces: []*NamespacePolicy{
				{
					Name: "prod-*", Policy: "deny", Capabilities: []string{"deny"},
					Variables: &VariablesPolicy{Paths: []*VariablesPathPolicy{
						{PathSpec: "app/*", Capabilities: []string{"read", "list"}}, // read ⇒ list
						{PathSpec: "secret", Capabilities: []string{"deny"}},        // deny replaces all
					}},
				},
				{Name: "dev", Capabilities: []string{"submit-job"}},
			}},
		},
		{
			name: "variables only, which HCL1-JSON folds into one multi-key item",
			hcl:  `namespace "a" { variables { path "x/*" { capabilities = ["read"] } } }`,
			json: `{"namespace":{"a":{"variables":{"path":{"x/*":{"capabilities":["read"]}}}}}}`,
			want: &Policy{Namespaces: []*NamespacePolicy{{
				Name: "a", Capabilities: []string{},
				Variables: &VariablesPolicy{Paths: []*VariablesPathPolicy{
					{PathSpec: "x/*", Capabilities: []string{"read", "list"}},
				}},
			}}},
		},
		{
			name: "node pools and host volumes",
			hcl: `node_pool "gpu_a" { policy = "write" }
				host_volume "certs" { policy = "read" capabilities = ["deny"] }`,
			json: `{"node_pool":{"gpu_a":{"policy":"write"}},
				"host_volume":{"certs":{"policy":"read","capabilities":["deny"]}}}`,
			want: &Policy{
				NodePools: []*NodePoolPolicy{{Name: "gpu_a", Policy: "write",
					Capabilities: []string{"delete", "read", "write"}}},
				HostVolumes: []*HostVolumePolicy{{Name: "certs", Policy: "read",
					Capabilities: []string{"deny", "mount-readonly"}}},
			},
		},
		{
			name: "level blocks and operator",
			hcl: `agent { policy = "read" }
				node { policy = "write" }
				quota { policy = "deny" }
				plugin { policy = "list" }
				operator {
				  policy       = "read"
				  capabilities = ["snapshot-save"]
				}`,
			json: `{"agent":{"policy":"read"},"node":{"policy":"write"},"quota":{"policy":"deny"},
				"plugin":{"policy":"list"},
				"operator":{"policy":"read","capabilities":["snapshot-save"]}}`,
			want: &Policy{
				Agent: &LevelPolicy{Policy: "read"}, Node: &LevelPolicy{Policy: "write"},
				Quota: &LevelPolicy{Policy: "deny"}, Plugin: &LevelPolicy{Policy: "list"},
				Operator: &OperatorPolicy{Policy: "read",
					Capabilities: []string{"snapshot-save", "license-read", "keyring-read"}},
			},
		},
		{
			name: "operator write and scale outside a namespace",
			hcl:  `operator { policy = "write" } agent { policy = "scale" }`,
			json: `  {"operator":{"policy":"write"},"agent":{"policy":"scale"}}`,
			want: &Policy{
				Agent: &LevelPolicy{Policy: "scale"},
				Operator: &OperatorPolicy{Policy: "write", Capabilities: []string{
					"snapshot-save", "license-read", "keyring-rotate", "keyring-read", "keyring-delete"}},
			},
		},
		{
			name: "empty block",
			hcl:  `node {}`,
			json: `{"node":{}}`,
			want: &Policy{Node: &LevelPolicy{}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fromHCL, err := Parse(tc.hcl)
			must.NoError(t, err)
			must.Eq(t, tc.hcl, fromHCL.Raw)
			must.Eq(t, tc.want, withoutRaw(fromHCL))

			fromJSON, err := Parse(tc.json)
			must.NoError(t, err)
			must.Eq(t, tc.json, fromJSON.Raw)
			must.Eq(t, tc.want, withoutRaw(fromJSON))
		})
	}
}

// TestParse_Empty: empty rules give an empty policy, as in Nomad.
func TestParse_Empty(t *testing.T) {
	p, err := Parse("")
	must.NoError(t, err)
	must.True(t, p.IsEmpty())
}

// TestParse_Errors lists every error Parse gives, word for word. All are
// of kind structs.ErrInvalid.
func TestParse_Errors(t *testing.T) {
	cases := []struct {
		name  string
		rules string
		want  string
	}{
		// Syntax and shape.
		{"not HCL", `namespace "a" {`,
			`Failed to parse ACL Policy: At 1:17: object expected closing RBRACE got: EOF`},
		// hcl's JSON parser stops quietly at what it cannot read, as in
		// Nomad: what it read before decides.
		{"not JSON", `{"namespace" "a"}`, `Invalid policy: {"namespace" "a"}`},
		{"truncated JSON", `{"namespace":`, `Invalid policy: {"namespace":`},
		{"policy is a list", `namespace "a" { policy = ["read"] }`,
			`Failed to parse ACL Policy: At 1:26: root.namespace[0].policy: unknown type for string *ast.ListType`},
		{"block given as a value", `agent = "read"`,
			`Failed to parse ACL Policy: At 1:9: root.agent: not an object type for struct (*ast.LiteralType)`},

		// Keys.
		{"unknown keys, each with its line and block", "namespace \"default\" {\n  polcy = \"read\"\n}\nfoo = 1\n",
			`Invalid or duplicate policy keys: "polcy" at line 2 in namespace "default", "foo" at line 4`},
		{"unknown key in variables path",
			"namespace \"a\" {\n variables {\n  path \"x\" { caps = [] }\n }\n}",
			`Invalid or duplicate policy keys: "caps" at line 3 in namespace "a" variables path "x"`},
		{"unknown key in JSON", `{"node":{"policy":"read","extra":1}}`,
			`Invalid or duplicate policy keys: "extra" in node`},
		{"unknown key deep in JSON", `{"namespace":{"a":{"variables":{"path":{"x":{"caps":["read"]}}}}}}`,
			`Invalid or duplicate policy keys: "caps" in namespace "a" variables path "x"`},
		{"sentinel is Enterprise only", `sentinel { policy = "read" }`,
			`Invalid or duplicate policy keys: "sentinel" at line 1`},
		{"an argument set twice", "namespace \"a\" {\n  policy = \"read\"\n  policy = \"write\"\n}",
			`Invalid or duplicate policy keys: "policy" at line 3 in a block that already sets it`},
		{"an argument set twice in JSON", `{"node":{"policy":"read","policy":"write"}}`,
			`Invalid or duplicate policy keys: "policy" in a block that already sets it`},
		{"label on a block that takes none", `agent "x" { policy = "read" }`,
			`Invalid agent block: it takes no label, found "x" (line 1)`},
		{"label on a block that takes none, in JSON", `{"agent":{"x":{"policy":"read"}}}`,
			`Invalid or duplicate policy keys: "x" in agent`},

		// No blocks.
		{"only whitespace", "  \n", "Invalid policy:   \n"},
		{"only a comment", "# nothing", "Invalid policy: # nothing"},
		{"empty JSON", "{}", "Invalid policy: {}"},

		// Labels.
		{"namespace label", "\nnamespace \"a b\" { policy = \"read\" }", `Invalid namespace name "a b" (line 2)`},
		{"namespace label in JSON", `{"namespace":{"a_b":{"policy":"read"}}}`, `Invalid namespace name "a_b"`},
		{"namespace without label", `namespace { policy = "read" }`, `Invalid namespace block: it needs a label (line 1)`},
		{"namespace without label in JSON", `{"namespace":{"policy":"read"}}`, `Invalid namespace block: it needs a label`},
		{"node pool with two labels", `node_pool "a" "b" { policy = "read" }`,
			`Invalid node_pool block: it takes one label, found also "b" (line 1)`},
		{"variables path without label", "namespace \"a\" {\n variables {\n  path { capabilities = [\"read\"] }\n }\n}",
			`Invalid path block: it needs a label (line 3)`},
		{"node pool label", `node_pool "a/b" { policy = "read" }`, `Invalid node pool name "a/b" (line 1)`},
		{"host volume label", `host_volume "a_b" { policy = "read" }`, `Invalid host volume name "a_b" (line 1)`},

		// Policy values.
		{"namespace policy", `namespace "a" { policy = "list" }`, `Invalid namespace "a" policy "list" (line 1)`},
		{"node pool policy", `node_pool "a" { policy = "all" }`, `Invalid node_pool "a" policy "all" (line 1)`},
		{"host volume policy", `host_volume "a" { policy = "x" }`, `Invalid host_volume "a" policy "x" (line 1)`},
		{"agent policy", "agent {\n policy = \"list\"\n}", `Invalid agent policy "list" (line 2)`},
		{"node policy", `node { policy = "admin" }`, `Invalid node policy "admin" (line 1)`},
		{"quota policy", `quota { policy = "list" }`, `Invalid quota policy "list" (line 1)`},
		{"plugin policy", `plugin { policy = "scale" }`, `Invalid plugin policy "scale" (line 1)`},
		{"operator policy", `operator { policy = "list" }`, `Invalid operator policy "list" (line 1)`},
		{"policy value in JSON", `{"node":{"policy":"admin"}}`, `Invalid node policy "admin"`},

		// Capabilities.
		{"namespace capability, its own line", "namespace \"a\" {\n  capabilities = [\"read-job\",\n  \"bogus\"]\n}",
			`Invalid namespace "a" capability "bogus" (line 3)`},
		{"node pool capability", `node_pool "a" { capabilities = ["read-job"] }`,
			`Invalid node_pool "a" capability "read-job" (line 1)`},
		{"host volume capability", `host_volume "a" { capabilities = ["mount"] }`,
			`Invalid host_volume "a" capability "mount" (line 1)`},
		{"operator capability", `operator { capabilities = ["snapshot-restore"] }`,
			`Invalid operator capability "snapshot-restore" (line 1)`},

		// Variables.
		{"variables capability", "namespace \"a\" {\n variables {\n  path \"x\" {\n   capabilities = [\"list\", \"admin\"]\n  }\n }\n}",
			`Invalid variable capability "admin" for path "x" in namespace "a" (line 4)`},
		{"variables path with a leading slash", "namespace \"a\" {\n variables {\n  path \"/x\" {\n   capabilities = [\"read\"]\n  }\n }\n}",
			`Invalid variable path "/x" in namespace "a" (line 4): a path may not be empty or start with "/"`},
		{"variables path empty", `namespace "a" { variables { path "" { capabilities = ["read"] } } }`,
			`Invalid variable path "" in namespace "a" (line 1): a path may not be empty or start with "/"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse(tc.rules)
			must.Nil(t, p)
			must.EqError(t, err, tc.want)
			must.True(t, errors.Is(err, structs.ErrInvalid))
			must.Eq(t, 400, structs.HTTPStatus(structs.KindOf(err)))
		})
	}
}
