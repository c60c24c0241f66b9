package acl

import "testing"

func TestGlobMatch(t *testing.T) {
	cases := []struct {
		glob, name string
		want       bool
	}{
		{"prod", "prod", true},
		{"prod", "prod-1", false},
		{"*", "", true},
		{"*", "a/b/c", true},
		{"prod-*", "prod-", true},
		{"prod-*", "prod", false},
		{"*-api", "web-api", true},
		{"*-api", "web-api-2", false},
		{"a*b*c", "abc", true},
		{"a*b*c", "a-x-b-y-c", true},
		{"a*b*c", "acb", false},
		{"a*a", "a", false}, // prefix and suffix may not overlap
		{"a*a", "aa", true},
		{"ab*b", "ab", false},
		{"*b*", "abc", true},
		{"*b*", "ac", false},
		{"**", "x", true},
		{"app/*", "app/db/password", true}, // "*" crosses "/"
	}
	for _, tc := range cases {
		if got := globMatch(tc.glob, tc.name); got != tc.want {
			t.Errorf("globMatch(%q, %q) = %v, want %v", tc.glob, tc.name, got, tc.want)
		}
	}
}

func TestGlobDistance(t *testing.T) {
	cases := []struct {
		glob, name string
		want       int
	}{
		{"prod-*", "prod-api", 3}, // 8 - 6 + 1
		{"*", "prod-api", 8},      // 8 - 1 + 1
		{"*-api", "prod-api", 4},  // 8 - 5 + 1
		{"a*b*c", "abc", 0},       // 3 - 5 + 2
		{"a*c", "abc", 1},         // 3 - 3 + 1
	}
	for _, tc := range cases {
		if got := globDistance(tc.glob, tc.name); got != tc.want {
			t.Errorf("globDistance(%q, %q) = %d, want %d", tc.glob, tc.name, got, tc.want)
		}
	}
}

// TestCapabilitySetAdd: deny wipes the set and blocks what follows.
func TestCapabilitySetAdd(t *testing.T) {
	cases := []struct {
		name  string
		adds  [][]string
		check string
		want  bool
	}{
		{"grant", [][]string{{"read-job"}}, "read-job", true},
		{"union", [][]string{{"read-job"}, {"submit-job"}}, "read-job", true},
		{"deny wipes", [][]string{{"read-job"}, {"deny"}}, "read-job", false},
		{"deny blocks", [][]string{{"deny"}, {"read-job"}}, "read-job", false},
		{"deny mid-list", [][]string{{"read-job", "deny", "submit-job"}}, "submit-job", false},
	}
	for _, tc := range cases {
		c := capabilitySet{}
		for _, a := range tc.adds {
			c.add(a)
		}
		if got := c.allows(tc.check); got != tc.want {
			t.Errorf("%s: allows(%q) = %v, want %v", tc.name, tc.check, got, tc.want)
		}
	}
}
