package structs

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

func TestVariableDecrypted_Validate(t *testing.T) {
	item := VariableItems{"k": "v"}
	cases := []struct {
		name  string
		path  string
		items VariableItems
		err   string
	}{
		{"plain", "app/db", item, ""},
		{"odd characters", "a-b_c~d/e", item, ""},
		{"space", "a b", item, `invalid path "a b"`},
		{"empty path", "", item, `invalid path ""`},
		{"too long", strings.Repeat("a", 129), item, "invalid path"},
		{"leading slash is a character like any", "/a", item, ""},
		{"nomad jobs", "nomad/jobs", item, ""},
		{"nomad job", "nomad/jobs/web/api", item, ""},
		{"nomad sentinel", "nomad/sentinel/x", item, ""},
		{"nomad template", "nomad/job-templates/t", item, ""},
		{"nomad template too deep", "nomad/job-templates/t/u", item, "invalid path"},
		{"nomad template bare", "nomad/job-templates", item, "invalid path"},
		{"nomad other", "nomad/other", item, "invalid path"},
		{"nomad alone", "nomad", item, "invalid path"},
		{"no items", "a", nil, "variable missing required Items object"},
		{"at the limit", "a", VariableItems{"k": strings.Repeat("v", MaxVariableSize-1)}, ""},
		{"over the limit", "a", VariableItems{"k": strings.Repeat("v", MaxVariableSize)}, "variables are limited to 64KiB in total size"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := &VariableDecrypted{VariableMetadata: VariableMetadata{Namespace: "default", Path: c.path}, Items: c.items}
			err := v.Validate()
			if c.err == "" {
				must.NoError(t, err)
				return
			}
			must.ErrorContains(t, err, c.err)
			must.True(t, errors.Is(err, ErrInvalid))
		})
	}
}

// TestVariableLock_JSON: the durations travel as strings, as the api
// package reads them.
func TestVariableLock_JSON(t *testing.T) {
	v := VariableDecrypted{
		VariableMetadata: VariableMetadata{Namespace: "default", Path: "a",
			Lock: &VariableLock{ID: "id", TTL: 15 * time.Second, LockDelay: time.Minute}},
		Items: VariableItems{"k": "v"},
	}
	b, err := json.Marshal(v)
	must.NoError(t, err)
	must.StrContains(t, string(b), `"Lock":{"ID":"id","TTL":"15s","LockDelay":"1m0s"}`)
	must.StrContains(t, string(b), `"Items":{"k":"v"}`)

	var back VariableDecrypted
	must.NoError(t, json.Unmarshal(b, &back))
	must.Eq(t, v, back)

	noLock, err := json.Marshal(VariableMetadata{Path: "a"})
	must.NoError(t, err)
	must.StrNotContains(t, string(noLock), "Lock")

	must.Error(t, json.Unmarshal([]byte(`{"TTL":"soon"}`), &VariableLock{}))
}

func TestVariableLock_Canonicalize(t *testing.T) {
	l := &VariableLock{}
	must.NoError(t, l.CanonicalizeLock())
	must.Eq(t, DefaultVariableLockTTL, l.TTL)
	must.Eq(t, DefaultVariableLockDelay, l.LockDelay)
	for _, ttl := range []time.Duration{time.Second, 25 * time.Hour} {
		must.ErrorIs(t, (&VariableLock{TTL: ttl}).CanonicalizeLock(), ErrVariableLockTTL)
	}
}
