package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// Auth methods, binding rules and client introduction tokens: the
// /v1/acl/auth-method, /v1/acl/binding-rule and /v1/acl/identity
// endpoint groups.

// Auth method types and token localities.
const (
	ACLAuthMethodTypeOIDC = "OIDC"
	ACLAuthMethodTypeJWT  = "JWT"

	ACLAuthMethodTokenLocalityLocal  = "local"
	ACLAuthMethodTokenLocalityGlobal = "global"
)

// Binding rule bind types.
const (
	ACLBindingRuleBindTypeRole       = "role"
	ACLBindingRuleBindTypePolicy     = "policy"
	ACLBindingRuleBindTypeManagement = "management"
)

var (
	errMissingACLAuthMethodName = errors.New("missing ACL auth-method name")
	errMissingACLBindingRuleID  = errors.New("missing ACL binding rule ID")
)

// ACLAuthMethod is an identity provider logins may go through.
type ACLAuthMethod struct {
	Name            string
	Type            string
	TokenLocality   string
	TokenNameFormat string
	MaxTokenTTL     time.Duration
	// Default marks the method used by a login that names none.
	Default     bool
	Config      *ACLAuthMethodConfig
	CreateTime  time.Time
	ModifyTime  time.Time
	CreateIndex uint64
	ModifyIndex uint64
}

// ACLAuthMethodConfig is the provider's configuration.
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

// OIDCClientAssertionKeySource is where the key signing a client
// assertion comes from.
type OIDCClientAssertionKeySource string

// The client assertion key sources.
const (
	OIDCKeySourceNomad        OIDCClientAssertionKeySource = "nomad"
	OIDCKeySourcePrivateKey   OIDCClientAssertionKeySource = "private_key"
	OIDCKeySourceClientSecret OIDCClientAssertionKeySource = "client_secret"
)

// OIDCClientAssertion is a signed JWT sent to the provider in place of a
// client secret.
type OIDCClientAssertion struct {
	Audience     []string
	KeySource    OIDCClientAssertionKeySource
	KeyAlgorithm string
	PrivateKey   *OIDCClientAssertionKey
	ExtraHeaders map[string]string
}

// OIDCClientAssertionKeyIDHeader is the header naming the assertion's key.
type OIDCClientAssertionKeyIDHeader string

// The key ID headers.
const (
	OIDCClientAssertionHeaderKid     OIDCClientAssertionKeyIDHeader = "kid"
	OIDCClientAssertionHeaderX5t     OIDCClientAssertionKeyIDHeader = "x5t"
	OIDCClientAssertionHeaderX5tS256 OIDCClientAssertionKeyIDHeader = "x5t#S256"
)

// OIDCClientAssertionKey is key material for a client assertion.
type OIDCClientAssertionKey struct {
	PemKey      string
	PemKeyFile  string
	KeyIDHeader OIDCClientAssertionKeyIDHeader
	KeyID       string
	PemCert     string
	PemCertFile string
}

// ACLAuthMethodListStub is a method as the list shows it.
type ACLAuthMethodListStub struct {
	Name        string
	Type        string
	Default     bool
	CreateIndex uint64
	ModifyIndex uint64
}

// MarshalJSON writes MaxTokenTTL as a duration string.
func (m *ACLAuthMethod) MarshalJSON() ([]byte, error) {
	type alias ACLAuthMethod
	return json.Marshal(struct {
		MaxTokenTTL string
		*alias
	}{durationString(m.MaxTokenTTL), (*alias)(m)})
}

// UnmarshalJSON reads MaxTokenTTL as a duration string.
func (m *ACLAuthMethod) UnmarshalJSON(data []byte) error {
	type alias ACLAuthMethod
	in := struct {
		MaxTokenTTL interface{}
		*alias
	}{alias: (*alias)(m)}
	if err := json.Unmarshal(data, &in); err != nil {
		return err
	}
	var err error
	m.MaxTokenTTL, err = readDuration(in.MaxTokenTTL)
	return err
}

// MarshalJSON writes the leeways as duration strings.
func (c *ACLAuthMethodConfig) MarshalJSON() ([]byte, error) {
	type alias ACLAuthMethodConfig
	return json.Marshal(struct {
		ExpirationLeeway string
		NotBeforeLeeway  string
		ClockSkewLeeway  string
		*alias
	}{durationString(c.ExpirationLeeway), durationString(c.NotBeforeLeeway), durationString(c.ClockSkewLeeway), (*alias)(c)})
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
	if c.ExpirationLeeway, err = readDuration(in.ExpirationLeeway); err != nil {
		return err
	}
	if c.NotBeforeLeeway, err = readDuration(in.NotBeforeLeeway); err != nil {
		return err
	}
	c.ClockSkewLeeway, err = readDuration(in.ClockSkewLeeway)
	return err
}

func durationString(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}

// readDuration reads a decoded JSON duration: a string, nanoseconds, or
// absent (zero).
func readDuration(v interface{}) (time.Duration, error) {
	switch v := v.(type) {
	case nil:
		return 0, nil
	case string:
		if v == "" {
			return 0, nil
		}
		return time.ParseDuration(v)
	case float64:
		return time.Duration(v), nil
	}
	return 0, fmt.Errorf("unexpected duration %v", v)
}

// ACLBindingRule maps logins through an auth method whose claims match
// Selector to a role, a policy, or a management token.
type ACLBindingRule struct {
	ID          string
	Description string
	AuthMethod  string
	Selector    string
	BindType    string
	BindName    string
	CreateTime  time.Time
	ModifyTime  time.Time
	CreateIndex uint64
	ModifyIndex uint64
}

// ACLBindingRuleListStub is a binding rule as the list shows it.
type ACLBindingRuleListStub struct {
	ID          string
	Description string
	AuthMethod  string
	CreateIndex uint64
	ModifyIndex uint64
}

// ACLAuthMethods is the /v1/acl/auth-method endpoint group.
type ACLAuthMethods struct {
	client *Client
}

// ACLAuthMethods returns the auth method endpoint group.
func (c *Client) ACLAuthMethods() *ACLAuthMethods { return &ACLAuthMethods{client: c} }

// List returns every auth method's stub.
func (a *ACLAuthMethods) List(q *QueryOptions) ([]*ACLAuthMethodListStub, *QueryMeta, error) {
	var resp []*ACLAuthMethodListStub
	qm, err := a.client.query("/v1/acl/auth-methods", &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return resp, qm, nil
}

// Create makes an auth method.
func (a *ACLAuthMethods) Create(m *ACLAuthMethod, w *WriteOptions) (*ACLAuthMethod, *WriteMeta, error) {
	if m.Name == "" {
		return nil, nil, errMissingACLAuthMethodName
	}
	return a.put("/v1/acl/auth-method", m, w)
}

// Update changes an auth method.
func (a *ACLAuthMethods) Update(m *ACLAuthMethod, w *WriteOptions) (*ACLAuthMethod, *WriteMeta, error) {
	if m.Name == "" {
		return nil, nil, errMissingACLAuthMethodName
	}
	return a.put("/v1/acl/auth-method/"+escape(m.Name), m, w)
}

func (a *ACLAuthMethods) put(path string, m *ACLAuthMethod, w *WriteOptions) (*ACLAuthMethod, *WriteMeta, error) {
	var resp ACLAuthMethod
	wm, err := a.client.write(http.MethodPut, path, m, &resp, w)
	if err != nil {
		return nil, nil, err
	}
	return &resp, wm, nil
}

// Delete removes an auth method and its binding rules.
func (a *ACLAuthMethods) Delete(name string, w *WriteOptions) (*WriteMeta, error) {
	if name == "" {
		return nil, errMissingACLAuthMethodName
	}
	return a.client.write(http.MethodDelete, "/v1/acl/auth-method/"+escape(name), nil, nil, w)
}

// Get reads an auth method by name.
func (a *ACLAuthMethods) Get(name string, q *QueryOptions) (*ACLAuthMethod, *QueryMeta, error) {
	if name == "" {
		return nil, nil, errMissingACLAuthMethodName
	}
	var resp ACLAuthMethod
	qm, err := a.client.query("/v1/acl/auth-method/"+escape(name), &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return &resp, qm, nil
}

// ACLBindingRules is the /v1/acl/binding-rule endpoint group.
type ACLBindingRules struct {
	client *Client
}

// ACLBindingRules returns the binding rule endpoint group.
func (c *Client) ACLBindingRules() *ACLBindingRules { return &ACLBindingRules{client: c} }

// List returns the binding rules' stubs.
func (a *ACLBindingRules) List(q *QueryOptions) ([]*ACLBindingRuleListStub, *QueryMeta, error) {
	var resp []*ACLBindingRuleListStub
	qm, err := a.client.query("/v1/acl/binding-rules", &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return resp, qm, nil
}

// Create makes a binding rule; the server picks its ID.
func (a *ACLBindingRules) Create(r *ACLBindingRule, w *WriteOptions) (*ACLBindingRule, *WriteMeta, error) {
	return a.put("/v1/acl/binding-rule", r, w)
}

// Update changes a binding rule.
func (a *ACLBindingRules) Update(r *ACLBindingRule, w *WriteOptions) (*ACLBindingRule, *WriteMeta, error) {
	if r.ID == "" {
		return nil, nil, errMissingACLBindingRuleID
	}
	return a.put("/v1/acl/binding-rule/"+escape(r.ID), r, w)
}

func (a *ACLBindingRules) put(path string, r *ACLBindingRule, w *WriteOptions) (*ACLBindingRule, *WriteMeta, error) {
	var resp ACLBindingRule
	wm, err := a.client.write(http.MethodPut, path, r, &resp, w)
	if err != nil {
		return nil, nil, err
	}
	return &resp, wm, nil
}

// Delete removes a binding rule.
func (a *ACLBindingRules) Delete(id string, w *WriteOptions) (*WriteMeta, error) {
	if id == "" {
		return nil, errMissingACLBindingRuleID
	}
	return a.client.write(http.MethodDelete, "/v1/acl/binding-rule/"+escape(id), nil, nil, w)
}

// Get reads a binding rule by ID.
func (a *ACLBindingRules) Get(id string, q *QueryOptions) (*ACLBindingRule, *QueryMeta, error) {
	if id == "" {
		return nil, nil, errMissingACLBindingRuleID
	}
	var resp ACLBindingRule
	qm, err := a.client.query("/v1/acl/binding-rule/"+escape(id), &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return &resp, qm, nil
}

// ACLIdentity is the /v1/acl/identity endpoint group.
type ACLIdentity struct {
	client *Client
}

// ACLIdentity returns the identity endpoint group.
func (c *Client) ACLIdentity() *ACLIdentity { return &ACLIdentity{client: c} }

// ACLIdentityClientIntroductionTokenRequest asks for a token a new client
// node presents when it first registers. TTL 0 is the server's default;
// NodePool "" is "default".
type ACLIdentityClientIntroductionTokenRequest struct {
	TTL      time.Duration
	NodeName string
	NodePool string
}

// ACLIdentityClientIntroductionTokenResponse carries the signed JWT.
type ACLIdentityClientIntroductionTokenResponse struct {
	JWT string
}

// CreateClientIntroductionToken asks the servers to sign a client
// introduction token.
func (a *ACLIdentity) CreateClientIntroductionToken(req *ACLIdentityClientIntroductionTokenRequest,
	w *WriteOptions) (*ACLIdentityClientIntroductionTokenResponse, *WriteMeta, error) {
	var resp ACLIdentityClientIntroductionTokenResponse
	wm, err := a.client.write(http.MethodPut, "/v1/acl/identity/client-introduction-token", req, &resp, w)
	if err != nil {
		return nil, nil, err
	}
	return &resp, wm, nil
}
