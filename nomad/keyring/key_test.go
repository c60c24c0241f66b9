package keyring

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

func TestNewAndOpen(t *testing.T) {
	k, err := New(rand.Reader, epoch, structs.RootKeyStateActive, 0)
	must.NoError(t, err)
	must.Eq(t, epoch.UnixNano(), k.Meta.CreateTime)
	must.Eq(t, structs.EncryptionAlgorithmAES256GCM, k.Meta.Algorithm)

	m, err := Open(k)
	must.NoError(t, err)
	must.Eq(t, k.Meta.KeyID, m.KeyID)
	must.Eq(t, 32, len(m.DataKey))

	// Nothing sealed holds the material in the clear.
	must.False(t, bytes.Contains(k.DataKey, m.DataKey))
	must.False(t, bytes.Contains(k.SigningKey, m.Signer.D.Bytes()))

	// The signing key signs what the published public key verifies.
	sum := sha256.Sum256([]byte("payload"))
	sig, err := rsa.SignPKCS1v15(rand.Reader, m.Signer, crypto.SHA256, sum[:])
	must.NoError(t, err)
	set, err := JWKS(PublicKeys([]*structs.RootKey{k}))
	must.NoError(t, err)
	must.Len(t, 1, set.Keys)
	must.NoError(t, rsa.VerifyPKCS1v15(set.Keys[0].Key.(*rsa.PublicKey), crypto.SHA256, sum[:], sig))

	// Neither the key nor its material print what they hold.
	for _, s := range []string{fmt.Sprint(k), fmt.Sprintf("%#v", k), fmt.Sprint(m), fmt.Sprintf("%#v", m)} {
		must.StrContains(t, s, k.Meta.KeyID)
		must.False(t, strings.Contains(s, "KEK"))
	}
}

func TestOpen_RefusesTamperedOrMovedMaterial(t *testing.T) {
	k, err := New(rand.Reader, epoch, structs.RootKeyStateActive, 0)
	must.NoError(t, err)

	flipped := k.Copy()
	flipped.DataKey = bytes.Clone(k.DataKey)
	flipped.DataKey[len(flipped.DataKey)-1] ^= 1
	_, err = Open(flipped)
	must.ErrorContains(t, err, "data key")

	// Material sealed for one key ID does not open under another.
	moved := k.Copy()
	moved.Meta.KeyID = structs.GenerateUUID()
	_, err = Open(moved)
	must.ErrorContains(t, err, "unsealing")

	wrongKEK := k.Copy()
	wrongKEK.KEK = make([]byte, 32)
	_, err = Open(wrongKEK)
	must.Error(t, err)
}

func TestJWKS_Document(t *testing.T) {
	a, err := New(rand.Reader, epoch, structs.RootKeyStateInactive, 0)
	must.NoError(t, err)
	b, err := New(rand.Reader, epoch.Add(time.Hour), structs.RootKeyStateActive, 0)
	must.NoError(t, err)
	gone := b.Copy()
	gone.Meta.KeyID, gone.Meta.State = structs.GenerateUUID(), structs.RootKeyStateDeprecated

	pub := PublicKeys([]*structs.RootKey{a, b, gone})
	must.Len(t, 2, pub)
	set, err := JWKS(pub)
	must.NoError(t, err)
	raw, err := json.Marshal(set)
	must.NoError(t, err)

	var doc struct {
		Keys []map[string]string `json:"keys"`
	}
	must.NoError(t, json.Unmarshal(raw, &doc))
	must.Len(t, 2, doc.Keys)
	for i, k := range []*structs.RootKey{a, b} {
		got := doc.Keys[i]
		must.Eq(t, k.Meta.KeyID, got["kid"])
		must.Eq(t, "RSA", got["kty"])
		must.Eq(t, "RS256", got["alg"])
		must.Eq(t, "sig", got["use"])
		must.NotEq(t, "", got["n"])
		must.Eq(t, "AQAB", got["e"])
		_, private := got["d"]
		must.False(t, private)
	}
}

func TestJWKSCacheAge(t *testing.T) {
	const threshold = 720 * time.Hour
	pub := []*structs.KeyringPublicKey{{CreateTime: epoch.UnixNano()}, {CreateTime: epoch.Add(-time.Hour).UnixNano()}}
	cases := []struct {
		name string
		now  time.Time
		want time.Duration
	}{
		// 720 h left until the newest key is due: cache for half of it.
		{"new key", epoch, 360 * time.Hour},
		// 10 h left: 5 h.
		{"older key", epoch.Add(710 * time.Hour), 5 * time.Hour},
		// 20 minutes left: half would be 10 minutes, below the floor.
		{"rotation close", epoch.Add(threshold - 20*time.Minute), 15 * time.Minute},
		{"rotation overdue", epoch.Add(2 * threshold), 15 * time.Minute},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			must.Eq(t, tc.want, JWKSCacheAge(pub, tc.now, threshold))
		})
	}
}
