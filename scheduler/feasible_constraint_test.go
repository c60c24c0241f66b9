package scheduler

import (
	"testing"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

func TestResolveTarget(t *testing.T) {
	n := mock.Node(mock.Unreserved(), mock.NodeID("node-id"), mock.NodeName("node-name"), mock.Datacenter("dc7"),
		mock.NodePool("gpu"), mock.NodeClass("large"), mock.Attr("kernel.name", "linux"), mock.Meta("rack", "r3"))
	cases := []struct {
		target string
		want   string
		found  bool
	}{
		{"linux", "linux", true},
		{"${node.unique.id}", "node-id", true},
		{"${node.unique.name}", "node-name", true},
		{"${node.datacenter}", "dc7", true},
		{"${node.class}", "large", true},
		{"${node.pool}", "gpu", true},
		{"${attr.kernel.name}", "linux", true},
		{"${attr.missing}", "", false},
		{"${meta.rack}", "r3", true},
		{"${meta.missing}", "", false},
		{"${node.bogus}", "", false},
		{"${unterminated", "${unterminated", true},
	}
	for _, tc := range cases {
		got, found := resolveTarget(tc.target, n)
		if got != tc.want || found != tc.found {
			t.Errorf("resolveTarget(%q) = %q, %v; want %q, %v", tc.target, got, found, tc.want, tc.found)
		}
	}
	if v, _ := resolveTarget("${node.pool}", &structs.Node{}); v != structs.NodePoolDefault {
		t.Errorf("node without pool resolves to %q, want default", v)
	}
}

func TestCheckOperator(t *testing.T) {
	const set, unset = true, false
	cases := []struct {
		name     string
		op       string
		l        string
		lok      bool
		r        string
		rok      bool
		expected bool
	}{
		{"equal", "=", "linux", set, "linux", set, true},
		{"equal differs", "=", "linux", set, "darwin", set, false},
		{"equal unset", "=", "", unset, "", set, false},
		{"== alias", "==", "a", set, "a", set, true},
		{"is alias", "is", "a", set, "a", set, true},
		{"not equal", "!=", "a", set, "b", set, true},
		{"not equal same", "!=", "a", set, "a", set, false},
		{"not equal unset attribute", "!=", "", unset, "a", set, true},
		{"not alias", "not", "a", set, "b", set, true},

		// Integers compare numerically: 10 > 9 although "10" < "9".
		{"less int", "<", "9", set, "10", set, true},
		{"less equal int", "<=", "10", set, "10", set, true},
		{"greater int", ">", "10", set, "9", set, true},
		{"greater equal int", ">=", "9", set, "10", set, false},
		// Floats when either side is not an integer: 2.5 < 10.
		{"less float", "<", "2.5", set, "10", set, true},
		{"greater float", ">", "2.5", set, "2.25", set, true},
		// Lexical otherwise.
		{"less lexical", "<", "abc", set, "abd", set, true},
		{"greater lexical", ">", "b", set, "a", set, true},
		{"order unset", "<", "", unset, "1", set, false},

		{"is_set", "is_set", "x", set, "", unset, true},
		{"is_set missing", "is_set", "", unset, "", unset, false},
		{"is_not_set", "is_not_set", "", unset, "", unset, true},
		{"is_not_set present", "is_not_set", "x", set, "", unset, false},

		{"regexp", "regexp", "linux-5.15", set, "^linux-[0-9.]+$", set, true},
		{"regexp mismatch", "regexp", "windows", set, "^linux", set, false},
		{"regexp invalid", "regexp", "x", set, "(", set, false},
		{"regexp unset", "regexp", "", unset, ".*", set, false},

		{"version", "version", "1.2.3", set, ">= 1.2, < 2.0", set, true},
		{"version too new", "version", "2.1.0", set, ">= 1.2, < 2.0", set, false},
		{"version lenient", "version", "1.2", set, "= 1.2.0", set, true},
		{"version garbage", "version", "not-a-version", set, ">= 1", set, false},
		{"version prerelease excluded", "version", "1.3.0-beta1", set, ">= 1.2", set, false},
		{"semver", "semver", "1.2.3", set, ">= 1.2.0", set, true},
		{"semver garbage", "semver", "x.y", set, ">= 1.0.0", set, false},

		{"set_contains", "set_contains", "a,b,c", set, "a,c", set, true},
		{"set_contains missing item", "set_contains", "a,b", set, "a,c", set, false},
		{"set_contains spaces", "set_contains", "a, b , c", set, " b,c ", set, true},
		{"set_contains_all", "set_contains_all", "a,b,c", set, "c,b,a", set, true},
		{"set_contains_any", "set_contains_any", "r3", set, "r0,r1,r2,r3", set, true},
		{"set_contains_any none", "set_contains_any", "r9", set, "r0,r1", set, false},
		{"set_contains_any prefix is not a match", "set_contains_any", "r10", set, "r1", set, false},
		{"set_contains_any unset", "set_contains_any", "", unset, "r1", set, false},

		{"distinct_hosts is decided elsewhere", "distinct_hosts", "", unset, "", unset, true},
		{"distinct_property is decided elsewhere", "distinct_property", "", unset, "", unset, true},
		{"unknown operator", "~=", "a", set, "a", set, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := checkOperator(tc.op, tc.l, tc.lok, tc.r, tc.rok); got != tc.expected {
				t.Fatalf("%q %s %q = %v, want %v", tc.l, tc.op, tc.r, got, tc.expected)
			}
		})
	}
}

func TestCompiledConstraint(t *testing.T) {
	n := mock.Node(mock.Unreserved(), mock.Meta("rack", "r3"), mock.Attr("unique.hostname", "h1"))
	c := compileConstraint(&structs.Constraint{LTarget: "${meta.rack}", RTarget: "r0,r3", Operand: "set_contains_any"})
	if !c.holds(n) {
		t.Fatal("rack r3 should satisfy set_contains_any r0,r3")
	}
	if c.text != "${meta.rack} set_contains_any r0,r3" {
		t.Fatalf("text = %q", c.text)
	}
	if c.escapes {
		t.Fatal("meta.rack does not escape computed classes")
	}
	u := compileConstraint(&structs.Constraint{LTarget: "${attr.unique.hostname}", RTarget: "h1", Operand: "="})
	if !u.escapes || !u.holds(n) {
		t.Fatalf("unique attribute constraint: escapes=%v holds=%v", u.escapes, u.holds(n))
	}
	// The right operand may be interpolated too.
	r := compileConstraint(&structs.Constraint{LTarget: "${node.datacenter}", RTarget: "${meta.dc}", Operand: "="})
	if r.holds(n) {
		t.Fatal("unset right operand must not match")
	}
}
