package keyring

import (
	"time"

	"github.com/opennomad/nomad/structs"
)

// DefaultRotationThreshold is how old the active key may get before the
// leader rotates it: 30 days, as Nomad's root_key_rotation_threshold.
const DefaultRotationThreshold = 720 * time.Hour

// ErrPrepublishFull refuses a rotation that asks for both; Nomad's text.
var ErrPrepublishFull = structs.KindErrorf(structs.ErrInvalid,
	"keyring cannot be prepublished and full rotated at the same time")

// Rotation is an operator's request for a new key.
type Rotation struct {
	Algorithm string
	// Full marks every older key for rekeying.
	Full bool
	// PublishTime, Unix nanoseconds, prepublishes the new key until then.
	PublishTime int64
}

// Check refuses a rotation that cannot be done, naming the problem.
func (r Rotation) Check() error {
	if r.Algorithm != "" && r.Algorithm != structs.EncryptionAlgorithmAES256GCM {
		return structs.KindErrorf(structs.ErrInvalid, "keyring: unsupported algorithm %q (want %q)",
			r.Algorithm, structs.EncryptionAlgorithmAES256GCM)
	}
	if r.Full && r.PublishTime != 0 {
		return ErrPrepublishFull
	}
	return nil
}

// NewKeyState is the state the new key of r starts in.
func (r Rotation) NewKeyState() string {
	if r.PublishTime != 0 {
		return structs.RootKeyStatePrepublished
	}
	return structs.RootKeyStateActive
}

// Rotate returns the keys to write, in one entry, to add fresh (made by
// New in r.NewKeyState()) to the keyring keys:
//
//   - fresh active: the active key becomes inactive;
//   - fresh prepublished: the active key stays active until Tick
//     activates fresh at its publish time;
//   - r.Full: every other key that is not deprecated is marked rekeying.
func Rotate(keys []*structs.RootKey, fresh *structs.RootKey, r Rotation) []*structs.RootKey {
	out := []*structs.RootKey{fresh}
	for _, k := range keys {
		next := ""
		switch {
		case r.Full && k.Meta.State != structs.RootKeyStateDeprecated && k.Meta.State != structs.RootKeyStateRekeying:
			next = structs.RootKeyStateRekeying
		case fresh.Meta.Active() && k.Meta.Active():
			next = structs.RootKeyStateInactive
		}
		if next != "" {
			c := k.Copy()
			c.Meta.State = next
			out = append(out, c)
		}
	}
	return out
}

// Decision is what Tick found due.
type Decision struct {
	// NewKey asks for a new active key: made by New, then written with
	// Rotate(keys, fresh, Rotation{}) together with Updates.
	NewKey bool
	// Reason says why, for the leader's log.
	Reason string
	// Updates are keys whose state changes now.
	Updates []*structs.RootKey
}

// Due reports whether the decision asks for any write.
func (d Decision) Due() bool { return d.NewKey || len(d.Updates) > 0 }

// Tick decides what is due at now for keys (every key in state):
//
//   - no key at all, or none active and none about to be: a new key;
//   - a prepublished key whose publish time has passed becomes active,
//     the active key inactive;
//   - a rekeying key becomes inactive once nothing sealed with it is left
//     to seal again: sealing reports whether data (variables) is still
//     sealed with a key, nil meaning nothing is;
//   - the active key older than threshold, with no key prepublished to
//     replace it: a new key.
func Tick(keys []*structs.RootKey, now time.Time, threshold time.Duration, sealing func(keyID string) bool) Decision {
	var d Decision
	var active, due *structs.RootKey
	prepublished := false
	for _, k := range keys {
		switch k.Meta.State {
		case structs.RootKeyStateActive:
			active = k
		case structs.RootKeyStatePrepublished:
			prepublished = true
			if k.Meta.PublishTime <= now.UnixNano() && (due == nil || k.Meta.PublishTime > due.Meta.PublishTime) {
				due = k
			}
		case structs.RootKeyStateRekeying:
			if sealing != nil && sealing(k.Meta.KeyID) {
				continue
			}
			d.Updates = append(d.Updates, withState(k, structs.RootKeyStateInactive))
			d.Reason = "rekeying done"
		}
	}
	switch {
	case due != nil:
		d.Updates = append(d.Updates, withState(due, structs.RootKeyStateActive))
		if active != nil {
			d.Updates = append(d.Updates, withState(active, structs.RootKeyStateInactive))
		}
		d.Reason = "prepublished key reached its publish time"
	case active == nil && !prepublished:
		d.NewKey, d.Reason = true, "no active root key"
	case active != nil && !prepublished && threshold > 0 &&
		now.Sub(time.Unix(0, active.Meta.CreateTime)) >= threshold:
		d.NewKey, d.Reason = true, "active root key reached the rotation threshold"
	}
	return d
}

func withState(k *structs.RootKey, state string) *structs.RootKey {
	c := k.Copy()
	c.Meta.State = state
	return c
}

// ErrKeyInUse refuses removing a key that still seals variables; Nomad's
// text.
var ErrKeyInUse = structs.KindErrorf(structs.ErrInvalid, "root key in use, cannot delete")

// CanDelete refuses removing key: the active key never; a key that still
// seals variables (inUse) without force, since they could no longer be
// read.
func CanDelete(k *structs.RootKey, force, inUse bool) error {
	if k == nil {
		return structs.ErrRootKeyNotFound
	}
	if k.Meta.Active() {
		return structs.ErrRootKeyActive
	}
	if inUse && !force {
		return ErrKeyInUse
	}
	return nil
}
