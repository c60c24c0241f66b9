package keyring

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/opennomad/nomad/structs"
)

// Variables at rest: a variable's items, as JSON, sealed with the data
// key of a root key (AES-256-GCM, the key ID as additional data, the
// nonce in front). Only sealed items enter Raft and the state store; the
// endpoints seal before writing and open when serving a read.

// dataKey unseals k's data key alone: cheaper than Open, which also
// parses the RSA signing key.
func dataKey(k *structs.RootKey) ([]byte, error) {
	if err := k.Validate(); err != nil {
		return nil, err
	}
	key, err := open(k.KEK, k.Meta.KeyID, k.DataKey)
	if err != nil {
		return nil, fmt.Errorf("root key %s: data key: %w", k.Meta.KeyID, err)
	}
	return key, nil
}

// SealVariable returns v with its items sealed under k. random is
// crypto/rand.Reader outside tests.
func SealVariable(random io.Reader, k *structs.RootKey, v *structs.VariableDecrypted) (*structs.VariableEncrypted, error) {
	key, err := dataKey(k)
	if err != nil {
		return nil, err
	}
	plain, err := json.Marshal(v.Items)
	if err != nil {
		return nil, fmt.Errorf("variable %q: encoding items: %w", v.Path, err)
	}
	sealed, err := seal(random, key, k.Meta.KeyID, plain)
	if err != nil {
		return nil, fmt.Errorf("variable %q: %w", v.Path, err)
	}
	return &structs.VariableEncrypted{
		VariableMetadata: v.VariableMetadata.Copy(),
		VariableData:     structs.VariableData{Data: sealed, KeyID: k.Meta.KeyID},
	}, nil
}

// OpenVariable returns v with its items opened with k, the root key
// v.KeyID names.
func OpenVariable(k *structs.RootKey, v *structs.VariableEncrypted) (*structs.VariableDecrypted, error) {
	if k == nil || k.Meta == nil || k.Meta.KeyID != v.KeyID {
		return nil, fmt.Errorf("variable %q: root key %s: %w", v.Path, v.KeyID, structs.ErrRootKeyNotFound)
	}
	key, err := dataKey(k)
	if err != nil {
		return nil, err
	}
	plain, err := open(key, k.Meta.KeyID, v.Data)
	if err != nil {
		return nil, fmt.Errorf("variable %q: %w", v.Path, err)
	}
	out := &structs.VariableDecrypted{VariableMetadata: v.VariableMetadata.Copy()}
	if err := json.Unmarshal(plain, &out.Items); err != nil {
		return nil, fmt.Errorf("variable %q: decoding items: %w", v.Path, err)
	}
	return out, nil
}

// ResealVariable opens v with from, the key that sealed it, and seals its
// items again with to: a full rotation moves variables off older keys.
// Everything but the sealed data and its key ID is kept.
func ResealVariable(random io.Reader, from, to *structs.RootKey, v *structs.VariableEncrypted) (*structs.VariableEncrypted, error) {
	open, err := OpenVariable(from, v)
	if err != nil {
		return nil, err
	}
	return SealVariable(random, to, open)
}
