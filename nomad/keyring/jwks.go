package keyring

import (
	"crypto/x509"
	"fmt"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/opennomad/nomad/structs"
)

// PublicKeys returns the public signing keys of every published key, in
// the order given.
func PublicKeys(keys []*structs.RootKey) []*structs.KeyringPublicKey {
	out := make([]*structs.KeyringPublicKey, 0, len(keys))
	for _, k := range keys {
		if !k.Meta.Published() {
			continue
		}
		out = append(out, &structs.KeyringPublicKey{
			KeyID:      k.Meta.KeyID,
			PublicKey:  k.PublicKey,
			Algorithm:  string(jose.RS256),
			CreateTime: k.Meta.CreateTime,
		})
	}
	return out
}

// JWKS is the JSON Web Key Set of keys: one RSA signing key per entry,
// identified by its root key's ID. go-jose writes the members as RFC 7517
// names them, as Nomad's does.
func JWKS(keys []*structs.KeyringPublicKey) (*jose.JSONWebKeySet, error) {
	set := &jose.JSONWebKeySet{Keys: make([]jose.JSONWebKey, 0, len(keys))}
	for _, k := range keys {
		pub, err := x509.ParsePKIXPublicKey(k.PublicKey)
		if err != nil {
			return nil, fmt.Errorf("root key %s: public key: %w", k.KeyID, err)
		}
		set.Keys = append(set.Keys, jose.JSONWebKey{
			Key:       pub,
			KeyID:     k.KeyID,
			Algorithm: k.Algorithm,
			Use:       "sig",
		})
	}
	return set, nil
}

// minJWKSCacheAge is the least a JWKS answer may be cached, as Nomad's.
const minJWKSCacheAge = 15 * time.Minute

// JWKSCacheAge is how long verifiers may cache the JWKS at now: half the
// time until the newest key is due for rotation, at least 15 minutes, so
// that they fetch the next key before anything is signed with it.
func JWKSCacheAge(keys []*structs.KeyringPublicKey, now time.Time, threshold time.Duration) time.Duration {
	var newest int64
	for _, k := range keys {
		newest = max(newest, k.CreateTime)
	}
	left := time.Unix(0, newest).Add(threshold).Sub(now) / 2
	return max(left, minJWKSCacheAge)
}
