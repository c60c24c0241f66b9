package state

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/go-memdb"

	"github.com/opennomad/nomad/structs"
)

// The ACL objects: policies by name, tokens by AccessorID (and by secret),
// roles by ID (and by name), and the bootstrap record. The bootstrap
// record is the index row TableACLBootstrap, as Nomad keeps it: the Raft
// index of the last bootstrap, which is the "reset index" an operator
// names to allow one more.

const (
	indexSecret = "secret"
	indexName   = "name"
)

func aclPolicyTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TableACLPolicies,
		Indexes: map[string]*memdb.IndexSchema{
			indexID: idIndex(strField(func(p *structs.ACLPolicy) string { return p.Name })),
		},
	}
}

func aclTokenTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TableACLTokens,
		Indexes: map[string]*memdb.IndexSchema{
			indexID: idIndex(strField(func(t *structs.ACLToken) string { return t.AccessorID })),
			indexSecret: {Name: indexSecret, Unique: true,
				Indexer: strField(func(t *structs.ACLToken) string { return t.SecretID })},
		},
	}
}

func aclRoleTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TableACLRoles,
		Indexes: map[string]*memdb.IndexSchema{
			indexID: idIndex(strField(func(r *structs.ACLRole) string { return r.ID })),
			indexName: {Name: indexName, Unique: true,
				Indexer: strField(func(r *structs.ACLRole) string { return r.Name })},
		},
	}
}

// ---- policies

// ACLPolicies returns the policies whose names start with prefix, by
// name.
func (s *StateStore) ACLPolicies(ws memdb.WatchSet, prefix string) ([]*structs.ACLPolicy, error) {
	it, err := get(s.db.Txn(false), ws, TableACLPolicies, indexID+"_prefix", prefix)
	if err != nil {
		return nil, err
	}
	return collect[structs.ACLPolicy](it, nil), nil
}

// ACLPolicyByName returns the policy or nil.
func (s *StateStore) ACLPolicyByName(ws memdb.WatchSet, name string) (*structs.ACLPolicy, error) {
	return aclPolicyByName(s.db.Txn(false), ws, name)
}

func aclPolicyByName(txn *memdb.Txn, ws memdb.WatchSet, name string) (*structs.ACLPolicy, error) {
	raw, err := first(txn, ws, TableACLPolicies, indexID, name)
	if err != nil || raw == nil {
		return nil, err
	}
	return raw.(*structs.ACLPolicy), nil
}

// UpsertACLPolicies writes policies at index; see Txn.UpsertACLPolicies.
func (s *StateStore) UpsertACLPolicies(index uint64, policies []*structs.ACLPolicy) error {
	return s.WithWriteTxn(index, func(tx *Txn) error { return tx.UpsertACLPolicies(policies) })
}

// UpsertACLPolicies adds or replaces policies; one that exists keeps its
// CreateIndex. The caller's objects are not written into.
func (tx *Txn) UpsertACLPolicies(policies []*structs.ACLPolicy) error {
	tx.touch(TableACLPolicies)
	for _, p := range policies {
		if p == nil {
			return structs.KindErrorf(structs.ErrInvalid, "ACL policy is nil")
		}
		if err := p.Validate(); err != nil {
			return fmt.Errorf("ACL policy %q: %w", p.Name, err)
		}
		p = p.Copy()
		existing, err := aclPolicyByName(tx.txn, nil, p.Name)
		if err != nil {
			return err
		}
		p.CreateIndex = tx.index
		if existing != nil {
			p.CreateIndex = existing.CreateIndex
		}
		p.ModifyIndex = tx.index
		if len(p.Hash) == 0 {
			p.SetHash()
		}
		if err := tx.insert(TableACLPolicies, p); err != nil {
			return err
		}
	}
	return nil
}

// DeleteACLPolicies removes policies at index; see Txn.DeleteACLPolicies.
func (s *StateStore) DeleteACLPolicies(index uint64, names []string) error {
	return s.WithWriteTxn(index, func(tx *Txn) error { return tx.DeleteACLPolicies(names) })
}

// DeleteACLPolicies removes the named policies; names that do not exist
// are no error.
func (tx *Txn) DeleteACLPolicies(names []string) error {
	tx.touch(TableACLPolicies)
	for _, name := range names {
		p, err := aclPolicyByName(tx.txn, nil, name)
		if err != nil {
			return err
		}
		if p == nil {
			continue
		}
		if err := tx.delete(TableACLPolicies, p); err != nil {
			return err
		}
	}
	return nil
}

// ---- tokens

// ACLTokens returns the tokens whose AccessorIDs start with prefix,
// oldest first (by CreateIndex, then AccessorID).
func (s *StateStore) ACLTokens(ws memdb.WatchSet, prefix string) ([]*structs.ACLToken, error) {
	it, err := get(s.db.Txn(false), ws, TableACLTokens, indexID+"_prefix", prefix)
	if err != nil {
		return nil, err
	}
	tokens := collect[structs.ACLToken](it, nil)
	sort.SliceStable(tokens, func(i, j int) bool { return tokens[i].CreateIndex < tokens[j].CreateIndex })
	return tokens, nil
}

// ACLTokenByAccessorID returns the token or nil.
func (s *StateStore) ACLTokenByAccessorID(ws memdb.WatchSet, id string) (*structs.ACLToken, error) {
	return aclTokenByAccessorID(s.db.Txn(false), ws, id)
}

func aclTokenByAccessorID(txn *memdb.Txn, ws memdb.WatchSet, id string) (*structs.ACLToken, error) {
	raw, err := first(txn, ws, TableACLTokens, indexID, id)
	if err != nil || raw == nil {
		return nil, err
	}
	return raw.(*structs.ACLToken), nil
}

// ACLTokenBySecretID returns the token with the secret, or nil.
func (s *StateStore) ACLTokenBySecretID(ws memdb.WatchSet, secret string) (*structs.ACLToken, error) {
	return aclTokenBySecretID(s.db.Txn(false), ws, secret)
}

func aclTokenBySecretID(txn *memdb.Txn, ws memdb.WatchSet, secret string) (*structs.ACLToken, error) {
	if secret == "" {
		return nil, nil
	}
	raw, err := first(txn, ws, TableACLTokens, indexSecret, secret)
	if err != nil || raw == nil {
		return nil, err
	}
	return raw.(*structs.ACLToken), nil
}

// UpsertACLTokens writes tokens at index; see Txn.UpsertACLTokens.
func (s *StateStore) UpsertACLTokens(index uint64, tokens []*structs.ACLToken) error {
	return s.WithWriteTxn(index, func(tx *Txn) error { return tx.UpsertACLTokens(tokens) })
}

// UpsertACLTokens adds or replaces tokens; one that exists keeps its
// CreateIndex. Two tokens never share a secret: a write that would make
// them is refused whole.
func (tx *Txn) UpsertACLTokens(tokens []*structs.ACLToken) error {
	tx.touch(TableACLTokens)
	for _, t := range tokens {
		if t == nil || t.AccessorID == "" || t.SecretID == "" {
			return structs.KindErrorf(structs.ErrInvalid, "ACL token: missing AccessorID or SecretID")
		}
		t = t.Copy()
		existing, err := aclTokenByAccessorID(tx.txn, nil, t.AccessorID)
		if err != nil {
			return err
		}
		holder, err := aclTokenBySecretID(tx.txn, nil, t.SecretID)
		if err != nil {
			return err
		}
		if holder != nil && holder.AccessorID != t.AccessorID {
			return structs.KindErrorf(structs.ErrInvalid, "ACL token %s: secret ID already in use", t.AccessorID)
		}
		t.CreateIndex = tx.index
		if existing != nil {
			t.CreateIndex = existing.CreateIndex
		}
		t.ModifyIndex = tx.index
		if len(t.Hash) == 0 {
			t.SetHash()
		}
		if err := tx.insert(TableACLTokens, t); err != nil {
			return err
		}
	}
	return nil
}

// DeleteACLTokens removes tokens at index; see Txn.DeleteACLTokens.
func (s *StateStore) DeleteACLTokens(index uint64, accessorIDs []string) error {
	return s.WithWriteTxn(index, func(tx *Txn) error { return tx.DeleteACLTokens(accessorIDs) })
}

// DeleteACLTokens removes tokens by AccessorID; the write is refused
// whole when one does not exist.
func (tx *Txn) DeleteACLTokens(accessorIDs []string) error {
	tx.touch(TableACLTokens)
	var missing []string
	for _, id := range accessorIDs {
		t, err := aclTokenByAccessorID(tx.txn, nil, id)
		if err != nil {
			return err
		}
		if t == nil {
			missing = append(missing, id)
			continue
		}
		if err := tx.delete(TableACLTokens, t); err != nil {
			return err
		}
	}
	if len(missing) > 0 {
		return structs.KindErrorf(structs.ErrInvalid, "Cannot delete nonexistent tokens: %s", strings.Join(missing, ", "))
	}
	return nil
}

// ACLBootstrapIndex reports the reset index: the Raft index of the last
// bootstrap, 0 when ACLs were never bootstrapped.
func (s *StateStore) ACLBootstrapIndex() (uint64, error) {
	return tableIndex(s.db.Txn(false), TableACLBootstrap)
}

// BootstrapACLToken writes the bootstrap token at index; see
// Txn.BootstrapACLToken.
func (s *StateStore) BootstrapACLToken(index, resetIndex uint64, token *structs.ACLToken) error {
	return s.WithWriteTxn(index, func(tx *Txn) error { return tx.BootstrapACLToken(resetIndex, token) })
}

// BootstrapACLToken writes the bootstrap token and moves the reset index
// to this write. It is refused unless ACLs were never bootstrapped or
// resetIndex is the current reset index (the operator's reset file named
// it).
func (tx *Txn) BootstrapACLToken(resetIndex uint64, token *structs.ACLToken) error {
	current, err := tableIndex(tx.txn, TableACLBootstrap)
	if err != nil {
		return err
	}
	if current != 0 && current != resetIndex {
		return fmt.Errorf("%w (reset index: %d)", structs.ErrACLBootstrapDone, current)
	}
	if err := tx.UpsertACLTokens([]*structs.ACLToken{token}); err != nil {
		return err
	}
	tx.touch(TableACLBootstrap)
	return nil
}

// ---- roles

// ACLRoles returns the roles whose IDs start with prefix, by ID.
func (s *StateStore) ACLRoles(ws memdb.WatchSet, prefix string) ([]*structs.ACLRole, error) {
	it, err := get(s.db.Txn(false), ws, TableACLRoles, indexID+"_prefix", prefix)
	if err != nil {
		return nil, err
	}
	return collect[structs.ACLRole](it, nil), nil
}

// ACLRoleByID returns the role or nil.
func (s *StateStore) ACLRoleByID(ws memdb.WatchSet, id string) (*structs.ACLRole, error) {
	return aclRoleBy(s.db.Txn(false), ws, indexID, id)
}

// ACLRoleByName returns the role or nil.
func (s *StateStore) ACLRoleByName(ws memdb.WatchSet, name string) (*structs.ACLRole, error) {
	return aclRoleBy(s.db.Txn(false), ws, indexName, name)
}

func aclRoleBy(txn *memdb.Txn, ws memdb.WatchSet, index, key string) (*structs.ACLRole, error) {
	if key == "" {
		return nil, nil
	}
	raw, err := first(txn, ws, TableACLRoles, index, key)
	if err != nil || raw == nil {
		return nil, err
	}
	return raw.(*structs.ACLRole), nil
}

// UpsertACLRoles writes roles at index; see Txn.UpsertACLRoles.
func (s *StateStore) UpsertACLRoles(index uint64, roles []*structs.ACLRole) error {
	return s.WithWriteTxn(index, func(tx *Txn) error { return tx.UpsertACLRoles(roles) })
}

// UpsertACLRoles adds or replaces roles; one that exists keeps its
// CreateIndex. The write is refused whole when a role is invalid, takes a
// name another role has, or links a policy that does not exist.
func (tx *Txn) UpsertACLRoles(roles []*structs.ACLRole) error {
	tx.touch(TableACLRoles)
	for _, r := range roles {
		if r == nil || r.ID == "" {
			return structs.KindErrorf(structs.ErrInvalid, "ACL role: missing ID")
		}
		if err := r.Validate(); err != nil {
			return fmt.Errorf("ACL role %q: %w", r.Name, err)
		}
		r = r.Copy()
		existing, err := aclRoleBy(tx.txn, nil, indexID, r.ID)
		if err != nil {
			return err
		}
		named, err := aclRoleBy(tx.txn, nil, indexName, r.Name)
		if err != nil {
			return err
		}
		if named != nil && named.ID != r.ID {
			return structs.KindErrorf(structs.ErrInvalid, "role with name %s already exists", r.Name)
		}
		for _, link := range r.Policies {
			p, err := aclPolicyByName(tx.txn, nil, link.Name)
			if err != nil {
				return err
			}
			if p == nil {
				return structs.KindErrorf(structs.ErrInvalid, "cannot find policy %s", link.Name)
			}
		}
		r.CreateIndex = tx.index
		if existing != nil {
			r.CreateIndex = existing.CreateIndex
		}
		r.ModifyIndex = tx.index
		if len(r.Hash) == 0 {
			r.SetHash()
		}
		if err := tx.insert(TableACLRoles, r); err != nil {
			return err
		}
	}
	return nil
}

// DeleteACLRoles removes roles at index; see Txn.DeleteACLRoles.
func (s *StateStore) DeleteACLRoles(index uint64, ids []string) error {
	return s.WithWriteTxn(index, func(tx *Txn) error { return tx.DeleteACLRoles(ids) })
}

// DeleteACLRoles removes roles by ID; the write is refused whole when one
// does not exist. Tokens keep their links to it, which reads drop.
func (tx *Txn) DeleteACLRoles(ids []string) error {
	tx.touch(TableACLRoles)
	for _, id := range ids {
		r, err := aclRoleBy(tx.txn, nil, indexID, id)
		if err != nil {
			return err
		}
		if r == nil {
			return fmt.Errorf("%w: %s", structs.ErrACLRoleNotFound, id)
		}
		if err := tx.delete(TableACLRoles, r); err != nil {
			return err
		}
	}
	return nil
}

// ---- one-time tokens

func oneTimeTokenTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TableOneTimeTokens,
		Indexes: map[string]*memdb.IndexSchema{
			indexID: idIndex(strField(func(o *structs.OneTimeToken) string { return o.OneTimeSecretID })),
		},
	}
}

// OneTimeTokenBySecret returns the one-time token or nil.
func (s *StateStore) OneTimeTokenBySecret(ws memdb.WatchSet, secret string) (*structs.OneTimeToken, error) {
	return oneTimeTokenBySecret(s.db.Txn(false), ws, secret)
}

func oneTimeTokenBySecret(txn *memdb.Txn, ws memdb.WatchSet, secret string) (*structs.OneTimeToken, error) {
	if secret == "" {
		return nil, nil
	}
	raw, err := first(txn, ws, TableOneTimeTokens, indexID, secret)
	if err != nil || raw == nil {
		return nil, err
	}
	return raw.(*structs.OneTimeToken), nil
}

// OneTimeTokens returns every one-time token, by secret.
func (s *StateStore) OneTimeTokens(ws memdb.WatchSet) ([]*structs.OneTimeToken, error) {
	it, err := get(s.db.Txn(false), ws, TableOneTimeTokens, indexID)
	if err != nil {
		return nil, err
	}
	return collect[structs.OneTimeToken](it, nil), nil
}

// UpsertOneTimeToken writes a one-time token at index; see
// Txn.UpsertOneTimeToken.
func (s *StateStore) UpsertOneTimeToken(index uint64, ott *structs.OneTimeToken) error {
	return s.WithWriteTxn(index, func(tx *Txn) error { return tx.UpsertOneTimeToken(ott) })
}

// UpsertOneTimeToken writes a one-time token for an ACL token that
// exists.
func (tx *Txn) UpsertOneTimeToken(ott *structs.OneTimeToken) error {
	tx.touch(TableOneTimeTokens)
	if ott == nil || ott.OneTimeSecretID == "" || ott.AccessorID == "" {
		return structs.KindErrorf(structs.ErrInvalid, "one-time token: missing secret or accessor ID")
	}
	tok, err := aclTokenByAccessorID(tx.txn, nil, ott.AccessorID)
	if err != nil {
		return err
	}
	if tok == nil {
		return fmt.Errorf("one-time token for %s: %w", ott.AccessorID, structs.ErrACLTokenNotFound)
	}
	ott = ott.Copy()
	existing, err := oneTimeTokenBySecret(tx.txn, nil, ott.OneTimeSecretID)
	if err != nil {
		return err
	}
	ott.CreateIndex = tx.index
	if existing != nil {
		ott.CreateIndex = existing.CreateIndex
	}
	ott.ModifyIndex = tx.index
	return tx.insert(TableOneTimeTokens, ott)
}

// DeleteOneTimeTokens removes one-time tokens at index; see
// Txn.DeleteOneTimeTokens.
func (s *StateStore) DeleteOneTimeTokens(index uint64, secrets []string) error {
	return s.WithWriteTxn(index, func(tx *Txn) error { return tx.DeleteOneTimeTokens(secrets) })
}

// DeleteOneTimeTokens removes one-time tokens by secret. The write is
// refused whole (of kind ErrNotFound) when one is already gone, so that of
// two exchanges of one token racing to the leader only the first
// succeeds.
func (tx *Txn) DeleteOneTimeTokens(secrets []string) error {
	tx.touch(TableOneTimeTokens)
	for _, secret := range secrets {
		ott, err := oneTimeTokenBySecret(tx.txn, nil, secret)
		if err != nil {
			return err
		}
		if ott == nil {
			return structs.KindErrorf(structs.ErrNotFound, "one-time token not found")
		}
		if err := tx.delete(TableOneTimeTokens, ott); err != nil {
			return err
		}
	}
	return nil
}

// ACLVersion is the highest Raft index of a write to the token, policy or
// role tables: what a cache of resolved tokens is valid for.
func (s *StateStore) ACLVersion() (uint64, error) {
	txn := s.db.Txn(false)
	var v uint64
	for _, table := range []string{TableACLTokens, TableACLPolicies, TableACLRoles} {
		idx, err := tableIndex(txn, table)
		if err != nil {
			return 0, err
		}
		v = max(v, idx)
	}
	return v, nil
}
