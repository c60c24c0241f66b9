package login

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

// TestMapClaims: claims picked by name and by JSON pointer, numbers and
// booleans as strings, a lone item as a one-item list, UserInfo adding to
// the ID token without replacing its issuer or subject.
func TestMapClaims(t *testing.T) {
	cfg := &structs.ACLAuthMethodConfig{
		ClaimMappings: map[string]string{"sub": "user", "/org/team": "team", "admin": "admin", "uid": "uid",
			"iss": "issuer", "email": "email", "absent": "absent"},
		ListClaimMappings: map[string]string{"groups": "groups", "role": "roles", "/org/units": "units"},
	}
	id := map[string]interface{}{
		"iss": "https://idp.test", "sub": "alice", "admin": true, "uid": float64(1001),
		"org":    map[string]interface{}{"team": "eng", "units": []interface{}{"a", "", "b"}},
		"groups": []interface{}{"dev", "ops"}, "role": "reader",
	}
	user := map[string]interface{}{"sub": "mallory", "iss": "https://evil.test", "email": "alice@example.com"}

	set, err := MapClaims(cfg, id, user)
	must.NoError(t, err)
	must.Eq(t, map[string]string{"user": "alice", "team": "eng", "admin": "true", "uid": "1001",
		"issuer": "https://idp.test", "email": "alice@example.com"}, set.Value)
	must.Eq(t, map[string][]string{"groups": {"dev", "ops"}, "roles": {"reader"}, "units": {"a", "b"}}, set.List)

	_, err = MapClaims(&structs.ACLAuthMethodConfig{ClaimMappings: map[string]string{"org": "org"}}, id, nil)
	must.ErrorContains(t, err, `claim "org"`)
	_, err = MapClaims(&structs.ACLAuthMethodConfig{ListClaimMappings: map[string]string{"org": "org"}}, id, nil)
	must.ErrorContains(t, err, `list claim "org"`)
}

func TestTokenName(t *testing.T) {
	set := &ClaimSet{structs.ACLAuthClaims{Value: map[string]string{"user": "Alice"}}}
	cases := []struct {
		format, want, err string
	}{
		{"", "JWT-corp", ""},
		{"${auth_method_name}-${value.user}", "corp-Alice", ""},
		{"login of ${value.nobody}", "", "unknown variable accessed: value.nobody"},
		{"broken ${value.user", "", "unclosed"},
	}
	for _, tc := range cases {
		got, err := TokenName(tc.format, "JWT", "corp", set)
		if tc.err != "" {
			must.ErrorContains(t, err, tc.err)
			continue
		}
		must.NoError(t, err)
		must.Eq(t, tc.want, got)
	}
}
