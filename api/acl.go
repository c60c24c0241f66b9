package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// The /v1/acl endpoint groups: policies, tokens and roles. The types and
// their JSON are those of HashiCorp's client.

// ACLPolicy is a named set of rules.
type ACLPolicy struct {
	Name        string
	Description string
	Rules       string
	JobACL      *JobACL
	CreateIndex uint64
	ModifyIndex uint64
}

// JobACL attaches a policy to the workloads of a job, group or task.
type JobACL struct {
	Namespace string
	JobID     string
	Group     string
	Task      string
}

// ACLPolicyListStub is a policy as lists show it.
type ACLPolicyListStub struct {
	Name        string
	Description string
	JobACL      *JobACL
	CreateIndex uint64
	ModifyIndex uint64
}

// ACLToken is a token; SecretID is what requests present.
type ACLToken struct {
	AccessorID string
	SecretID   string
	Name       string
	Type       string
	Policies   []string
	Roles      []*ACLTokenRoleLink
	Global     bool
	CreateTime time.Time
	// ExpirationTime is when the token stops working; nil for never.
	ExpirationTime *time.Time `json:",omitempty"`
	// ExpirationTTL sets ExpirationTime on creation; a duration string on
	// the wire.
	ExpirationTTL time.Duration `json:",omitempty"`
	CreateIndex   uint64
	ModifyIndex   uint64
}

// ACLTokenRoleLink links a token to a role by ID or name.
type ACLTokenRoleLink struct {
	ID   string
	Name string
}

// MarshalJSON sends ExpirationTTL as a duration string.
func (a *ACLToken) MarshalJSON() ([]byte, error) {
	type alias ACLToken
	out := struct {
		ExpirationTTL string
		*alias
	}{alias: (*alias)(a)}
	if a.ExpirationTTL != 0 {
		out.ExpirationTTL = a.ExpirationTTL.String()
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads ExpirationTTL as a duration string or nanoseconds.
func (a *ACLToken) UnmarshalJSON(data []byte) error {
	type alias ACLToken
	in := struct {
		ExpirationTTL any
		*alias
	}{alias: (*alias)(a)}
	if err := json.Unmarshal(data, &in); err != nil {
		return err
	}
	switch v := in.ExpirationTTL.(type) {
	case string:
		if v != "" {
			d, err := time.ParseDuration(v)
			if err != nil {
				return fmt.Errorf("ExpirationTTL: %w", err)
			}
			a.ExpirationTTL = d
		}
	case float64:
		a.ExpirationTTL = time.Duration(v)
	}
	return nil
}

// ACLTokenListStub is a token as lists show it: without its secret.
type ACLTokenListStub struct {
	AccessorID     string
	Name           string
	Type           string
	Policies       []string
	Roles          []*ACLTokenRoleLink
	Global         bool
	CreateTime     time.Time
	ExpirationTime *time.Time `json:",omitempty"`
	CreateIndex    uint64
	ModifyIndex    uint64
}

// BootstrapRequest is the body of a bootstrap that chooses its secret.
type BootstrapRequest struct {
	BootstrapSecret string
}

// ACLRole is a named set of policies tokens may link to.
type ACLRole struct {
	ID          string
	Name        string
	Description string
	Policies    []*ACLRolePolicyLink
	CreateIndex uint64
	ModifyIndex uint64
}

// ACLRolePolicyLink links a role to a policy by name.
type ACLRolePolicyLink struct {
	Name string
}

// ACLRoleListStub is a role as lists show it.
type ACLRoleListStub struct {
	ID          string
	Name        string
	Description string
	Policies    []*ACLRolePolicyLink
	CreateIndex uint64
	ModifyIndex uint64
}

// ACLPolicies is the /v1/acl/policy endpoint group.
type ACLPolicies struct {
	client *Client
}

// ACLPolicies returns the policy endpoint group.
func (c *Client) ACLPolicies() *ACLPolicies { return &ACLPolicies{client: c} }

// List returns the policies the caller may see.
func (a *ACLPolicies) List(q *QueryOptions) ([]*ACLPolicyListStub, *QueryMeta, error) {
	var resp []*ACLPolicyListStub
	qm, err := a.client.query("/v1/acl/policies", &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return resp, qm, nil
}

// Upsert creates or replaces a policy.
func (a *ACLPolicies) Upsert(policy *ACLPolicy, w *WriteOptions) (*WriteMeta, error) {
	if policy == nil || policy.Name == "" {
		return nil, errors.New("missing policy name")
	}
	return a.client.write(http.MethodPut, "/v1/acl/policy/"+escape(policy.Name), policy, nil, w)
}

// Delete removes a policy.
func (a *ACLPolicies) Delete(name string, w *WriteOptions) (*WriteMeta, error) {
	if name == "" {
		return nil, errors.New("missing policy name")
	}
	return a.client.write(http.MethodDelete, "/v1/acl/policy/"+escape(name), nil, nil, w)
}

// Info reads a policy.
func (a *ACLPolicies) Info(name string, q *QueryOptions) (*ACLPolicy, *QueryMeta, error) {
	if name == "" {
		return nil, nil, errors.New("missing policy name")
	}
	var resp ACLPolicy
	qm, err := a.client.query("/v1/acl/policy/"+escape(name), &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return &resp, qm, nil
}

// Self lists the caller's own policies.
func (a *ACLPolicies) Self(q *QueryOptions) ([]*ACLPolicyListStub, *QueryMeta, error) {
	var resp []*ACLPolicyListStub
	qm, err := a.client.query("/v1/acl/policy/self", &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return resp, qm, nil
}

// ACLTokens is the /v1/acl/token endpoint group.
type ACLTokens struct {
	client *Client
}

// ACLTokens returns the token endpoint group.
func (c *Client) ACLTokens() *ACLTokens { return &ACLTokens{client: c} }

// Bootstrap makes the first management token.
func (a *ACLTokens) Bootstrap(w *WriteOptions) (*ACLToken, *WriteMeta, error) {
	var resp ACLToken
	wm, err := a.client.write(http.MethodPut, "/v1/acl/bootstrap", nil, &resp, w)
	if err != nil {
		return nil, nil, err
	}
	return &resp, wm, nil
}

// BootstrapOpts makes the first management token with the given secret
// (a UUID).
func (a *ACLTokens) BootstrapOpts(secret string, w *WriteOptions) (*ACLToken, *WriteMeta, error) {
	var resp ACLToken
	wm, err := a.client.write(http.MethodPut, "/v1/acl/bootstrap", &BootstrapRequest{BootstrapSecret: secret}, &resp, w)
	if err != nil {
		return nil, nil, err
	}
	return &resp, wm, nil
}

// List returns every token, without secrets.
func (a *ACLTokens) List(q *QueryOptions) ([]*ACLTokenListStub, *QueryMeta, error) {
	var resp []*ACLTokenListStub
	qm, err := a.client.query("/v1/acl/tokens", &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return resp, qm, nil
}

// Create makes a token whose IDs the server picks.
func (a *ACLTokens) Create(token *ACLToken, w *WriteOptions) (*ACLToken, *WriteMeta, error) {
	if token.AccessorID != "" {
		return nil, nil, errors.New("cannot specify Accessor ID")
	}
	return a.put("/v1/acl/token", token, w)
}

// Upload makes a client token with the IDs given.
func (a *ACLTokens) Upload(token *ACLToken, w *WriteOptions) (*ACLToken, *WriteMeta, error) {
	switch {
	case token.AccessorID == "":
		return nil, nil, errors.New("missing accessor ID")
	case token.SecretID == "":
		return nil, nil, errors.New("missing secret ID")
	case token.Type == "management":
		return nil, nil, errors.New("cannot upload management tokens")
	}
	return a.put("/v1/acl/token/"+escape(token.AccessorID), token, w)
}

// Update changes a token.
func (a *ACLTokens) Update(token *ACLToken, w *WriteOptions) (*ACLToken, *WriteMeta, error) {
	if token.AccessorID == "" {
		return nil, nil, errors.New("missing accessor ID")
	}
	return a.put("/v1/acl/token/"+escape(token.AccessorID), token, w)
}

func (a *ACLTokens) put(path string, token *ACLToken, w *WriteOptions) (*ACLToken, *WriteMeta, error) {
	var resp ACLToken
	wm, err := a.client.write(http.MethodPut, path, token, &resp, w)
	if err != nil {
		return nil, nil, err
	}
	return &resp, wm, nil
}

// Delete removes a token.
func (a *ACLTokens) Delete(accessorID string, w *WriteOptions) (*WriteMeta, error) {
	if accessorID == "" {
		return nil, errors.New("missing accessor ID")
	}
	return a.client.write(http.MethodDelete, "/v1/acl/token/"+escape(accessorID), nil, nil, w)
}

// Info reads a token, secret included.
func (a *ACLTokens) Info(accessorID string, q *QueryOptions) (*ACLToken, *QueryMeta, error) {
	if accessorID == "" {
		return nil, nil, errors.New("missing accessor ID")
	}
	var resp ACLToken
	qm, err := a.client.query("/v1/acl/token/"+escape(accessorID), &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return &resp, qm, nil
}

// Self reads the caller's own token.
func (a *ACLTokens) Self(q *QueryOptions) (*ACLToken, *QueryMeta, error) {
	var resp ACLToken
	qm, err := a.client.query("/v1/acl/token/self", &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return &resp, qm, nil
}

// OneTimeToken is a secret exchangeable once, before ExpiresAt, for the
// ACL token it was made for.
type OneTimeToken struct {
	OneTimeSecretID string
	AccessorID      string
	ExpiresAt       time.Time
	CreateIndex     uint64
	ModifyIndex     uint64
}

// OneTimeTokenUpsertResponse is the answer to UpsertOneTimeToken.
type OneTimeTokenUpsertResponse struct {
	OneTimeToken *OneTimeToken
}

// OneTimeTokenExchangeRequest is the body of ExchangeOneTimeToken.
type OneTimeTokenExchangeRequest struct {
	OneTimeSecretID string
}

// OneTimeTokenExchangeResponse is the answer to ExchangeOneTimeToken.
type OneTimeTokenExchangeResponse struct {
	Token *ACLToken
}

// UpsertOneTimeToken makes a one-time token for the client's own token.
func (a *ACLTokens) UpsertOneTimeToken(w *WriteOptions) (*OneTimeToken, *WriteMeta, error) {
	var resp OneTimeTokenUpsertResponse
	wm, err := a.client.write(http.MethodPut, "/v1/acl/token/onetime", nil, &resp, w)
	if err != nil {
		return nil, nil, err
	}
	if resp.OneTimeToken == nil {
		return nil, nil, errors.New("no one-time token returned")
	}
	return resp.OneTimeToken, wm, nil
}

// ExchangeOneTimeToken gives the ACL token a one-time token was made for;
// the one-time token is used up.
func (a *ACLTokens) ExchangeOneTimeToken(secret string, w *WriteOptions) (*ACLToken, *WriteMeta, error) {
	if secret == "" {
		return nil, nil, errors.New("missing secret ID")
	}
	var resp OneTimeTokenExchangeResponse
	wm, err := a.client.write(http.MethodPut, "/v1/acl/token/onetime/exchange",
		&OneTimeTokenExchangeRequest{OneTimeSecretID: secret}, &resp, w)
	if err != nil {
		return nil, nil, err
	}
	if resp.Token == nil {
		return nil, nil, errors.New("no ACL token returned")
	}
	return resp.Token, wm, nil
}

// ACLRoles is the /v1/acl/role endpoint group.
type ACLRoles struct {
	client *Client
}

// ACLRoles returns the role endpoint group.
func (c *Client) ACLRoles() *ACLRoles { return &ACLRoles{client: c} }

var errMissingACLRoleID = errors.New("missing ACL role ID")

// List returns the roles the caller may see.
func (a *ACLRoles) List(q *QueryOptions) ([]*ACLRoleListStub, *QueryMeta, error) {
	var resp []*ACLRoleListStub
	qm, err := a.client.query("/v1/acl/roles", &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return resp, qm, nil
}

// Create makes a role; the server picks its ID.
func (a *ACLRoles) Create(role *ACLRole, w *WriteOptions) (*ACLRole, *WriteMeta, error) {
	if role.ID != "" {
		return nil, nil, errors.New("cannot specify ACL role ID")
	}
	return a.put("/v1/acl/role", role, w)
}

// Update changes a role.
func (a *ACLRoles) Update(role *ACLRole, w *WriteOptions) (*ACLRole, *WriteMeta, error) {
	if role.ID == "" {
		return nil, nil, errMissingACLRoleID
	}
	return a.put("/v1/acl/role/"+escape(role.ID), role, w)
}

func (a *ACLRoles) put(path string, role *ACLRole, w *WriteOptions) (*ACLRole, *WriteMeta, error) {
	var resp ACLRole
	wm, err := a.client.write(http.MethodPut, path, role, &resp, w)
	if err != nil {
		return nil, nil, err
	}
	return &resp, wm, nil
}

// Delete removes a role.
func (a *ACLRoles) Delete(roleID string, w *WriteOptions) (*WriteMeta, error) {
	if roleID == "" {
		return nil, errMissingACLRoleID
	}
	return a.client.write(http.MethodDelete, "/v1/acl/role/"+escape(roleID), nil, nil, w)
}

// Get reads a role by ID.
func (a *ACLRoles) Get(roleID string, q *QueryOptions) (*ACLRole, *QueryMeta, error) {
	if roleID == "" {
		return nil, nil, errMissingACLRoleID
	}
	return a.get("/v1/acl/role/"+escape(roleID), q)
}

// GetByName reads a role by name.
func (a *ACLRoles) GetByName(name string, q *QueryOptions) (*ACLRole, *QueryMeta, error) {
	if name == "" {
		return nil, nil, errors.New("missing ACL role name")
	}
	return a.get("/v1/acl/role/name/"+escape(name), q)
}

func (a *ACLRoles) get(path string, q *QueryOptions) (*ACLRole, *QueryMeta, error) {
	var resp ACLRole
	qm, err := a.client.query(path, &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return &resp, qm, nil
}
