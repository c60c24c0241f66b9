package structs

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

// The ACL objects: policies (named sets of rules), tokens (a secret that
// names policies and roles, or grants everything) and roles (named sets
// of policies a token may link to). The state store keeps them as the
// ACL endpoints wrote them; the rules language itself is package acl's.

// Token types.
const (
	ACLClientToken     = "client"
	ACLManagementToken = "management"
)

// Limits on ACL object names and descriptions, as Nomad sets them.
const (
	maxACLPolicyDescriptionLength = 256
	maxACLRoleDescriptionLength   = 256
	maxACLTokenNameLength         = 256
)

// Default bounds of a token's time to live (agent acl.token_min/
// max_expiration_ttl).
const (
	DefaultACLTokenMinExpirationTTL = time.Minute
	DefaultACLTokenMaxExpirationTTL = 24 * time.Hour
)

// AnonymousPolicyName is the policy whose rules requests without a token
// get, when it exists.
const AnonymousPolicyName = "anonymous"

var (
	validACLPolicyName = regexp.MustCompile(`^[a-zA-Z0-9-]{1,128}$`)
	validACLRoleName   = regexp.MustCompile(`^[a-zA-Z0-9-]{1,128}$`)
)

// AnonymousACLToken stands for requests that carry no token. It is never
// stored.
var AnonymousACLToken = &ACLToken{
	AccessorID: "anonymous",
	Name:       "Anonymous Token",
	Type:       ACLClientToken,
	Policies:   []string{AnonymousPolicyName},
}

// ACLsDisabledToken is what ACL.WhoAmI answers while ACLs are off.
var ACLsDisabledToken = &ACLToken{
	AccessorID: "acls-disabled",
	Name:       "ACLs disabled token",
	Type:       ACLClientToken,
}

// ACLPolicy is a named set of rules.
type ACLPolicy struct {
	Name        string
	Description string
	// Rules are in the policy language of package acl (HCL, or its JSON
	// form).
	Rules string
	// JobACL attaches the policy to the workloads of a job, group or
	// task; nil for policies only tokens name.
	JobACL *JobACL
	// Hash is a digest of the fields above, set on every write.
	Hash        []byte
	CreateIndex uint64
	ModifyIndex uint64
}

// JobACL names the workloads a policy applies to; each field needs the
// one before it.
type JobACL struct {
	Namespace string
	JobID     string
	Group     string
	Task      string
}

// ACLPolicyListStub is a policy as lists show it: without its rules.
type ACLPolicyListStub struct {
	Name        string
	Description string
	JobACL      *JobACL
	Hash        []byte
	CreateIndex uint64
	ModifyIndex uint64
}

// Copy returns a copy of p.
func (p *ACLPolicy) Copy() *ACLPolicy {
	if p == nil {
		return nil
	}
	c := *p
	if p.JobACL != nil {
		j := *p.JobACL
		c.JobACL = &j
	}
	c.Hash = slices.Clone(p.Hash)
	return &c
}

// Stub returns the list form of p.
func (p *ACLPolicy) Stub() *ACLPolicyListStub {
	c := p.Copy()
	return &ACLPolicyListStub{Name: c.Name, Description: c.Description, JobACL: c.JobACL, Hash: c.Hash,
		CreateIndex: c.CreateIndex, ModifyIndex: c.ModifyIndex}
}

// SetHash computes and sets p.Hash.
func (p *ACLPolicy) SetHash() []byte {
	h := sha256.New()
	fmt.Fprintf(h, "%q %q %q", p.Name, p.Description, p.Rules)
	if p.JobACL != nil {
		fmt.Fprintf(h, " %q %q %q %q", p.JobACL.Namespace, p.JobACL.JobID, p.JobACL.Group, p.JobACL.Task)
	}
	p.Hash = h.Sum(nil)
	return p.Hash
}

// Validate checks a policy's name, description and workload attachment;
// its rules are checked by the ACL endpoint with the policy parser.
func (p *ACLPolicy) Validate() error {
	var errs []error
	if !validACLPolicyName.MatchString(p.Name) {
		errs = append(errs, fmt.Errorf("invalid name '%s'", p.Name))
	}
	if len(p.Description) > maxACLPolicyDescriptionLength {
		errs = append(errs, fmt.Errorf("description longer than %d", maxACLPolicyDescriptionLength))
	}
	if j := p.JobACL; j != nil {
		if j.JobID != "" && j.Namespace == "" {
			errs = append(errs, errors.New("namespace must be set to set job ID"))
		}
		if j.Group != "" && j.JobID == "" {
			errs = append(errs, errors.New("job ID must be set to set group"))
		}
		if j.Task != "" && j.Group == "" {
			errs = append(errs, errors.New("group must be set to set task"))
		}
	}
	return joinProblems(errs)
}

// joinProblems makes one error of several, each on its own, of kind
// ErrInvalid; nil when there are none.
// IsValidACLName reports whether name may name a policy or a role: both
// follow the same pattern.
func IsValidACLName(name string) bool { return validACLPolicyName.MatchString(name) }

func joinProblems(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	return KindErrorf(ErrInvalid, "%s", strings.Join(msgs, "; "))
}

// ACLToken is a secret that grants what its policies and roles allow, or
// everything (a management token).
type ACLToken struct {
	// AccessorID names the token; it is not secret.
	AccessorID string
	// SecretID is what requests present. It never appears in a log line,
	// an event or an error: String and GoString leave it out.
	SecretID string
	Name     string
	Type     string
	Policies []string
	// Roles are stored by ID; reads fill in each role's current name and
	// drop links to roles that no longer exist.
	Roles  []*ACLTokenRoleLink
	Global bool
	// Hash is a digest of the token's grants, set on every write.
	Hash       []byte
	CreateTime time.Time
	// ExpirationTime is when the token stops working; nil for never.
	ExpirationTime *time.Time
	// ExpirationTTL sets ExpirationTime from CreateTime on creation.
	ExpirationTTL time.Duration
	CreateIndex   uint64
	ModifyIndex   uint64
}

// ACLTokenRoleLink links a token to a role, by ID or by name on input;
// stored by ID.
type ACLTokenRoleLink struct {
	ID   string
	Name string
}

// ACLTokenListStub is a token as lists show it: without its secret.
type ACLTokenListStub struct {
	AccessorID     string
	Name           string
	Type           string
	Policies       []string
	Roles          []*ACLTokenRoleLink
	Global         bool
	Hash           []byte
	CreateTime     time.Time
	ExpirationTime *time.Time `json:",omitempty"`
	CreateIndex    uint64
	ModifyIndex    uint64
}

// String names the token without its secret, so that a token handed to a
// logger or an error by mistake leaks nothing. It has a value receiver so
// that a token value prints the same way as a pointer.
func (t ACLToken) String() string {
	return fmt.Sprintf("ACL token %s (%s, %q)", t.AccessorID, t.Type, t.Name)
}

// GoString is String, for %#v.
func (t ACLToken) GoString() string { return t.String() }

// Copy returns a deep copy of t.
func (t *ACLToken) Copy() *ACLToken {
	if t == nil {
		return nil
	}
	c := *t
	c.Policies = slices.Clone(t.Policies)
	c.Hash = slices.Clone(t.Hash)
	if t.Roles != nil {
		c.Roles = make([]*ACLTokenRoleLink, len(t.Roles))
		for i, r := range t.Roles {
			l := *r
			c.Roles[i] = &l
		}
	}
	if t.ExpirationTime != nil {
		e := *t.ExpirationTime
		c.ExpirationTime = &e
	}
	return &c
}

// Stub returns the list form of t, without its secret.
func (t *ACLToken) Stub() *ACLTokenListStub {
	c := t.Copy()
	return &ACLTokenListStub{AccessorID: c.AccessorID, Name: c.Name, Type: c.Type, Policies: c.Policies,
		Roles: c.Roles, Global: c.Global, Hash: c.Hash, CreateTime: c.CreateTime, ExpirationTime: c.ExpirationTime,
		CreateIndex: c.CreateIndex, ModifyIndex: c.ModifyIndex}
}

// IsManagement reports whether the token grants everything.
func (t *ACLToken) IsManagement() bool { return t != nil && t.Type == ACLManagementToken }

// IsExpired reports whether the token has expired at now.
func (t *ACLToken) IsExpired(now time.Time) bool {
	return t != nil && t.ExpirationTime != nil && !t.ExpirationTime.IsZero() && t.ExpirationTime.Before(now)
}

// HasRole reports whether the token links to the role with the ID.
func (t *ACLToken) HasRole(id string) bool {
	for _, r := range t.Roles {
		if r.ID == id {
			return true
		}
	}
	return false
}

// SetHash computes and sets t.Hash over what the token grants.
func (t *ACLToken) SetHash() []byte {
	h := sha256.New()
	fmt.Fprintf(h, "%q %q %q %v", t.Name, t.Type, t.SecretID, t.Global)
	for _, p := range t.Policies {
		fmt.Fprintf(h, " p%q", p)
	}
	for _, r := range t.Roles {
		fmt.Fprintf(h, " r%q", r.ID)
	}
	t.Hash = h.Sum(nil)
	return t.Hash
}

// Canonicalize fills in what a new token gets from the server: its IDs,
// its creation time and, from ExpirationTTL, its expiration time. A token
// with an AccessorID is left alone.
func (t *ACLToken) Canonicalize(now time.Time) {
	if t.AccessorID != "" {
		return
	}
	t.AccessorID = GenerateUUID()
	if t.SecretID == "" {
		t.SecretID = GenerateUUID()
	}
	t.CreateTime = now.UTC()
	if t.ExpirationTTL != 0 {
		e := t.CreateTime.Add(t.ExpirationTTL)
		t.ExpirationTime = &e
	}
}

// Validate checks a token as created (existing nil) or as an update of
// existing, against the region's bounds on its time to live. The texts
// are Nomad's.
func (t *ACLToken) Validate(minTTL, maxTTL time.Duration, existing *ACLToken) error {
	var errs []error
	if len(t.Name) > maxACLTokenNameLength {
		errs = append(errs, errors.New("token name too long"))
	}
	switch t.Type {
	case ACLClientToken:
		if len(t.Policies) == 0 && len(t.Roles) == 0 {
			errs = append(errs, errors.New("client token missing policies or roles"))
		}
	case ACLManagementToken:
		if len(t.Policies) != 0 || len(t.Roles) != 0 {
			errs = append(errs, errors.New("management token cannot be associated with policies or roles"))
		}
	default:
		errs = append(errs, errors.New("token type must be client or management"))
	}
	if existing == nil {
		if t.ExpirationTTL < 0 {
			errs = append(errs, fmt.Errorf("token expiration TTL '%s' should not be negative", t.ExpirationTTL))
		}
		if t.ExpirationTime != nil && !t.ExpirationTime.IsZero() {
			if t.CreateTime.After(*t.ExpirationTime) {
				errs = append(errs, errors.New("expiration time cannot be before create time"))
			}
			in := t.ExpirationTime.Sub(t.CreateTime)
			if in > maxTTL {
				errs = append(errs, fmt.Errorf("expiration time cannot be more than %s in the future (was %s)", maxTTL, in))
			} else if in < minTTL {
				errs = append(errs, fmt.Errorf("expiration time cannot be less than %s in the future (was %s)", minTTL, in))
			}
		}
	} else {
		if existing.Global != t.Global {
			errs = append(errs, errors.New("cannot toggle global mode"))
		}
		if existing.ExpirationTTL != t.ExpirationTTL {
			errs = append(errs, errors.New("cannot update expiration TTL"))
		}
		if !sameTime(existing.ExpirationTime, t.ExpirationTime) {
			errs = append(errs, errors.New("cannot update expiration time"))
		}
	}
	return joinProblems(errs)
}

func sameTime(a, b *time.Time) bool {
	az, bz := a == nil || a.IsZero(), b == nil || b.IsZero()
	if az || bz {
		return az == bz
	}
	return a.Equal(*b)
}

// MarshalJSON renders ExpirationTTL as a duration string ("1h0m0s", ""
// when zero) and leaves out a nil ExpirationTime, as Nomad does.
func (t *ACLToken) MarshalJSON() ([]byte, error) {
	type alias ACLToken
	out := struct {
		ExpirationTTL  string
		ExpirationTime *time.Time `json:",omitempty"`
		*alias
	}{ExpirationTime: t.ExpirationTime, alias: (*alias)(t)}
	if t.ExpirationTTL != 0 {
		out.ExpirationTTL = t.ExpirationTTL.String()
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads ExpirationTTL as a duration string or a number of
// nanoseconds.
func (t *ACLToken) UnmarshalJSON(data []byte) error {
	type alias ACLToken
	in := struct {
		ExpirationTTL interface{}
		*alias
	}{alias: (*alias)(t)}
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
			t.ExpirationTTL = d
		}
	case float64:
		t.ExpirationTTL = time.Duration(v)
	}
	return nil
}

// ACLRole is a named set of policies tokens may link to.
type ACLRole struct {
	ID          string
	Name        string
	Description string
	Policies    []*ACLRolePolicyLink
	// Hash is a digest of the role's fields, set on every write.
	Hash        []byte
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
	Hash        []byte
	CreateIndex uint64
	ModifyIndex uint64
}

// Copy returns a deep copy of r.
func (r *ACLRole) Copy() *ACLRole {
	if r == nil {
		return nil
	}
	c := *r
	c.Hash = slices.Clone(r.Hash)
	if r.Policies != nil {
		c.Policies = make([]*ACLRolePolicyLink, len(r.Policies))
		for i, p := range r.Policies {
			l := *p
			c.Policies[i] = &l
		}
	}
	return &c
}

// Stub returns the list form of r.
func (r *ACLRole) Stub() *ACLRoleListStub {
	c := r.Copy()
	return &ACLRoleListStub{ID: c.ID, Name: c.Name, Description: c.Description, Policies: c.Policies,
		Hash: c.Hash, CreateIndex: c.CreateIndex, ModifyIndex: c.ModifyIndex}
}

// PolicyNames returns the names of the role's policies.
func (r *ACLRole) PolicyNames() []string {
	out := make([]string, 0, len(r.Policies))
	for _, p := range r.Policies {
		out = append(out, p.Name)
	}
	return out
}

// Canonicalize gives a new role an ID and drops repeated policy links.
func (r *ACLRole) Canonicalize() {
	if r.ID == "" {
		r.ID = GenerateUUID()
	}
	seen := make(map[string]bool, len(r.Policies))
	var kept []*ACLRolePolicyLink
	for _, p := range r.Policies {
		if p == nil || seen[p.Name] {
			continue
		}
		seen[p.Name] = true
		kept = append(kept, p)
	}
	r.Policies = kept
}

// SetHash computes and sets r.Hash.
func (r *ACLRole) SetHash() []byte {
	h := sha256.New()
	fmt.Fprintf(h, "%q %q", r.Name, r.Description)
	for _, p := range r.Policies {
		fmt.Fprintf(h, " %q", p.Name)
	}
	r.Hash = h.Sum(nil)
	return r.Hash
}

// Validate checks a role's name, description and policy links; the
// texts are Nomad's.
func (r *ACLRole) Validate() error {
	var errs []error
	if !validACLRoleName.MatchString(r.Name) {
		errs = append(errs, fmt.Errorf("invalid name '%s'", r.Name))
	}
	if len(r.Description) > maxACLRoleDescriptionLength {
		errs = append(errs, fmt.Errorf("description longer than %d", maxACLRoleDescriptionLength))
	}
	if len(r.Policies) < 1 {
		errs = append(errs, errors.New("at least one policy should be specified"))
	}
	return joinProblems(errs)
}

// OneTimeTokenTTL is how long a one-time token may be exchanged.
const OneTimeTokenTTL = 10 * time.Minute

// OneTimeToken is a secret that, exchanged once before ExpiresAt, gives
// the ACL token it was made for (AccessorID): how a browser is handed a
// token without it passing through a URL.
type OneTimeToken struct {
	// OneTimeSecretID is what the exchange presents. String and GoString
	// leave it out.
	OneTimeSecretID string
	AccessorID      string
	ExpiresAt       time.Time
	CreateIndex     uint64
	ModifyIndex     uint64
}

// String names the one-time token without its secret.
func (o OneTimeToken) String() string {
	return fmt.Sprintf("one-time token for %s (expires %s)", o.AccessorID, o.ExpiresAt.Format(time.RFC3339))
}

// GoString is String, for %#v.
func (o OneTimeToken) GoString() string { return o.String() }

// Copy returns a copy of o.
func (o *OneTimeToken) Copy() *OneTimeToken {
	if o == nil {
		return nil
	}
	c := *o
	return &c
}
