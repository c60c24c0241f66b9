package keyring

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

var epoch = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// key builds a root key named id for the decisions, which read only its
// metadata; the material is placeholder bytes.
func key(id, state string, created time.Time, publish time.Time) *structs.RootKey {
	var pt int64
	if !publish.IsZero() {
		pt = publish.UnixNano()
	}
	return &structs.RootKey{
		Meta: &structs.RootKeyMeta{KeyID: id, Algorithm: structs.EncryptionAlgorithmAES256GCM,
			CreateTime: created.UnixNano(), State: state, PublishTime: pt},
		KEK: []byte{1}, DataKey: []byte{1}, SigningKey: []byte{1}, PublicKey: []byte{1},
	}
}

// states maps key ID to state, for comparing decisions.
func states(keys []*structs.RootKey) map[string]string {
	out := map[string]string{}
	for _, k := range keys {
		out[k.Meta.KeyID] = k.Meta.State
	}
	return out
}

const (
	active       = structs.RootKeyStateActive
	inactive     = structs.RootKeyStateInactive
	rekeying     = structs.RootKeyStateRekeying
	prepublished = structs.RootKeyStatePrepublished
	deprecated   = structs.RootKeyStateDeprecated
)

func TestRotate(t *testing.T) {
	old := epoch.Add(-time.Hour)
	cases := []struct {
		name string
		keys []*structs.RootKey
		r    Rotation
		want map[string]string
	}{
		{
			name: "new active key demotes the active one",
			keys: []*structs.RootKey{key("a", active, old, time.Time{}), key("b", inactive, old, time.Time{})},
			want: map[string]string{"new": active, "a": inactive},
		},
		{
			name: "prepublished key leaves the active one alone",
			keys: []*structs.RootKey{key("a", active, old, time.Time{})},
			r:    Rotation{PublishTime: epoch.Add(time.Hour).UnixNano()},
			want: map[string]string{"new": prepublished},
		},
		{
			name: "full rotation marks every older key but deprecated ones for rekeying",
			keys: []*structs.RootKey{key("a", active, old, time.Time{}), key("b", inactive, old, time.Time{}),
				key("c", deprecated, old, time.Time{}), key("d", rekeying, old, time.Time{})},
			r:    Rotation{Full: true},
			want: map[string]string{"new": active, "a": rekeying, "b": rekeying},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fresh := key("new", tc.r.NewKeyState(), epoch, time.Unix(0, tc.r.PublishTime))
			if tc.r.PublishTime == 0 {
				fresh.Meta.PublishTime = 0
			}
			got := Rotate(tc.keys, fresh, tc.r)
			must.Eq(t, tc.want, states(got))
			// The keys given are never changed in place.
			must.Eq(t, active, tc.keys[0].Meta.State)
		})
	}
}

func TestRotation_Check(t *testing.T) {
	cases := []struct {
		name string
		r    Rotation
		want string
	}{
		{"default algorithm", Rotation{}, ""},
		{"aes256-gcm", Rotation{Algorithm: "aes256-gcm"}, ""},
		{"unknown algorithm", Rotation{Algorithm: "rot13"}, `unsupported algorithm "rot13"`},
		{"prepublish and full", Rotation{Full: true, PublishTime: 1}, "cannot be prepublished and full rotated"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.r.Check()
			if tc.want == "" {
				must.NoError(t, err)
				return
			}
			must.ErrorContains(t, err, tc.want)
			must.True(t, errors.Is(err, structs.ErrInvalid))
		})
	}
}

func TestTick(t *testing.T) {
	const threshold = 720 * time.Hour
	cases := []struct {
		name    string
		keys    []*structs.RootKey
		now     time.Time
		sealing []string
		newKey  bool
		updates map[string]string
	}{
		{name: "empty keyring needs its first key", now: epoch, newKey: true, updates: map[string]string{}},
		{
			name:    "fresh active key: nothing due",
			keys:    []*structs.RootKey{key("a", active, epoch, time.Time{})},
			now:     epoch.Add(threshold - time.Second),
			updates: map[string]string{},
		},
		{
			name:    "active key at the threshold: a new key",
			keys:    []*structs.RootKey{key("a", active, epoch, time.Time{})},
			now:     epoch.Add(threshold),
			newKey:  true,
			updates: map[string]string{},
		},
		{
			name: "old active key with a prepublished successor waits for it",
			keys: []*structs.RootKey{key("a", active, epoch, time.Time{}),
				key("b", prepublished, epoch, epoch.Add(threshold+time.Hour))},
			now:     epoch.Add(threshold),
			updates: map[string]string{},
		},
		{
			name: "prepublished key at its publish time takes over",
			keys: []*structs.RootKey{key("a", active, epoch, time.Time{}),
				key("b", prepublished, epoch, epoch.Add(time.Hour))},
			now:     epoch.Add(time.Hour),
			updates: map[string]string{"b": active, "a": inactive},
		},
		{
			name: "of two prepublished keys due, the later one wins",
			keys: []*structs.RootKey{key("a", active, epoch, time.Time{}),
				key("b", prepublished, epoch, epoch.Add(time.Hour)),
				key("c", prepublished, epoch, epoch.Add(2*time.Hour))},
			now:     epoch.Add(3 * time.Hour),
			updates: map[string]string{"c": active, "a": inactive},
		},
		{
			name:    "no active key but one prepublished: wait for it",
			keys:    []*structs.RootKey{key("b", prepublished, epoch, epoch.Add(time.Hour))},
			now:     epoch,
			updates: map[string]string{},
		},
		{
			name: "rekeying finishes once nothing is sealed with the key",
			keys: []*structs.RootKey{key("a", active, epoch, time.Time{}),
				key("b", rekeying, epoch, time.Time{})},
			now:     epoch,
			updates: map[string]string{"b": inactive},
		},
		{
			name: "rekeying goes on while variables are sealed with the key",
			keys: []*structs.RootKey{key("a", active, epoch, time.Time{}),
				key("b", rekeying, epoch, time.Time{}), key("c", rekeying, epoch, time.Time{})},
			now:     epoch,
			sealing: []string{"b"},
			updates: map[string]string{"c": inactive},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := Tick(tc.keys, tc.now, threshold, func(id string) bool { return slices.Contains(tc.sealing, id) })
			must.Eq(t, tc.newKey, d.NewKey)
			must.Eq(t, tc.updates, states(d.Updates))
			must.Eq(t, tc.newKey || len(tc.updates) > 0, d.Due())
			if d.Due() {
				must.NotEq(t, "", d.Reason)
			}
		})
	}
}

func TestCanDelete(t *testing.T) {
	must.ErrorIs(t, CanDelete(nil, false, false), structs.ErrRootKeyNotFound)
	must.ErrorIs(t, CanDelete(key("a", active, epoch, time.Time{}), true, false), structs.ErrRootKeyActive)
	must.NoError(t, CanDelete(key("a", inactive, epoch, time.Time{}), false, false))
	must.ErrorIs(t, CanDelete(key("a", inactive, epoch, time.Time{}), false, true), ErrKeyInUse)
	must.NoError(t, CanDelete(key("a", inactive, epoch, time.Time{}), true, true))
}
