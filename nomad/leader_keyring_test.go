package nomad

import (
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/go-memdb"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/clock"
	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// waitKeyStates waits until the keyring holds exactly the given states,
// oldest key first.
func waitKeyStates(t *testing.T, s *Server, want ...string) []*structs.RootKey {
	t.Helper()
	var keys []*structs.RootKey
	waitForState(t, s, func(ws memdb.WatchSet, store *state.StateStore) (bool, string) {
		var err error
		keys, err = store.RootKeys(ws)
		must.NoError(t, err)
		got := make([]string, len(keys))
		for i, k := range keys {
			got[i] = k.Meta.State
		}
		return fmt.Sprint(got) == fmt.Sprint(want), fmt.Sprintf("key states %v, want %v", got, want)
	})
	return keys
}

// TestKeyring_LeaderTendsTheKeyring follows a keyring through the leader's
// checks on a fake clock: the first key when the cluster starts, a
// prepublished key taking over at its publish time, a rotation when the
// active key reaches the threshold.
func TestKeyring_LeaderTendsTheKeyring(t *testing.T) {
	fake := clock.NewFake(time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC))
	s := newTestServer(t, func(c *Config) {
		c.Clock = fake
		c.RootKeyRotationThreshold = 24 * time.Hour
		c.KeyringCheckInterval = time.Minute
	})
	first := waitKeyStates(t, s, structs.RootKeyStateActive)[0]
	must.Eq(t, fake.Now().UnixNano(), first.Meta.CreateTime)

	var rotated structs.KeyringRotateResponse
	must.NoError(t, s.RPC("Keyring.Rotate", &structs.KeyringRotateRequest{
		PublishTime: fake.Now().Add(time.Hour).UnixNano()}, &rotated))
	must.Eq(t, structs.RootKeyStatePrepublished, rotated.Key.State)
	waitKeyStates(t, s, structs.RootKeyStateActive, structs.RootKeyStatePrepublished)

	// The prepublished key is already published.
	var pub structs.KeyringPublicKeysResponse
	must.NoError(t, s.RPC("Keyring.ListPublic", &structs.GenericRequest{}, &pub))
	must.Len(t, 2, pub.Keys)

	fake.Advance(time.Hour)
	keys := waitKeyStates(t, s, structs.RootKeyStateInactive, structs.RootKeyStateActive)
	must.Eq(t, rotated.Key.KeyID, keys[1].Meta.KeyID)

	// A day after the prepublished key was made, it is rotated out.
	fake.Advance(23 * time.Hour)
	waitKeyStates(t, s, structs.RootKeyStateInactive, structs.RootKeyStateInactive, structs.RootKeyStateActive)
}

// TestKeyring_Endpoints rotates, lists and removes keys through the RPCs
// the HTTP API and the CLI use.
func TestKeyring_Endpoints(t *testing.T) {
	s := newTestServer(t, nil)
	first := waitKeyStates(t, s, structs.RootKeyStateActive)[0]

	var rotated structs.KeyringRotateResponse
	must.NoError(t, s.RPC("Keyring.Rotate", &structs.KeyringRotateRequest{}, &rotated))
	must.Eq(t, structs.RootKeyStateActive, rotated.Key.State)
	// As Nomad: the key as made, its indexes unset; the write's index
	// is the reply's.
	must.Eq(t, uint64(0), rotated.Key.CreateIndex)
	must.Positive(t, rotated.Index)

	var list structs.KeyringListResponse
	must.NoError(t, s.RPC("Keyring.List", &structs.GenericRequest{}, &list))
	must.Len(t, 2, list.Keys)
	must.Eq(t, first.Meta.KeyID, list.Keys[0].KeyID)
	must.Eq(t, structs.RootKeyStateInactive, list.Keys[0].State)
	must.Eq(t, rotated.Index, list.Index)

	var del structs.KeyringDeleteResponse
	err := s.RPC("Keyring.Delete", &structs.KeyringDeleteRequest{KeyID: rotated.Key.KeyID, Force: true}, &del)
	must.ErrorIs(t, err, structs.ErrRootKeyActive)
	err = s.RPC("Keyring.Delete", &structs.KeyringDeleteRequest{KeyID: structs.GenerateUUID()}, &del)
	must.ErrorIs(t, err, structs.ErrRootKeyNotFound)
	must.NoError(t, s.RPC("Keyring.Delete", &structs.KeyringDeleteRequest{KeyID: first.Meta.KeyID}, &del))
	waitKeyStates(t, s, structs.RootKeyStateActive)

	err = s.RPC("Keyring.Rotate", &structs.KeyringRotateRequest{Full: true, PublishTime: 1}, &rotated)
	must.ErrorIs(t, err, structs.ErrInvalid)
	must.ErrorContains(t, err, "cannot be prepublished and full rotated")
}
