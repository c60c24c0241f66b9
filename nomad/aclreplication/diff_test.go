package aclreplication

import (
	"testing"

	"github.com/shoenig/test/must"
)

func TestDiff(t *testing.T) {
	h := func(s string) []byte { return []byte(s) }
	cases := []struct {
		name          string
		local, remote map[string][]byte
		upsert        []string
		remove        []string
	}{
		{name: "both empty"},
		{name: "first copy", remote: map[string][]byte{"b": h("1"), "a": h("2")}, upsert: []string{"a", "b"}},
		{name: "in step", local: map[string][]byte{"a": h("1")}, remote: map[string][]byte{"a": h("1")}},
		{name: "changed", local: map[string][]byte{"a": h("1"), "b": h("1")},
			remote: map[string][]byte{"a": h("2"), "b": h("1")}, upsert: []string{"a"}},
		{name: "deleted there", local: map[string][]byte{"a": h("1"), "b": h("1")},
			remote: map[string][]byte{"b": h("1")}, remove: []string{"a"}},
		{name: "a local hash missing", local: map[string][]byte{"a": nil},
			remote: map[string][]byte{"a": h("1")}, upsert: []string{"a"}},
		{name: "all at once", local: map[string][]byte{"gone": h("1"), "same": h("1"), "old": h("1")},
			remote: map[string][]byte{"same": h("1"), "old": h("2"), "new": h("1")},
			upsert: []string{"new", "old"}, remove: []string{"gone"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			upsert, remove := diff(tc.local, tc.remote)
			must.Eq(t, tc.upsert, upsert)
			must.Eq(t, tc.remove, remove)
		})
	}
}
