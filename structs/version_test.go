package structs_test

import (
	"testing"

	"github.com/opennomad/nomad/structs"
)

func TestCheckVersionConstraint(t *testing.T) {
	cases := []struct {
		lhs, rhs string
		semver   bool
		want     bool
		wantErr  bool
	}{
		{"1.2.3", ">= 1.2, < 2", false, true, false},
		{"2.0.0", ">= 1.2, < 2", false, false, false},
		{"1.2", ">= 1.2.0", false, true, false},
		// strict semver rejects a version that is not x.y.z
		{"1.2", ">= 1.2.0", true, false, true},
		{"1.3.0-beta1", ">= 1.2.0", false, false, false},
		{"1.3.0-beta1", ">= 1.3.0-beta0", false, true, false},
		{"not-a-version", ">= 1", false, false, true},
		{"1.0.0", "bogus", false, false, true},
	}
	for _, c := range cases {
		got, err := structs.CheckVersionConstraint(c.lhs, c.rhs, c.semver)
		if got != c.want || (err != nil) != c.wantErr {
			t.Errorf("%q %q semver=%v: %v %v", c.lhs, c.rhs, c.semver, got, err)
		}
	}
}

func TestMatchRegexp(t *testing.T) {
	if ok, err := structs.MatchRegexp("^lin", "linux"); !ok || err != nil {
		t.Error("^lin should match linux")
	}
	if ok, _ := structs.MatchRegexp("^win", "linux"); ok {
		t.Error("^win matched linux")
	}
	if _, err := structs.MatchRegexp("(", "x"); err == nil {
		t.Error("bad pattern accepted")
	}
}

func TestParseVersionStrictSemver(t *testing.T) {
	for v, ok := range map[string]bool{
		"1.2.3": true, "0.0.0": true, "1.2.3-beta.1": true, "1.2.3+build.5": true, "10.20.30-rc1+x": true,
		"1.2": false, "1.2.3.4": false, "v1.2.3": false, "01.2.3": false, "1": false, "1.2.x": false,
	} {
		_, err := structs.ParseVersion(v, true)
		if (err == nil) != ok {
			t.Errorf("strict %q: %v", v, err)
		}
		if _, err := structs.ParseVersion(v, false); err != nil && v != "1.2.x" {
			t.Errorf("lenient %q: %v", v, err)
		}
	}
}
