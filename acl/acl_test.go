package acl

import (
	"fmt"
	"strings"
	"testing"

	"github.com/shoenig/test/must"
)

// aclOf parses each rules text as one policy and merges them.
func aclOf(t testing.TB, rules ...string) *ACL {
	t.Helper()
	policies := make([]*Policy, 0, len(rules))
	for _, r := range rules {
		p, err := Parse(r)
		must.NoError(t, err, must.Sprintf("rules: %s", r))
		policies = append(policies, p)
	}
	a, err := NewACL(false, policies)
	must.NoError(t, err)
	return a
}

// check is one question asked of an ACL and its expected answer.
type check struct {
	ns, capability string
	want           bool
}

// TestAllowNamespaceOperation: expansion, merging across policies and
// deny precedence, one question per row.
func TestAllowNamespaceOperation(t *testing.T) {
	cases := []struct {
		name     string
		policies []string
		checks   []check
	}{
		{
			name:     "read expands to the read capabilities only",
			policies: []string{`namespace "default" { policy = "read" }`},
			checks: []check{
				{"default", "list-jobs", true}, {"default", "read-job", true}, {"default", "parse-job", true},
				{"default", "csi-read-volume", true}, {"default", "host-volume-read", true},
				{"default", "submit-job", false}, {"default", "read-logs", false},
				{"other", "read-job", false}, // no rule for the namespace
			},
		},
		{
			name:     "write is read and more, not alloc-node-exec",
			policies: []string{`namespace "default" { policy = "write" }`},
			checks: []check{
				{"default", "read-job", true}, {"default", "submit-job", true}, {"default", "dispatch-job", true},
				{"default", "alloc-exec", true}, {"default", "host-volume-create", true},
				{"default", "alloc-node-exec", false}, {"default", "host-volume-register", false},
				// The fine-grained job capabilities are not in write:
				// endpoints accept submit-job as an alternative.
				{"default", "purge-job", false},
			},
		},
		{
			name:     "scale",
			policies: []string{`namespace "default" { policy = "scale" }`},
			checks: []check{
				{"default", "scale-job", true}, {"default", "read-job", true},
				{"default", "list-jobs", false}, {"default", "submit-job", false},
			},
		},
		{
			name:     "host-volume-write implies register, create, delete and read",
			policies: []string{`namespace "default" { capabilities = ["host-volume-write"] }`},
			checks: []check{
				{"default", "host-volume-register", true}, {"default", "host-volume-create", true},
				{"default", "host-volume-delete", true}, {"default", "host-volume-read", true},
			},
		},
		{
			name: "capabilities unite across policies",
			policies: []string{
				`namespace "default" { capabilities = ["read-job"] }`,
				`namespace "default" { capabilities = ["alloc-exec"] }`,
			},
			checks: []check{{"default", "read-job", true}, {"default", "alloc-exec", true}, {"default", "submit-job", false}},
		},
		{
			name: "deny after grants wipes them",
			policies: []string{
				`namespace "default" { policy = "write" }`,
				`namespace "default" { policy = "deny" }`,
			},
			checks: []check{{"default", "read-job", false}, {"default", "submit-job", false}},
		},
		{
			name: "deny before grants blocks them",
			policies: []string{
				`namespace "default" { capabilities = ["deny"] }`,
				`namespace "default" { policy = "write" }`,
			},
			checks: []check{{"default", "read-job", false}},
		},
		{
			name:     "deny in the same list as grants",
			policies: []string{`namespace "default" { policy = "read" capabilities = ["deny"] }`},
			checks:   []check{{"default", "list-jobs", false}},
		},
		{
			name: "deny on one label leaves the others alone",
			policies: []string{
				`namespace "default" { policy = "deny" }`,
				`namespace "*" { policy = "read" }`,
			},
			checks: []check{
				{"default", "read-job", false}, // the exact label wins, and it denies
				{"other", "read-job", true},
			},
		},
		{
			name:     "deny is never granted",
			policies: []string{`namespace "default" { policy = "deny" }`},
			checks:   []check{{"default", "deny", false}},
		},
		{
			name:     "unknown capability is never granted",
			policies: []string{`namespace "default" { policy = "write" }`},
			checks:   []check{{"default", "drop-tables", false}},
		},
		{
			name: `ns "*" passes if any namespace grants it`,
			policies: []string{
				`namespace "a" { policy = "read" }`,
				`namespace "b-*" { capabilities = ["submit-job"] }`,
				`namespace "c" { policy = "deny" }`,
			},
			checks: []check{
				{"*", "read-job", true},   // from a
				{"*", "submit-job", true}, // from the glob b-*
				{"*", "alloc-exec", false},
				{"*", "deny", false},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := aclOf(t, tc.policies...)
			for _, c := range tc.checks {
				must.Eq(t, c.want, a.AllowNamespaceOperation(c.ns, c.capability),
					must.Sprintf("AllowNamespaceOperation(%q, %q)", c.ns, c.capability))
			}
		})
	}
}

// TestNamespaceGlobLookup: the exact label wins; else the matching glob
// with the smallest len(name) - len(glob) + count("*"); on a tie, the
// glob that sorts first. Each glob grants one capability, named in
// want, so the answer shows which glob governed.
func TestNamespaceGlobLookup(t *testing.T) {
	globs := func(labels map[string]string) []string {
		var out []string
		for label, capability := range labels {
			out = append(out, fmt.Sprintf("namespace %q { capabilities = [%q] }", label, capability))
		}
		return out
	}
	caps := []string{"list-jobs", "read-job", "submit-job", "dispatch-job", "read-logs", "read-fs"}
	cases := []struct {
		name   string
		labels map[string]string // label -> the one capability it grants
		ns     string
		want   string // the capability granted for ns, "" for none
	}{
		{"exact beats every glob", map[string]string{"prod": "list-jobs", "prod*": "read-job", "*": "submit-job"},
			"prod", "list-jobs"},
		{"no match at all", map[string]string{"dev-*": "list-jobs"}, "prod", ""},
		// prod-api: "prod-*" → 8-6+1 = 3; "*" → 8-1+1 = 8; "*-api" → 8-5+1 = 4.
		{"closest glob", map[string]string{"prod-*": "list-jobs", "*": "read-job", "*-api": "submit-job"},
			"prod-api", "list-jobs"},
		// prod-api: "prod*" → 8-5+1 = 4; "p*-api" → 8-6+2 = 4: a tie,
		// "p*-api" sorts first.
		{"tie goes to the glob that sorts first", map[string]string{"prod*": "list-jobs", "p*-api": "read-job"},
			"prod-api", "read-job"},
		// A star counts: "a*b*c" on "abc" → 3-5+2 = 0; "a*c" → 3-3+1 = 1.
		{"stars standing for nothing", map[string]string{"a*c": "list-jobs", "a*b*c": "read-job"}, "abc", "read-job"},
		{"a glob must match as a whole", map[string]string{"prod": "list-jobs", "*-x": "read-job"}, "prod-y", ""},
		{"a star matches slashes", map[string]string{"team-*": "read-fs"}, "team-a/b", "read-fs"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := aclOf(t, globs(tc.labels)...)
			got := ""
			for _, c := range caps {
				if a.AllowNamespaceOperation(tc.ns, c) {
					got += c
				}
			}
			must.Eq(t, tc.want, got)
		})
	}
}

func TestAllowNamespace(t *testing.T) {
	a := aclOf(t,
		`namespace "a" { capabilities = ["list-jobs"] }`,
		`namespace "b" { policy = "deny" }`,
		`namespace "c" { }`,
		`namespace "d-*" { policy = "read" }`,
	)
	cases := []struct {
		ns   string
		want bool
	}{
		{"a", true}, {"b", false}, {"c", false}, {"d-1", true}, {"e", false}, {"*", true},
	}
	for _, c := range cases {
		must.Eq(t, c.want, a.AllowNamespace(c.ns), must.Sprintf("AllowNamespace(%q)", c.ns))
	}
	onlyDenied := aclOf(t, `namespace "b" { policy = "deny" }`)
	must.False(t, onlyDenied.AllowNamespace("*"))
}

func TestAllowNsOpAny(t *testing.T) {
	a := aclOf(t, `namespace "default" { capabilities = ["purge-job"] }`)
	must.True(t, a.AllowNsOpAny("default", "submit-job", "purge-job"))
	must.False(t, a.AllowNsOpAny("default", "submit-job", "deregister-job"))
	must.False(t, a.AllowNsOpAny("default"))
}

// TestLevels: agent, node, operator, quota and plugin take the highest
// level of the token's policies, deny > write > read > list.
func TestLevels(t *testing.T) {
	type answers struct{ read, write bool }
	cases := []struct {
		name     string
		policies []string
		agent    answers
		node     answers
		operator answers
		quota    answers
	}{
		{"none", []string{`namespace "a" { policy = "read" }`}, answers{}, answers{}, answers{}, answers{}},
		{"read", []string{`agent { policy = "read" } node { policy = "read" } operator { policy = "read" } quota { policy = "read" }`},
			answers{true, false}, answers{true, false}, answers{true, false}, answers{true, false}},
		{"write", []string{`agent { policy = "write" } node { policy = "write" } operator { policy = "write" } quota { policy = "write" }`},
			answers{true, true}, answers{true, true}, answers{true, true}, answers{true, true}},
		{"write beats read", []string{`agent { policy = "read" } node { policy = "write" }`, `agent { policy = "write" } node { policy = "read" }`},
			answers{true, true}, answers{true, true}, answers{}, answers{}},
		{"deny beats write", []string{`agent { policy = "write" }`, `agent { policy = "deny" } quota { policy = "write" }`},
			answers{}, answers{}, answers{}, answers{true, true}},
		{"scale grants nothing outside a namespace", []string{`agent { policy = "scale" } node { policy = "scale" }`},
			answers{}, answers{}, answers{}, answers{}},
		{"scale does not lower read", []string{`node { policy = "read" }`, `node { policy = "scale" }`},
			answers{}, answers{true, false}, answers{}, answers{}},
		{"operator capabilities alone grant no level", []string{`operator { capabilities = ["snapshot-save", "keyring-read"] }`},
			answers{}, answers{}, answers{}, answers{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := aclOf(t, tc.policies...)
			must.Eq(t, tc.agent, answers{a.AllowAgentRead(), a.AllowAgentWrite()}, must.Sprint("agent"))
			must.Eq(t, tc.node, answers{a.AllowNodeRead(), a.AllowNodeWrite()}, must.Sprint("node"))
			must.Eq(t, tc.operator, answers{a.AllowOperatorRead(), a.AllowOperatorWrite()}, must.Sprint("operator"))
			must.Eq(t, tc.quota, answers{a.AllowQuotaRead(), a.AllowQuotaWrite()}, must.Sprint("quota"))
		})
	}
}

// TestPlugin: list < read, and, as in Nomad, write passes neither check.
func TestPlugin(t *testing.T) {
	cases := []struct {
		policies   []string
		read, list bool
	}{
		{[]string{`plugin { policy = "list" }`}, false, true},
		{[]string{`plugin { policy = "read" }`}, true, true},
		{[]string{`plugin { policy = "write" }`}, false, false},
		{[]string{`plugin { policy = "read" }`, `plugin { policy = "write" }`}, false, false}, // write is the max
		{[]string{`plugin { policy = "list" }`, `plugin { policy = "read" }`}, true, true},
		{[]string{`plugin { policy = "read" }`, `plugin { policy = "deny" }`}, false, false},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.policies, " + "), func(t *testing.T) {
			a := aclOf(t, tc.policies...)
			must.Eq(t, tc.read, a.AllowPluginRead(), must.Sprint("read"))
			must.Eq(t, tc.list, a.AllowPluginList(), must.Sprint("list"))
		})
	}
}

func TestAllowOperatorCapability(t *testing.T) {
	all := []string{"snapshot-save", "license-read", "keyring-rotate", "keyring-read", "keyring-delete"}
	cases := []struct {
		name     string
		policies []string
		want     []string // the capabilities granted, of all
	}{
		{"read", []string{`operator { policy = "read" }`}, []string{"license-read", "keyring-read"}},
		{"write", []string{`operator { policy = "write" }`}, all},
		{"explicit", []string{`operator { capabilities = ["snapshot-save"] }`}, []string{"snapshot-save"}},
		{"united", []string{`operator { policy = "read" }`, `operator { capabilities = ["keyring-rotate"] }`},
			[]string{"keyring-rotate", "license-read", "keyring-read"}},
		{"deny wipes", []string{`operator { policy = "write" }`, `operator { capabilities = ["deny"] }`}, nil},
		{"deny blocks", []string{`operator { policy = "deny" }`, `operator { policy = "write" }`}, nil},
		{"none", []string{`node { policy = "write" }`}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := aclOf(t, tc.policies...)
			var got []string
			for _, c := range all {
				if a.AllowOperatorCapability(c) {
					got = append(got, c)
				}
			}
			must.SliceContainsAll(t, tc.want, got)
		})
	}
}

func TestAllowNodePoolOperation(t *testing.T) {
	a := aclOf(t,
		`node_pool "gpu_*" { policy = "read" }`,
		`node_pool "gpu_big" { policy = "write" }`,
		`node_pool "*" { capabilities = ["read"] }`,
		`node_pool "secret" { policy = "read" }`,
		`node_pool "secret" { policy = "deny" }`,
	)
	cases := []struct {
		pool, capability string
		want             bool
	}{
		{"gpu_big", "delete", true}, {"gpu_big", "write", true},
		{"gpu_small", "read", true}, {"gpu_small", "write", false},
		{"default", "read", true}, {"default", "delete", false},
		{"secret", "read", false}, // exact label, denied: the "*" glob does not apply
	}
	for _, c := range cases {
		must.Eq(t, c.want, a.AllowNodePoolOperation(c.pool, c.capability),
			must.Sprintf("AllowNodePoolOperation(%q, %q)", c.pool, c.capability))
	}
}

func TestAllowHostVolumeOperation(t *testing.T) {
	a := aclOf(t,
		`host_volume "certs" { policy = "read" }`,
		`host_volume "data-*" { policy = "write" }`,
		`host_volume "data-secret" { policy = "deny" }`,
	)
	cases := []struct {
		volume, capability string
		want               bool
	}{
		{"certs", "mount-readonly", true}, {"certs", "mount-readwrite", false},
		{"data-1", "mount-readonly", true}, {"data-1", "mount-readwrite", true},
		{"data-secret", "mount-readonly", false},
		{"other", "mount-readonly", false},
	}
	for _, c := range cases {
		must.Eq(t, c.want, a.AllowHostVolumeOperation(c.volume, c.capability),
			must.Sprintf("AllowHostVolumeOperation(%q, %q)", c.volume, c.capability))
	}
}

// TestAllowVariableOperation: rules on (namespace, path); exact pair
// first, then the closest glob over the pair.
func TestAllowVariableOperation(t *testing.T) {
	a := aclOf(t,
		`namespace "default" {
		  policy = "deny" # does not cancel the variables rules
		  variables {
		    path "app/*"       { capabilities = ["read"] }
		    path "app/db"      { capabilities = ["write", "destroy"] }
		    path "app/secret*" { capabilities = ["deny"] }
		    path "*"           { capabilities = ["list"] }
		  }
		}`,
		`namespace "prod-*" {
		  variables {
		    path "shared/*" { capabilities = ["read", "write"] }
		  }
		}`,
		`namespace "prod-eu" {
		  variables {
		    path "shared/*" { capabilities = ["deny"] }
		  }
		}`,
		`namespace "default" {
		  variables {
		    path "app/*" { capabilities = ["write"] }
		  }
		}`,
	)
	cases := []struct {
		ns, path, capability string
		want                 bool
	}{
		{"default", "app/web", "read", true},
		{"default", "app/web", "list", true},  // read ⇒ list
		{"default", "app/web", "write", true}, // united with the last policy
		{"default", "app/web", "destroy", false},
		{"default", "app/db", "write", true},         // exact path wins ...
		{"default", "app/db", "read", false},         // ... and has no read
		{"default", "app/secret-key", "read", false}, // closer glob, denied
		{"default", "app/secret-key", "list", false},
		{"default", "other", "list", true}, // "*"
		{"default", "other", "read", false},
		{"default", "/app/web", "read", false}, // no leading "/" in rules, "*" still lists
		{"prod-us", "shared/x", "write", true},
		{"prod-eu", "shared/x", "read", false}, // exact namespace, closer than prod-*
		{"dev", "shared/x", "read", false},
		{"*", "shared/x", "write", true}, // some namespace grants it
		{"*", "app/db", "destroy", true},
		{"*", "nothing/x", "read", false},
	}
	for _, c := range cases {
		must.Eq(t, c.want, a.AllowVariableOperation(c.ns, c.path, c.capability),
			must.Sprintf("AllowVariableOperation(%q, %q, %q)", c.ns, c.path, c.capability))
	}
	// The namespace deny still holds for the namespace itself.
	must.False(t, a.AllowNamespaceOperation("default", "read-job"))
}

// everything asks every question of a: true only if every answer is.
func everything(a *ACL) (all, any bool) {
	answers := []bool{
		a.IsManagement(),
		a.AllowNamespaceOperation("default", "submit-job"), a.AllowNamespaceOperation("*", "read-job"),
		a.AllowNsOpAny("default", "alloc-node-exec"), a.AllowNamespace("default"), a.AllowNamespace("*"),
		a.AllowNodeRead(), a.AllowNodeWrite(), a.AllowAgentRead(), a.AllowAgentWrite(),
		a.AllowOperatorRead(), a.AllowOperatorWrite(), a.AllowQuotaRead(), a.AllowQuotaWrite(),
		a.AllowPluginRead(), a.AllowPluginList(), a.AllowOperatorCapability("keyring-delete"),
		a.AllowNodePoolOperation("default", "delete"), a.AllowHostVolumeOperation("v", "mount-readwrite"),
		a.AllowVariableOperation("default", "a/b", "destroy"), a.AllowVariableOperation("*", "a", "list"),
	}
	all, any = true, false
	for _, ok := range answers {
		all, any = all && ok, any || ok
	}
	return all, any
}

func TestSpecialACLs(t *testing.T) {
	mgmt, err := NewACL(true, []*Policy{{Namespaces: []*NamespacePolicy{{Name: "default", Capabilities: []string{"deny"}}}}})
	must.NoError(t, err)
	empty, err := NewACL(false, nil)
	must.NoError(t, err)

	cases := []struct {
		name          string
		acl           *ACL
		wantAll, some bool
	}{
		{"nil allows nothing", nil, false, false},
		{"no policies allows nothing", empty, false, false},
		{"ManagementACL allows everything", ManagementACL, true, true},
		{"ACLsDisabled allows everything", ACLsDisabled, true, true},
		{"a management token ignores its policies", mgmt, true, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			all, any := everything(tc.acl)
			must.Eq(t, tc.wantAll, all)
			must.Eq(t, tc.some, any)
		})
	}
	must.True(t, ManagementACL != ACLsDisabled, must.Sprint("distinct pointers"))
}

// TestNewACL_NilPolicy: a nil entry is skipped.
func TestNewACL_NilPolicy(t *testing.T) {
	p, err := Parse(`node { policy = "read" }`)
	must.NoError(t, err)
	a, err := NewACL(false, []*Policy{nil, p})
	must.NoError(t, err)
	must.True(t, a.AllowNodeRead())
}

// TestACL_Concurrent reads one ACL from many goroutines; run with -race.
func TestACL_Concurrent(t *testing.T) {
	a := aclOf(t, benchPolicies...)
	done := make(chan bool)
	for i := 0; i < 8; i++ {
		go func(i int) {
			ok := true
			for j := 0; j < 200; j++ {
				ok = ok && a.AllowNamespaceOperation(fmt.Sprintf("team-%d-web", i), "read-job")
				a.AllowNamespaceOperation("*", "submit-job")
				a.AllowVariableOperation("team-1-web", "app/x", "read")
			}
			done <- ok
		}(i)
	}
	for i := 0; i < 8; i++ {
		must.True(t, <-done)
	}
}

// benchPolicies are five policies with exact labels and globs, as a
// token with a few roles might hold.
var benchPolicies = []string{
	`namespace "default" { policy = "read" }
	 namespace "team-*" { policy = "read" }`,
	`namespace "team-*-web" { policy = "write" }
	 namespace "team-1-*" { capabilities = ["alloc-exec", "read-logs"] }`,
	`namespace "prod-*" { policy = "read" variables { path "app/*" { capabilities = ["read"] } } }
	 namespace "prod-eu-*" { policy = "deny" }`,
	`namespace "ci-*" { policy = "write" }
	 namespace "*-staging" { capabilities = ["submit-job"] }
	 node { policy = "read" }`,
	`namespace "sandbox" { policy = "write" }
	 namespace "sandbox-*" { policy = "scale" }
	 agent { policy = "read" }`,
}

// BenchmarkAllowNamespaceOperation is the hot path: every request to a
// namespaced endpoint asks it once or more.
func BenchmarkAllowNamespaceOperation(b *testing.B) {
	a := aclOf(b, benchPolicies...)
	for _, bc := range []struct{ name, ns string }{
		{"exact", "sandbox"},
		{"glob", "team-3-web"},
		{"no match", "unrelated"},
		{"any namespace", "*"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				a.AllowNamespaceOperation(bc.ns, NamespaceCapabilitySubmitJob)
			}
		})
	}
}
