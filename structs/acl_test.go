package structs

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

func TestACLPolicy_Validate(t *testing.T) {
	cases := []struct {
		name   string
		policy ACLPolicy
		want   string
	}{
		{"ok", ACLPolicy{Name: "readonly-1"}, ""},
		{"bad name", ACLPolicy{Name: "no spaces"}, "invalid name 'no spaces'"},
		{"empty name", ACLPolicy{}, "invalid name ''"},
		{"long description", ACLPolicy{Name: "a", Description: strings.Repeat("x", 257)}, "description longer than 256"},
		{"job without namespace", ACLPolicy{Name: "a", JobACL: &JobACL{JobID: "web"}}, "namespace must be set to set job ID"},
		{"group without job", ACLPolicy{Name: "a", JobACL: &JobACL{Namespace: "default", Group: "g"}}, "job ID must be set to set group"},
		{"task without group", ACLPolicy{Name: "a", JobACL: &JobACL{Namespace: "default", JobID: "j", Task: "t"}}, "group must be set to set task"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.policy.Validate()
			if tc.want == "" {
				must.NoError(t, err)
				return
			}
			must.ErrorContains(t, err, tc.want)
			must.ErrorIs(t, err, ErrInvalid)
		})
	}
}

func TestACLToken_Validate(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(d time.Duration) *time.Time { e := now.Add(d); return &e }
	existing := &ACLToken{AccessorID: "a", Type: ACLClientToken, Policies: []string{"p"}, ExpirationTTL: time.Hour,
		ExpirationTime: at(time.Hour), CreateTime: now}
	cases := []struct {
		name     string
		token    ACLToken
		existing *ACLToken
		want     string
	}{
		{"client", ACLToken{Type: ACLClientToken, Policies: []string{"p"}}, nil, ""},
		{"client with role", ACLToken{Type: ACLClientToken, Roles: []*ACLTokenRoleLink{{ID: "r"}}}, nil, ""},
		{"management", ACLToken{Type: ACLManagementToken}, nil, ""},
		{"client without grants", ACLToken{Type: ACLClientToken}, nil, "client token missing policies or roles"},
		{"management with policies", ACLToken{Type: ACLManagementToken, Policies: []string{"p"}}, nil,
			"management token cannot be associated with policies or roles"},
		{"bad type", ACLToken{Type: "root"}, nil, "token type must be client or management"},
		{"long name", ACLToken{Type: ACLManagementToken, Name: strings.Repeat("n", 257)}, nil, "token name too long"},
		{"ttl too long", ACLToken{Type: ACLManagementToken, CreateTime: now, ExpirationTime: at(25 * time.Hour)}, nil,
			"expiration time cannot be more than 24h0m0s in the future (was 25h0m0s)"},
		{"ttl too short", ACLToken{Type: ACLManagementToken, CreateTime: now, ExpirationTime: at(time.Second)}, nil,
			"expiration time cannot be less than 1m0s in the future (was 1s)"},
		{"negative ttl", ACLToken{Type: ACLManagementToken, ExpirationTTL: -time.Second}, nil, "should not be negative"},
		{"update keeps expiry", ACLToken{Type: ACLClientToken, Policies: []string{"q"}, ExpirationTTL: time.Hour,
			ExpirationTime: at(time.Hour)}, existing, ""},
		{"update global", ACLToken{Type: ACLClientToken, Policies: []string{"q"}, Global: true, ExpirationTTL: time.Hour,
			ExpirationTime: at(time.Hour)}, existing, "cannot toggle global mode"},
		{"update ttl", ACLToken{Type: ACLClientToken, Policies: []string{"q"}, ExpirationTTL: 2 * time.Hour,
			ExpirationTime: at(time.Hour)}, existing, "cannot update expiration TTL"},
		{"update expiry", ACLToken{Type: ACLClientToken, Policies: []string{"q"}, ExpirationTTL: time.Hour,
			ExpirationTime: at(2 * time.Hour)}, existing, "cannot update expiration time"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.token.Validate(DefaultACLTokenMinExpirationTTL, DefaultACLTokenMaxExpirationTTL, tc.existing)
			if tc.want == "" {
				must.NoError(t, err)
				return
			}
			must.ErrorContains(t, err, tc.want)
		})
	}
}

func TestACLToken_CanonicalizeSetsIDsAndExpiry(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tok := &ACLToken{Type: ACLManagementToken, ExpirationTTL: time.Hour}
	tok.Canonicalize(now)
	must.True(t, IsUUID(tok.AccessorID))
	must.True(t, IsUUID(tok.SecretID))
	must.Eq(t, now, tok.CreateTime)
	must.Eq(t, now.Add(time.Hour), *tok.ExpirationTime)
	must.False(t, tok.IsExpired(now.Add(time.Hour)))
	must.True(t, tok.IsExpired(now.Add(time.Hour+1)))
}

// TestACLToken_NeverPrintsSecret formats a token every way a log line or
// an error could.
func TestACLToken_NeverPrintsSecret(t *testing.T) {
	secret := GenerateUUID()
	tok := &ACLToken{AccessorID: GenerateUUID(), SecretID: secret, Name: "ci", Type: ACLClientToken}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q"} {
		out := fmt.Sprintf(verb, tok)
		must.StrNotContains(t, out, secret, must.Sprintf("verb %s", verb))
		must.StrContains(t, out, tok.AccessorID)
	}
	must.StrNotContains(t, fmt.Sprintf("%v", []*ACLToken{tok}), secret)
	must.StrNotContains(t, fmt.Sprintf("%+v %#v", *tok, *tok), secret)
	must.StrNotContains(t, fmt.Errorf("writing %v", tok).Error(), secret)

	ott := &OneTimeToken{OneTimeSecretID: secret, AccessorID: tok.AccessorID}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		must.StrNotContains(t, fmt.Sprintf(verb, ott), secret)
		must.StrNotContains(t, fmt.Sprintf(verb, *ott), secret)
	}
}

func TestACLToken_JSON(t *testing.T) {
	exp := time.Date(2026, 1, 2, 4, 4, 5, 0, time.UTC)
	tok := &ACLToken{AccessorID: "a", SecretID: "s", Type: ACLClientToken, Policies: []string{"p"},
		ExpirationTTL: time.Hour, ExpirationTime: &exp}
	buf, err := json.Marshal(tok)
	must.NoError(t, err)
	must.StrContains(t, string(buf), `"ExpirationTTL":"1h0m0s"`)

	var back ACLToken
	must.NoError(t, json.Unmarshal(buf, &back))
	must.Eq(t, time.Hour, back.ExpirationTTL)
	must.True(t, exp.Equal(*back.ExpirationTime))

	// No TTL: an empty string and no expiration time at all.
	buf, err = json.Marshal(&ACLToken{AccessorID: "a"})
	must.NoError(t, err)
	must.StrContains(t, string(buf), `"ExpirationTTL":""`)
	must.StrNotContains(t, string(buf), "ExpirationTime")

	// Numbers are nanoseconds.
	must.NoError(t, json.Unmarshal([]byte(`{"ExpirationTTL":60000000000}`), &back))
	must.Eq(t, time.Minute, back.ExpirationTTL)
	must.Error(t, json.Unmarshal([]byte(`{"ExpirationTTL":"soon"}`), &back))
}

func TestACLRole_ValidateAndCanonicalize(t *testing.T) {
	r := &ACLRole{Name: "ops", Policies: []*ACLRolePolicyLink{{Name: "a"}, {Name: "a"}, {Name: "b"}}}
	r.Canonicalize()
	must.True(t, IsUUID(r.ID))
	must.Eq(t, []string{"a", "b"}, r.PolicyNames())
	must.NoError(t, r.Validate())

	err := (&ACLRole{Name: "bad name"}).Validate()
	must.ErrorContains(t, err, "invalid name 'bad name'")
	must.ErrorContains(t, err, "at least one policy should be specified")
	must.ErrorIs(t, err, ErrInvalid)
}

func TestACLObjects_HashFollowsContent(t *testing.T) {
	p := &ACLPolicy{Name: "a", Rules: `node { policy = "read" }`}
	h1 := p.SetHash()
	p.Rules = `node { policy = "write" }`
	must.NotEq(t, h1, p.SetHash())

	tok := &ACLToken{Type: ACLClientToken, Policies: []string{"a"}}
	h2 := tok.SetHash()
	tok.Policies = []string{"b"}
	must.NotEq(t, h2, tok.SetHash())
}
