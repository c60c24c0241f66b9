package state

import (
	"fmt"

	"github.com/hashicorp/go-memdb"

	"github.com/opennomad/nomad/structs"
)

// Auth methods by name and binding rules by ID. A binding rule names an
// auth method that exists; deleting a method deletes its rules, so none
// is left pointing at nothing.

func aclAuthMethodTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TableACLAuthMethods,
		Indexes: map[string]*memdb.IndexSchema{
			indexID: idIndex(strField(func(m *structs.ACLAuthMethod) string { return m.Name })),
		},
	}
}

func aclBindingRuleTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TableACLBindingRules,
		Indexes: map[string]*memdb.IndexSchema{
			indexID: idIndex(strField(func(r *structs.ACLBindingRule) string { return r.ID })),
		},
	}
}

// ---- auth methods

// ACLAuthMethods returns every auth method, by name.
func (s *StateStore) ACLAuthMethods(ws memdb.WatchSet) ([]*structs.ACLAuthMethod, error) {
	it, err := get(s.db.Txn(false), ws, TableACLAuthMethods, indexID)
	if err != nil {
		return nil, err
	}
	return collect[structs.ACLAuthMethod](it, nil), nil
}

// ACLAuthMethodByName returns the auth method or nil.
func (s *StateStore) ACLAuthMethodByName(ws memdb.WatchSet, name string) (*structs.ACLAuthMethod, error) {
	return aclAuthMethodByName(s.db.Txn(false), ws, name)
}

func aclAuthMethodByName(txn *memdb.Txn, ws memdb.WatchSet, name string) (*structs.ACLAuthMethod, error) {
	if name == "" {
		return nil, nil
	}
	raw, err := first(txn, ws, TableACLAuthMethods, indexID, name)
	if err != nil || raw == nil {
		return nil, err
	}
	return raw.(*structs.ACLAuthMethod), nil
}

// ACLDefaultAuthMethod returns the default auth method or nil.
func (s *StateStore) ACLDefaultAuthMethod(ws memdb.WatchSet) (*structs.ACLAuthMethod, error) {
	return aclDefaultAuthMethod(s.db.Txn(false), ws)
}

func aclDefaultAuthMethod(txn *memdb.Txn, ws memdb.WatchSet) (*structs.ACLAuthMethod, error) {
	it, err := get(txn, ws, TableACLAuthMethods, indexID)
	if err != nil {
		return nil, err
	}
	defaults := collect[structs.ACLAuthMethod](it, func(m *structs.ACLAuthMethod) bool { return m.Default })
	if len(defaults) == 0 {
		return nil, nil
	}
	return defaults[0], nil
}

// UpsertACLAuthMethods writes auth methods at index; see
// Txn.UpsertACLAuthMethods.
func (s *StateStore) UpsertACLAuthMethods(index uint64, methods []*structs.ACLAuthMethod) error {
	return s.WithWriteTxn(index, func(tx *Txn) error { return tx.UpsertACLAuthMethods(methods) })
}

// UpsertACLAuthMethods adds or replaces auth methods by name; one that
// exists keeps its CreateIndex. The write is refused whole when a method
// has no name or would be a second default.
func (tx *Txn) UpsertACLAuthMethods(methods []*structs.ACLAuthMethod) error {
	tx.touch(TableACLAuthMethods)
	for _, m := range methods {
		if m == nil || m.Name == "" {
			return structs.KindErrorf(structs.ErrInvalid, "ACL auth-method: missing name")
		}
		m = m.Copy()
		existing, err := aclAuthMethodByName(tx.txn, nil, m.Name)
		if err != nil {
			return err
		}
		if m.Default {
			def, err := aclDefaultAuthMethod(tx.txn, nil)
			if err != nil {
				return err
			}
			if def != nil && def.Name != m.Name {
				return structs.KindErrorf(structs.ErrInvalid, "default method already exists: %s", def.Name)
			}
		}
		m.CreateIndex = tx.index
		if existing != nil {
			m.CreateIndex = existing.CreateIndex
		}
		m.ModifyIndex = tx.index
		if len(m.Hash) == 0 {
			m.SetHash()
		}
		if err := tx.insert(TableACLAuthMethods, m); err != nil {
			return err
		}
	}
	return nil
}

// DeleteACLAuthMethods removes auth methods by name at index; see
// Txn.DeleteACLAuthMethods.
func (s *StateStore) DeleteACLAuthMethods(index uint64, names []string) error {
	return s.WithWriteTxn(index, func(tx *Txn) error { return tx.DeleteACLAuthMethods(names) })
}

// DeleteACLAuthMethods removes auth methods by name, with their binding
// rules; the write is refused whole when one does not exist.
func (tx *Txn) DeleteACLAuthMethods(names []string) error {
	tx.touch(TableACLAuthMethods)
	for _, name := range names {
		m, err := aclAuthMethodByName(tx.txn, nil, name)
		if err != nil {
			return err
		}
		if m == nil {
			return fmt.Errorf("%w: %s", structs.ErrACLAuthMethodNotFound, name)
		}
		if err := tx.delete(TableACLAuthMethods, m); err != nil {
			return err
		}
		it, err := get(tx.txn, nil, TableACLBindingRules, indexID)
		if err != nil {
			return err
		}
		rules := collect[structs.ACLBindingRule](it, func(r *structs.ACLBindingRule) bool { return r.AuthMethod == name })
		if len(rules) > 0 {
			tx.touch(TableACLBindingRules)
		}
		for _, r := range rules {
			if err := tx.delete(TableACLBindingRules, r); err != nil {
				return err
			}
		}
	}
	return nil
}

// ---- binding rules

// ACLBindingRules returns the binding rules whose IDs start with prefix,
// by ID.
func (s *StateStore) ACLBindingRules(ws memdb.WatchSet, prefix string) ([]*structs.ACLBindingRule, error) {
	it, err := get(s.db.Txn(false), ws, TableACLBindingRules, indexID+"_prefix", prefix)
	if err != nil {
		return nil, err
	}
	return collect[structs.ACLBindingRule](it, nil), nil
}

// ACLBindingRuleByID returns the binding rule or nil.
func (s *StateStore) ACLBindingRuleByID(ws memdb.WatchSet, id string) (*structs.ACLBindingRule, error) {
	return aclBindingRuleByID(s.db.Txn(false), ws, id)
}

func aclBindingRuleByID(txn *memdb.Txn, ws memdb.WatchSet, id string) (*structs.ACLBindingRule, error) {
	if id == "" {
		return nil, nil
	}
	raw, err := first(txn, ws, TableACLBindingRules, indexID, id)
	if err != nil || raw == nil {
		return nil, err
	}
	return raw.(*structs.ACLBindingRule), nil
}

// UpsertACLBindingRules writes binding rules at index; see
// Txn.UpsertACLBindingRules.
func (s *StateStore) UpsertACLBindingRules(index uint64, rules []*structs.ACLBindingRule) error {
	return s.WithWriteTxn(index, func(tx *Txn) error { return tx.UpsertACLBindingRules(rules) })
}

// UpsertACLBindingRules adds or replaces binding rules by ID; one that
// exists keeps its CreateIndex. The write is refused whole when a rule
// has no ID or names an auth method that does not exist.
func (tx *Txn) UpsertACLBindingRules(rules []*structs.ACLBindingRule) error {
	tx.touch(TableACLBindingRules)
	for _, r := range rules {
		if r == nil || r.ID == "" {
			return structs.KindErrorf(structs.ErrInvalid, "ACL binding rule: missing ID")
		}
		if err := r.Validate(); err != nil {
			return fmt.Errorf("ACL binding rule %s: %w", r.ID, err)
		}
		r = r.Copy()
		m, err := aclAuthMethodByName(tx.txn, nil, r.AuthMethod)
		if err != nil {
			return err
		}
		if m == nil {
			return structs.KindErrorf(structs.ErrInvalid, "ACL binding rule %s: cannot find auth method %s", r.ID, r.AuthMethod)
		}
		existing, err := aclBindingRuleByID(tx.txn, nil, r.ID)
		if err != nil {
			return err
		}
		r.CreateIndex = tx.index
		if existing != nil {
			r.CreateIndex = existing.CreateIndex
		}
		r.ModifyIndex = tx.index
		if len(r.Hash) == 0 {
			r.SetHash()
		}
		if err := tx.insert(TableACLBindingRules, r); err != nil {
			return err
		}
	}
	return nil
}

// DeleteACLBindingRules removes binding rules by ID at index; see
// Txn.DeleteACLBindingRules.
func (s *StateStore) DeleteACLBindingRules(index uint64, ids []string) error {
	return s.WithWriteTxn(index, func(tx *Txn) error { return tx.DeleteACLBindingRules(ids) })
}

// DeleteACLBindingRules removes binding rules by ID; the write is refused
// whole when one does not exist.
func (tx *Txn) DeleteACLBindingRules(ids []string) error {
	tx.touch(TableACLBindingRules)
	for _, id := range ids {
		r, err := aclBindingRuleByID(tx.txn, nil, id)
		if err != nil {
			return err
		}
		if r == nil {
			return fmt.Errorf("%w: %s", structs.ErrACLBindingRuleNotFound, id)
		}
		if err := tx.delete(TableACLBindingRules, r); err != nil {
			return err
		}
	}
	return nil
}
