package auth

import (
	"sync"
	"time"

	"github.com/hashicorp/go-memdb"

	"github.com/opennomad/nomad/acl"
	"github.com/opennomad/nomad/structs"
)

// Store is what the resolver reads of a state store.
type Store interface {
	ACLTokenBySecretID(ws memdb.WatchSet, secret string) (*structs.ACLToken, error)
	ACLPolicyByName(ws memdb.WatchSet, name string) (*structs.ACLPolicy, error)
	ACLRoleByID(ws memdb.WatchSet, id string) (*structs.ACLRole, error)
	// ACLVersion is the highest Raft index of a write to the token,
	// policy or role tables: the cache's version.
	ACLVersion() (uint64, error)
}

// Resolver turns secrets into ACLs. It is safe for concurrent use.
type Resolver struct {
	now func() time.Time

	mu      sync.Mutex
	store   Store
	version uint64
	entries map[string]entry
}

// entry is one resolved secret.
type entry struct {
	acl *acl.ACL
	// expires is the token's expiration time, zero for none.
	expires time.Time
}

// maxEntries bounds the cache: past it, the cache starts over, so a
// flood of made-up secrets cannot grow the server's memory.
const maxEntries = 4096

// NewResolver returns a resolver telling time with now.
func NewResolver(now func() time.Time) *Resolver {
	return &Resolver{now: now, entries: map[string]entry{}}
}

// Resolve returns what the token with secret may do, as of store: the
// anonymous token's policies for "", acl.ManagementACL for a management
// token. An unknown secret is structs.ErrACLTokenNotFound (of kind
// structs.ErrPermissionDenied, answered 403 "ACL token not found" as
// Nomad does), an expired token structs.ErrACLTokenExpired; neither error
// names the secret.
func (r *Resolver) Resolve(store Store, secret string) (*acl.ACL, error) {
	version, err := store.ACLVersion()
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	if r.store != store || r.version != version || len(r.entries) >= maxEntries {
		r.store, r.version, r.entries = store, version, map[string]entry{}
	}
	e, ok := r.entries[secret]
	r.mu.Unlock()
	if !ok {
		e, err = r.compile(store, secret)
		if err != nil {
			return nil, err
		}
		r.mu.Lock()
		if r.store == store && r.version == version {
			r.entries[secret] = e
		}
		r.mu.Unlock()
	}
	if !e.expires.IsZero() && !r.now().Before(e.expires) {
		return nil, structs.ErrACLTokenExpired
	}
	return e.acl, nil
}

// compile resolves secret from the store.
func (r *Resolver) compile(store Store, secret string) (entry, error) {
	tok := structs.AnonymousACLToken
	if secret != "" {
		found, err := store.ACLTokenBySecretID(nil, secret)
		if err != nil {
			return entry{}, err
		}
		if found == nil {
			return entry{}, structs.ErrACLTokenNotFound
		}
		tok = found
	}
	var e entry
	if tok.ExpirationTime != nil {
		e.expires = *tok.ExpirationTime
	}
	if tok.IsManagement() {
		e.acl = acl.ManagementACL
		return e, nil
	}
	names := append([]string(nil), tok.Policies...)
	for _, link := range tok.Roles {
		role, err := store.ACLRoleByID(nil, link.ID)
		if err != nil {
			return entry{}, err
		}
		if role != nil {
			names = append(names, role.PolicyNames()...)
		}
	}
	var policies []*acl.Policy
	seen := map[string]bool{}
	for _, name := range names {
		if seen[name] {
			continue
		}
		seen[name] = true
		p, err := store.ACLPolicyByName(nil, name)
		if err != nil {
			return entry{}, err
		}
		if p == nil {
			continue // a policy named but not (or no longer) there grants nothing
		}
		parsed, err := acl.Parse(p.Rules)
		if err != nil {
			// Stored rules were checked when written; one that no longer
			// parses grants nothing rather than failing every request.
			continue
		}
		policies = append(policies, parsed)
	}
	compiled, err := acl.NewACL(false, policies)
	if err != nil {
		return entry{}, err
	}
	e.acl = compiled
	return e, nil
}
