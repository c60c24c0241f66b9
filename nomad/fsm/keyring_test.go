package fsm

import (
	"crypto/rand"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/keyring"
	"github.com/opennomad/nomad/structs"
)

// TestFSM_Keyring applies a keyring's life through Raft entries: the
// first key, a rotation in one entry, a refused removal of the active key
// (state unchanged), the removal of the old key.
func TestFSM_Keyring(t *testing.T) {
	f, _ := newTestFSM(t)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	first, err := keyring.New(rand.Reader, now, structs.RootKeyStateActive, 0)
	must.NoError(t, err)
	mustApply(t, f, 10, structs.RootKeyUpsertRequestType, &structs.RootKeyUpsertRequest{Keys: []*structs.RootKey{first}})

	second, err := keyring.New(rand.Reader, now.Add(time.Hour), structs.RootKeyStateActive, 0)
	must.NoError(t, err)
	keys, _ := f.State().RootKeys(nil)
	mustApply(t, f, 11, structs.RootKeyUpsertRequestType, &structs.RootKeyUpsertRequest{
		Keys: keyring.Rotate(keys, second, keyring.Rotation{})})

	err = mustFail(t, f, 12, structs.RootKeyDeleteRequestType, &structs.RootKeyDeleteRequest{KeyID: second.Meta.KeyID})
	must.ErrorIs(t, err, structs.ErrRootKeyActive)
	mustApply(t, f, 13, structs.RootKeyDeleteRequestType, &structs.RootKeyDeleteRequest{KeyID: first.Meta.KeyID})

	keys, err = f.State().RootKeys(nil)
	must.NoError(t, err)
	must.Len(t, 1, keys)
	must.Eq(t, second.Meta.KeyID, keys[0].Meta.KeyID)
	must.True(t, keys[0].Meta.Active())

	// What went through Raft still opens.
	_, err = keyring.Open(keys[0])
	must.NoError(t, err)
}
