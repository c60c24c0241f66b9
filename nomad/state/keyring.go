package state

import (
	"fmt"
	"sort"

	"github.com/hashicorp/go-memdb"

	"github.com/opennomad/nomad/structs"
)

// The keyring's root keys. The store keeps them as the leader decided
// them (package nomad/keyring) and holds one invariant of its own: after
// any write, at most one key is active.

func rootKeysTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TableRootKeys,
		Indexes: map[string]*memdb.IndexSchema{
			indexID: idIndex(strField(func(k *structs.RootKey) string { return k.Meta.KeyID })),
		},
	}
}

// RootKeys returns every root key, oldest first (by CreateTime, then by
// the index that wrote it).
func (s *StateStore) RootKeys(ws memdb.WatchSet) ([]*structs.RootKey, error) {
	return rootKeys(s.db.Txn(false), ws)
}

func rootKeys(txn *memdb.Txn, ws memdb.WatchSet) ([]*structs.RootKey, error) {
	it, err := get(txn, ws, TableRootKeys, indexID)
	if err != nil {
		return nil, err
	}
	keys := collect[structs.RootKey](it, nil)
	sort.SliceStable(keys, func(i, j int) bool {
		a, b := keys[i].Meta, keys[j].Meta
		if a.CreateTime != b.CreateTime {
			return a.CreateTime < b.CreateTime
		}
		return a.CreateIndex < b.CreateIndex
	})
	return keys, nil
}

// RootKeyByID returns the root key or nil.
func (s *StateStore) RootKeyByID(ws memdb.WatchSet, id string) (*structs.RootKey, error) {
	return rootKeyByID(s.db.Txn(false), ws, id)
}

func rootKeyByID(txn *memdb.Txn, ws memdb.WatchSet, id string) (*structs.RootKey, error) {
	raw, err := first(txn, ws, TableRootKeys, indexID, id)
	if err != nil || raw == nil {
		return nil, err
	}
	return raw.(*structs.RootKey), nil
}

// UpsertRootKeys writes keys at index; see Txn.UpsertRootKeys.
func (s *StateStore) UpsertRootKeys(index uint64, keys []*structs.RootKey) error {
	return s.WithWriteTxn(index, func(tx *Txn) error { return tx.UpsertRootKeys(keys) })
}

// UpsertRootKeys adds or replaces keys. A key that exists keeps its
// CreateIndex. The write is refused whole when a key is invalid or when
// it would leave two keys active.
func (tx *Txn) UpsertRootKeys(keys []*structs.RootKey) error {
	tx.touch(TableRootKeys)
	for _, k := range keys {
		if err := k.Validate(); err != nil {
			return err
		}
		k = k.Copy()
		existing, err := rootKeyByID(tx.txn, nil, k.Meta.KeyID)
		if err != nil {
			return err
		}
		k.Meta.CreateIndex = tx.index
		if existing != nil {
			k.Meta.CreateIndex = existing.Meta.CreateIndex
		}
		k.Meta.ModifyIndex = tx.index
		if err := tx.insert(TableRootKeys, k); err != nil {
			return fmt.Errorf("root key %s: %w", k.Meta.KeyID, err)
		}
	}
	all, err := rootKeys(tx.txn, nil)
	if err != nil {
		return err
	}
	active := 0
	for _, k := range all {
		if k.Meta.Active() {
			active++
		}
	}
	if active > 1 {
		return structs.KindErrorf(structs.ErrConflict, "keyring: %d root keys would be active", active)
	}
	return nil
}

// DeleteRootKey removes a root key at index; see Txn.DeleteRootKey.
func (s *StateStore) DeleteRootKey(index uint64, id string) error {
	return s.WithWriteTxn(index, func(tx *Txn) error { return tx.DeleteRootKey(id) })
}

// DeleteRootKey removes a root key. The active key cannot be removed: a
// cluster always has one to seal and sign with once it has any.
func (tx *Txn) DeleteRootKey(id string) error {
	tx.touch(TableRootKeys)
	k, err := rootKeyByID(tx.txn, nil, id)
	if err != nil {
		return err
	}
	if k == nil {
		return fmt.Errorf("root key %q: %w", id, structs.ErrRootKeyNotFound)
	}
	if k.Meta.Active() {
		return fmt.Errorf("root key %q: %w", id, structs.ErrRootKeyActive)
	}
	return tx.delete(TableRootKeys, k)
}
