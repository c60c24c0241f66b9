package state

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

// mockRootKey is a root key in state, created at created (Unix ns); the
// store never reads the material, so placeholder bytes do.
func mockRootKey(state string, created int64) *structs.RootKey {
	return &structs.RootKey{
		Meta: &structs.RootKeyMeta{KeyID: structs.GenerateUUID(), Algorithm: structs.EncryptionAlgorithmAES256GCM,
			CreateTime: created, State: state},
		KEK: []byte("k"), DataKey: []byte("d"), SigningKey: []byte("s"), PublicKey: []byte("p"),
	}
}

func TestRootKeys_UpsertKeepsCreateIndexAndOrder(t *testing.T) {
	s := testStore(t)
	older := mockRootKey(structs.RootKeyStateActive, 100)
	must.NoError(t, s.UpsertRootKeys(10, []*structs.RootKey{older}))

	// A rotation: the new key and the demoted old one in one write.
	newer := mockRootKey(structs.RootKeyStateActive, 200)
	demoted := older.Copy()
	demoted.Meta.State = structs.RootKeyStateInactive
	must.NoError(t, s.UpsertRootKeys(11, []*structs.RootKey{newer, demoted}))

	keys, err := s.RootKeys(nil)
	must.NoError(t, err)
	must.Len(t, 2, keys)
	must.Eq(t, older.Meta.KeyID, keys[0].Meta.KeyID, must.Sprint("oldest first"))
	must.Eq(t, uint64(10), keys[0].Meta.CreateIndex)
	must.Eq(t, uint64(11), keys[0].Meta.ModifyIndex)
	must.Eq(t, structs.RootKeyStateInactive, keys[0].Meta.State)
	must.Eq(t, uint64(11), keys[1].Meta.CreateIndex)
	must.Eq(t, uint64(11), mustIndex(t, s, TableRootKeys))

	// The caller's objects were not written into.
	must.Eq(t, uint64(0), newer.Meta.CreateIndex)
}

func TestRootKeys_RefusedWritesChangeNothing(t *testing.T) {
	cases := []struct {
		name string
		keys []*structs.RootKey
		want error
	}{
		{"second active key", []*structs.RootKey{mockRootKey(structs.RootKeyStateActive, 2)}, structs.ErrConflict},
		{"unknown state", []*structs.RootKey{mockRootKey("sleepy", 2)}, structs.ErrInvalid},
		{"material missing", []*structs.RootKey{{Meta: mockRootKey(structs.RootKeyStateInactive, 2).Meta}}, structs.ErrInvalid},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := testStore(t)
			first := mockRootKey(structs.RootKeyStateActive, 1)
			must.NoError(t, s.UpsertRootKeys(10, []*structs.RootKey{first}))
			must.ErrorIs(t, s.UpsertRootKeys(11, tc.keys), tc.want)
			keys, err := s.RootKeys(nil)
			must.NoError(t, err)
			must.Len(t, 1, keys)
			must.Eq(t, uint64(10), mustIndex(t, s, TableRootKeys))
		})
	}
}

func TestRootKeys_Delete(t *testing.T) {
	s := testStore(t)
	active := mockRootKey(structs.RootKeyStateActive, 2)
	old := mockRootKey(structs.RootKeyStateInactive, 1)
	must.NoError(t, s.UpsertRootKeys(10, []*structs.RootKey{old, active}))

	must.ErrorIs(t, s.DeleteRootKey(11, active.Meta.KeyID), structs.ErrRootKeyActive)
	must.ErrorIs(t, s.DeleteRootKey(11, structs.GenerateUUID()), structs.ErrRootKeyNotFound)
	must.NoError(t, s.DeleteRootKey(11, old.Meta.KeyID))

	got, err := s.RootKeyByID(nil, old.Meta.KeyID)
	must.NoError(t, err)
	must.Nil(t, got)
	keys, err := s.RootKeys(nil)
	must.NoError(t, err)
	must.Len(t, 1, keys)
	must.Eq(t, uint64(11), mustIndex(t, s, TableRootKeys))
}
