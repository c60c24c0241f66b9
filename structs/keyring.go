package structs

import "fmt"

// The keyring: the cluster's root keys. Each root key is a data key
// (AES-256-GCM, for variables sealed at rest) and an RSA-2048 signing key
// (for workload identities and whatever else the cluster signs); the
// public halves of the signing keys are published at
// /.well-known/jwks.json. The leader creates the first key when it takes
// office and rotates keys on request or when the active one gets old.
// Package nomad/keyring builds, wraps and judges keys; the state store
// only keeps them.

// Root key states, as Nomad names them.
const (
	// RootKeyStateActive is the one key new data is sealed and signed
	// with.
	RootKeyStateActive = "active"
	// RootKeyStateInactive keys only open and verify what they sealed
	// or signed before.
	RootKeyStateInactive = "inactive"
	// RootKeyStateRekeying keys are being replaced by the active key
	// everywhere they were used (a full rotation).
	RootKeyStateRekeying = "rekeying"
	// RootKeyStatePrepublished keys are published in the JWKS ahead of
	// their PublishTime, when they become active, so that verifiers
	// learn them before anything is signed with them.
	RootKeyStatePrepublished = "prepublished"
	// RootKeyStateDeprecated keys are kept but no longer published.
	RootKeyStateDeprecated = "deprecated"
)

// EncryptionAlgorithmAES256GCM is the only data-key algorithm.
const EncryptionAlgorithmAES256GCM = "aes256-gcm"

// RootKeyMeta is what the API tells about a root key; its JSON is
// Nomad's.
type RootKeyMeta struct {
	KeyID     string
	Algorithm string
	// CreateTime and PublishTime are Unix nanoseconds.
	CreateTime  int64
	CreateIndex uint64
	ModifyIndex uint64
	State       string
	PublishTime int64
}

// Copy returns a copy of m.
func (m *RootKeyMeta) Copy() *RootKeyMeta {
	if m == nil {
		return nil
	}
	c := *m
	return &c
}

// Active reports whether new data is sealed and signed with the key.
func (m *RootKeyMeta) Active() bool { return m.State == RootKeyStateActive }

// Published reports whether the key's public half is in the JWKS.
func (m *RootKeyMeta) Published() bool { return m.State != RootKeyStateDeprecated }

// RootKey is a root key as Raft carries and the state store keeps it:
// its metadata, its key material sealed with a key-encryption key, and the
// public half of its signing key, which is not secret.
//
// The key material never appears in plain text in a Raft entry, a
// snapshot or an API answer: DataKey and SigningKey are sealed with KEK
// (AES-256-GCM, the key ID as additional data). As with Nomad's default
// "aead" keyring provider, KEK travels beside what it seals, so the
// sealing guards against key material being read off a dump or a log
// line, not against someone who holds the whole Raft data; the data
// directory must be readable by the agent alone (see the security page).
type RootKey struct {
	Meta *RootKeyMeta
	// KEK seals DataKey and SigningKey; a fresh one for every root key.
	KEK []byte
	// DataKey is the sealed 32-byte AES-256 key.
	DataKey []byte
	// SigningKey is the sealed PKCS#8 DER form of the RSA private key.
	SigningKey []byte
	// PublicKey is the PKIX DER form of the RSA public key.
	PublicKey []byte
}

// Copy returns a copy of k whose metadata may be changed; the byte slices
// are shared, as nothing changes them in place.
func (k *RootKey) Copy() *RootKey {
	if k == nil {
		return nil
	}
	c := *k
	c.Meta = k.Meta.Copy()
	return &c
}

// Validate checks what the state store requires of a root key.
func (k *RootKey) Validate() error {
	if k == nil || k.Meta == nil {
		return KindErrorf(ErrInvalid, "root key: missing metadata")
	}
	if !IsUUID(k.Meta.KeyID) {
		return KindErrorf(ErrInvalid, "root key: KeyID %q is not a UUID", k.Meta.KeyID)
	}
	switch k.Meta.State {
	case RootKeyStateActive, RootKeyStateInactive, RootKeyStateRekeying,
		RootKeyStatePrepublished, RootKeyStateDeprecated:
	default:
		return KindErrorf(ErrInvalid, "root key %s: unknown state %q", k.Meta.KeyID, k.Meta.State)
	}
	if k.Meta.Algorithm != EncryptionAlgorithmAES256GCM {
		return KindErrorf(ErrInvalid, "root key %s: unsupported algorithm %q", k.Meta.KeyID, k.Meta.Algorithm)
	}
	if len(k.KEK) == 0 || len(k.DataKey) == 0 || len(k.SigningKey) == 0 || len(k.PublicKey) == 0 {
		return KindErrorf(ErrInvalid, "root key %s: key material missing", k.Meta.KeyID)
	}
	return nil
}

// String names the key without any of its material, so that a key passed
// to a logger or an error by mistake leaks nothing.
func (k *RootKey) String() string {
	if k == nil || k.Meta == nil {
		return "root key <nil>"
	}
	return fmt.Sprintf("root key %s (%s)", k.Meta.KeyID, k.Meta.State)
}

// GoString is String, for %#v.
func (k *RootKey) GoString() string { return k.String() }

// RootKeyUpsertRequest is the Raft entry of a keyring change: keys added
// or replaced in one transaction (a rotation adds the new key and demotes
// the old one together, so there is never a moment with two active keys
// or none).
type RootKeyUpsertRequest struct {
	Keys []*RootKey
	WriteRequest
}

// RootKeyDeleteRequest is the Raft entry removing a root key.
type RootKeyDeleteRequest struct {
	KeyID string
	WriteRequest
}

// KeyringRotateRequest asks for a new active root key: Keyring.Rotate.
type KeyringRotateRequest struct {
	Algorithm string
	// Full marks every older key for rekeying: whatever was sealed with
	// them is to be sealed again with the new key.
	Full bool
	// PublishTime, Unix nanoseconds, prepublishes the new key: it is
	// published at once and becomes active at that time.
	PublishTime int64
	WriteRequest
}

// KeyringRotateResponse answers a rotation with the new key's metadata.
type KeyringRotateResponse struct {
	Key *RootKeyMeta
	WriteMeta
}

// KeyringListResponse answers Keyring.List.
type KeyringListResponse struct {
	Keys []*RootKeyMeta
	QueryMeta
}

// KeyringDeleteRequest asks to remove a root key: Keyring.Delete.
type KeyringDeleteRequest struct {
	KeyID string
	// Force removes a key still in use.
	Force bool
	WriteRequest
}

// KeyringDeleteResponse answers Keyring.Delete.
type KeyringDeleteResponse struct {
	WriteMeta
}

// KeyringPublicKeysResponse answers Keyring.ListPublic: the public
// signing keys of every published root key.
type KeyringPublicKeysResponse struct {
	Keys []*KeyringPublicKey
	QueryMeta
}

// KeyringPublicKey is the public half of a root key's signing key.
type KeyringPublicKey struct {
	KeyID string
	// PublicKey is the PKIX DER form.
	PublicKey []byte
	Algorithm string
	// CreateTime is Unix nanoseconds.
	CreateTime int64
}
