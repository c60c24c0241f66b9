package structs

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"time"

	"github.com/hashicorp/go-bexpr"
)

// Auth methods and binding rules: how single sign-on would turn an
// identity provider's claims into a Nomad token. An auth method names the
// provider (OIDC or JWT) and how the tokens it makes look; a binding rule
// says which of those logins get which role, policy, or management. The
// server stores and serves both; the login flow itself is not built.

// Auth method types and token localities, as Nomad names them.
const (
	ACLAuthMethodTypeOIDC = "OIDC"
	ACLAuthMethodTypeJWT  = "JWT"

	ACLAuthMethodTokenLocalityLocal  = "local"
	ACLAuthMethodTokenLocalityGlobal = "global"

	// DefaultACLAuthMethodTokenNameFormat names the tokens a method makes
	// when it sets no format of its own.
	DefaultACLAuthMethodTokenNameFormat = "${auth_method_type}-${auth_method_name}"
)

// Binding rule bind types.
const (
	ACLBindingRuleBindTypeRole       = "role"
	ACLBindingRuleBindTypePolicy     = "policy"
	ACLBindingRuleBindTypeManagement = "management"
)

const maxACLBindingRuleDescriptionLength = 256

var validACLAuthMethodName = regexp.MustCompile(`^[a-zA-Z0-9-]{1,128}$`)

// ACLAuthMethod is an identity provider logins may go through.
type ACLAuthMethod struct {
	Name            string
	Type            string
	TokenLocality   string
	TokenNameFormat string
	MaxTokenTTL     time.Duration
	// Default marks the method a login without a method name uses; at
	// most one method is the default.
	Default bool
	Config  *ACLAuthMethodConfig
	// Hash is a digest of the method's fields, set on every write.
	Hash        []byte
	CreateTime  time.Time
	ModifyTime  time.Time
	CreateIndex uint64
	ModifyIndex uint64
}

// ACLAuthMethodConfig is the provider's configuration, stored as given.
type ACLAuthMethodConfig struct {
	JWTValidationPubKeys []string
	JWKSURL              string
	OIDCDiscoveryURL     string
	OIDCClientID         string
	OIDCClientSecret     string
	OIDCClientAssertion  *OIDCClientAssertion
	OIDCEnablePKCE       bool
	OIDCDisableUserInfo  bool
	OIDCScopes           []string
	BoundAudiences       []string
	BoundIssuer          []string
	AllowedRedirectURIs  []string
	DiscoveryCaPem       []string
	JWKSCACert           string
	SigningAlgs          []string
	ExpirationLeeway     time.Duration
	NotBeforeLeeway      time.Duration
	ClockSkewLeeway      time.Duration
	ClaimMappings        map[string]string
	ListClaimMappings    map[string]string
	VerboseLogging       bool
}

// OIDCClientAssertion is a signed JWT sent to the provider in place of a
// client secret.
type OIDCClientAssertion struct {
	Audience     []string
	KeySource    string
	KeyAlgorithm string
	PrivateKey   *OIDCClientAssertionKey
	ExtraHeaders map[string]string
}

// OIDCClientAssertionKey is key material an operator supplies for a
// client assertion.
type OIDCClientAssertionKey struct {
	PemKey      string
	PemKeyFile  string
	KeyIDHeader string
	KeyID       string
	PemCert     string
	PemCertFile string
}

// ACLAuthMethodListStub is a method as lists show it: little, as the list
// is what a login page reads.
type ACLAuthMethodListStub struct {
	Name        string
	Type        string
	Default     bool
	Hash        []byte
	CreateIndex uint64
	ModifyIndex uint64
}

// Copy returns a deep copy of m. The config is copied through JSON: it
// has many nested fields and is copied only on writes and reads of one
// method.
func (m *ACLAuthMethod) Copy() *ACLAuthMethod {
	if m == nil {
		return nil
	}
	c := *m
	c.Hash = slices.Clone(m.Hash)
	if m.Config != nil {
		raw, err := json.Marshal(m.Config)
		if err == nil {
			c.Config = new(ACLAuthMethodConfig)
			if json.Unmarshal(raw, c.Config) != nil {
				cfg := *m.Config
				c.Config = &cfg
			}
		}
	}
	return &c
}

// Stub returns the list form of m.
func (m *ACLAuthMethod) Stub() *ACLAuthMethodListStub {
	return &ACLAuthMethodListStub{Name: m.Name, Type: m.Type, Default: m.Default, Hash: slices.Clone(m.Hash),
		CreateIndex: m.CreateIndex, ModifyIndex: m.ModifyIndex}
}

// Canonicalize fills the token name format a method leaves empty and sets
// the write times: CreateTime once (kept from existing when updating),
// ModifyTime on every write.
func (m *ACLAuthMethod) Canonicalize(existing *ACLAuthMethod, now time.Time) {
	if m.TokenNameFormat == "" {
		m.TokenNameFormat = DefaultACLAuthMethodTokenNameFormat
	}
	m.CreateTime = now.UTC()
	if existing != nil {
		m.CreateTime = existing.CreateTime
	}
	m.ModifyTime = now.UTC()
}

// SetHash computes and sets m.Hash over the fields an operator sets.
func (m *ACLAuthMethod) SetHash() []byte {
	h := sha256.New()
	fmt.Fprintf(h, "%q %q %q %q %d %t", m.Name, m.Type, m.TokenLocality, m.TokenNameFormat, m.MaxTokenTTL, m.Default)
	if m.Config != nil {
		raw, _ := json.Marshal(m.Config)
		h.Write(raw)
	}
	m.Hash = h.Sum(nil)
	return m.Hash
}

// Validate checks a method's fields; each problem names its field.
// MaxTokenTTL must lie within the token TTL bounds, as a token the
// method makes would have to.
func (m *ACLAuthMethod) Validate(minTTL, maxTTL time.Duration) error {
	var errs []error
	if !validACLAuthMethodName.MatchString(m.Name) {
		errs = append(errs, fmt.Errorf("invalid name '%s'", m.Name))
	}
	switch m.TokenLocality {
	case ACLAuthMethodTokenLocalityLocal, ACLAuthMethodTokenLocalityGlobal:
	default:
		errs = append(errs, fmt.Errorf("invalid token locality '%s'", m.TokenLocality))
	}
	switch m.Type {
	case ACLAuthMethodTypeOIDC, ACLAuthMethodTypeJWT:
	default:
		errs = append(errs, fmt.Errorf("invalid token type '%s'", m.Type))
	}
	if m.MaxTokenTTL < minTTL || m.MaxTokenTTL > maxTTL {
		errs = append(errs, fmt.Errorf("invalid MaxTokenTTL value '%s' (should be between %s and %s)",
			m.MaxTokenTTL, minTTL, maxTTL))
	}
	if m.Config == nil {
		errs = append(errs, errors.New("missing Config"))
	} else {
		errs = append(errs, m.Config.validate(m.Type)...)
	}
	return joinProblems(errs)
}

// validate checks what a method of type typ needs from its config: an
// OIDC method its provider and client; a JWT method exactly one way to
// find the keys that sign its tokens.
func (c *ACLAuthMethodConfig) validate(typ string) []error {
	var errs []error
	switch typ {
	case ACLAuthMethodTypeOIDC:
		if c.OIDCDiscoveryURL == "" {
			errs = append(errs, errors.New("Config.OIDCDiscoveryURL is required for an OIDC method"))
		}
		if c.OIDCClientID == "" {
			errs = append(errs, errors.New("Config.OIDCClientID is required for an OIDC method"))
		}
	case ACLAuthMethodTypeJWT:
		n := 0
		for _, set := range []bool{len(c.JWTValidationPubKeys) > 0, c.JWKSURL != "", c.OIDCDiscoveryURL != ""} {
			if set {
				n++
			}
		}
		if n != 1 {
			errs = append(errs, errors.New(
				"exactly one of Config.JWTValidationPubKeys, Config.JWKSURL or Config.OIDCDiscoveryURL is required for a JWT method"))
		}
	}
	for _, l := range []struct {
		name string
		d    time.Duration
	}{{"ExpirationLeeway", c.ExpirationLeeway}, {"NotBeforeLeeway", c.NotBeforeLeeway}, {"ClockSkewLeeway", c.ClockSkewLeeway}} {
		if l.d < 0 {
			errs = append(errs, fmt.Errorf("Config.%s cannot be negative", l.name))
		}
	}
	return errs
}

// MarshalJSON renders MaxTokenTTL as a duration string ("" when zero), as
// the api package reads it.
func (m *ACLAuthMethod) MarshalJSON() ([]byte, error) {
	type alias ACLAuthMethod
	out := struct {
		MaxTokenTTL string
		*alias
	}{alias: (*alias)(m)}
	if m.MaxTokenTTL != 0 {
		out.MaxTokenTTL = m.MaxTokenTTL.String()
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads MaxTokenTTL as a duration string or nanoseconds.
func (m *ACLAuthMethod) UnmarshalJSON(data []byte) error {
	type alias ACLAuthMethod
	in := struct {
		MaxTokenTTL interface{}
		*alias
	}{alias: (*alias)(m)}
	if err := json.Unmarshal(data, &in); err != nil {
		return err
	}
	d, err := jsonDuration("MaxTokenTTL", in.MaxTokenTTL)
	m.MaxTokenTTL = d
	return err
}

// MarshalJSON renders the leeways as duration strings ("" when zero).
func (c *ACLAuthMethodConfig) MarshalJSON() ([]byte, error) {
	type alias ACLAuthMethodConfig
	str := func(d time.Duration) string {
		if d == 0 {
			return ""
		}
		return d.String()
	}
	return json.Marshal(struct {
		ExpirationLeeway string
		NotBeforeLeeway  string
		ClockSkewLeeway  string
		*alias
	}{str(c.ExpirationLeeway), str(c.NotBeforeLeeway), str(c.ClockSkewLeeway), (*alias)(c)})
}

// UnmarshalJSON reads the leeways as duration strings or nanoseconds.
func (c *ACLAuthMethodConfig) UnmarshalJSON(data []byte) error {
	type alias ACLAuthMethodConfig
	in := struct {
		ExpirationLeeway interface{}
		NotBeforeLeeway  interface{}
		ClockSkewLeeway  interface{}
		*alias
	}{alias: (*alias)(c)}
	if err := json.Unmarshal(data, &in); err != nil {
		return err
	}
	var err error
	if c.ExpirationLeeway, err = jsonDuration("ExpirationLeeway", in.ExpirationLeeway); err != nil {
		return err
	}
	if c.NotBeforeLeeway, err = jsonDuration("NotBeforeLeeway", in.NotBeforeLeeway); err != nil {
		return err
	}
	c.ClockSkewLeeway, err = jsonDuration("ClockSkewLeeway", in.ClockSkewLeeway)
	return err
}

// jsonDuration reads a decoded JSON duration: a duration string, or a
// number of nanoseconds; absent is zero.
func jsonDuration(field string, v interface{}) (time.Duration, error) {
	switch v := v.(type) {
	case nil:
		return 0, nil
	case string:
		if v == "" {
			return 0, nil
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", field, err)
		}
		return d, nil
	case float64:
		return time.Duration(v), nil
	default:
		return 0, fmt.Errorf("%s: not a duration: %v", field, v)
	}
}

// ACLBindingRule maps logins through an auth method whose claims match
// Selector to a role, a policy, or a management token.
type ACLBindingRule struct {
	ID          string
	Description string
	AuthMethod  string
	// Selector is a go-bexpr expression over the login's claims; empty
	// matches every login.
	Selector string
	BindType string
	// BindName names the role or policy; empty for management.
	BindName string
	// Hash is a digest of the rule's fields, set on every write.
	Hash        []byte
	CreateTime  time.Time
	ModifyTime  time.Time
	CreateIndex uint64
	ModifyIndex uint64
}

// ACLBindingRuleListStub is a binding rule as lists show it.
type ACLBindingRuleListStub struct {
	ID          string
	Description string
	AuthMethod  string
	Hash        []byte
	CreateIndex uint64
	ModifyIndex uint64
}

// Copy returns a deep copy of r.
func (r *ACLBindingRule) Copy() *ACLBindingRule {
	if r == nil {
		return nil
	}
	c := *r
	c.Hash = slices.Clone(r.Hash)
	return &c
}

// Stub returns the list form of r.
func (r *ACLBindingRule) Stub() *ACLBindingRuleListStub {
	return &ACLBindingRuleListStub{ID: r.ID, Description: r.Description, AuthMethod: r.AuthMethod,
		Hash: slices.Clone(r.Hash), CreateIndex: r.CreateIndex, ModifyIndex: r.ModifyIndex}
}

// Canonicalize gives a new rule an ID and sets the write times, keeping
// CreateTime from existing when updating.
func (r *ACLBindingRule) Canonicalize(existing *ACLBindingRule, now time.Time) {
	if r.ID == "" {
		r.ID = GenerateUUID()
	}
	r.CreateTime = now.UTC()
	if existing != nil {
		r.CreateTime = existing.CreateTime
	}
	r.ModifyTime = now.UTC()
}

// SetHash computes and sets r.Hash over the fields an operator sets.
func (r *ACLBindingRule) SetHash() []byte {
	h := sha256.New()
	fmt.Fprintf(h, "%q %q %q %q %q %q", r.ID, r.Description, r.AuthMethod, r.Selector, r.BindType, r.BindName)
	r.Hash = h.Sum(nil)
	return r.Hash
}

// Validate checks a rule's fields; each problem names its field. The
// selector must compile as a go-bexpr expression.
func (r *ACLBindingRule) Validate() error {
	var errs []error
	if r.AuthMethod == "" {
		errs = append(errs, errors.New("AuthMethod is missing"))
	}
	if len(r.Description) > maxACLBindingRuleDescriptionLength {
		errs = append(errs, fmt.Errorf("Description longer than %d", maxACLBindingRuleDescriptionLength))
	}
	switch r.BindType {
	case ACLBindingRuleBindTypeRole, ACLBindingRuleBindTypePolicy:
		if r.BindName == "" {
			errs = append(errs, errors.New("BindName is missing"))
		}
	case ACLBindingRuleBindTypeManagement:
		if r.BindName != "" {
			errs = append(errs, errors.New("BindName should be empty for a management rule"))
		}
	default:
		errs = append(errs, fmt.Errorf("unsupported BindType '%s'", r.BindType))
	}
	if r.Selector != "" {
		if _, err := bexpr.CreateEvaluator(r.Selector); err != nil {
			errs = append(errs, fmt.Errorf("Selector is invalid: %v", err))
		}
	}
	return joinProblems(errs)
}
