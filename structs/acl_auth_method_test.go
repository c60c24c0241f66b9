package structs

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

// TestACLAuthMethod_JSON: durations travel as strings, as the api package
// writes and reads them, and nanoseconds are accepted too.
func TestACLAuthMethod_JSON(t *testing.T) {
	m := &ACLAuthMethod{Name: "sso", MaxTokenTTL: 15 * time.Minute,
		Config: &ACLAuthMethodConfig{OIDCClientID: "c", ClockSkewLeeway: time.Second}}
	raw, err := json.Marshal(m)
	must.NoError(t, err)
	must.StrContains(t, string(raw), `"MaxTokenTTL":"15m0s"`)
	must.StrContains(t, string(raw), `"ClockSkewLeeway":"1s"`)
	must.StrContains(t, string(raw), `"ExpirationLeeway":""`)

	var back ACLAuthMethod
	must.NoError(t, json.Unmarshal(raw, &back))
	must.Eq(t, m.MaxTokenTTL, back.MaxTokenTTL)
	must.Eq(t, time.Second, back.Config.ClockSkewLeeway)

	must.NoError(t, json.Unmarshal([]byte(`{"MaxTokenTTL":60000000000}`), &back))
	must.Eq(t, time.Minute, back.MaxTokenTTL)
	must.ErrorContains(t, json.Unmarshal([]byte(`{"MaxTokenTTL":"soon"}`), &back), "MaxTokenTTL")
}

func TestACLAuthMethod_CopyIsDeep(t *testing.T) {
	m := &ACLAuthMethod{Name: "sso", Config: &ACLAuthMethodConfig{BoundAudiences: []string{"a"},
		ClaimMappings: map[string]string{"k": "v"}}}
	c := m.Copy()
	c.Config.BoundAudiences[0] = "b"
	c.Config.ClaimMappings["k"] = "w"
	must.Eq(t, "a", m.Config.BoundAudiences[0])
	must.Eq(t, "v", m.Config.ClaimMappings["k"])
}

func TestACLBindingRule_Validate(t *testing.T) {
	cases := []struct {
		name string
		rule ACLBindingRule
		want string
	}{
		{"ok", ACLBindingRule{AuthMethod: "a", BindType: "role", BindName: "r", Selector: "x in list.groups"}, ""},
		{"management with name", ACLBindingRule{AuthMethod: "a", BindType: "management", BindName: "r"},
			"BindName should be empty"},
		{"no method", ACLBindingRule{BindType: "management"}, "AuthMethod is missing"},
		{"bad selector", ACLBindingRule{AuthMethod: "a", BindType: "management", Selector: "x =="}, "Selector is invalid"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.rule.Validate()
			if tc.want == "" {
				must.NoError(t, err)
				return
			}
			must.ErrorContains(t, err, tc.want)
			must.ErrorIs(t, err, ErrInvalid)
		})
	}
}
