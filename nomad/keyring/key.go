package keyring

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rsa"
	"crypto/x509"
	"fmt"
	"io"
	"time"

	"github.com/opennomad/nomad/structs"
)

// signingKeyBits is the RSA key size, as Nomad's (RS256 tokens).
const signingKeyBits = 2048

// Material is a root key unsealed: what the server seals and signs with.
// It lives in memory only and is never logged.
type Material struct {
	KeyID   string
	DataKey []byte
	Signer  *rsa.PrivateKey
}

// String names the material without showing it.
func (m *Material) String() string { return "root key material " + m.KeyID }

// GoString is String, for %#v.
func (m *Material) GoString() string { return m.String() }

// New makes a root key created at now in state (active, or prepublished
// with publishTime in Unix nanoseconds), its data key and signing key
// sealed under a fresh key-encryption key. random is crypto/rand.Reader
// outside tests.
func New(random io.Reader, now time.Time, state string, publishTime int64) (*structs.RootKey, error) {
	meta := &structs.RootKeyMeta{
		KeyID:       structs.GenerateUUID(),
		Algorithm:   structs.EncryptionAlgorithmAES256GCM,
		CreateTime:  now.UnixNano(),
		State:       state,
		PublishTime: publishTime,
	}
	dataKey := make([]byte, 32)
	kek := make([]byte, 32)
	for _, b := range [][]byte{dataKey, kek} {
		if _, err := io.ReadFull(random, b); err != nil {
			return nil, fmt.Errorf("root key: reading random bytes: %w", err)
		}
	}
	signer, err := rsa.GenerateKey(random, signingKeyBits)
	if err != nil {
		return nil, fmt.Errorf("root key: generating signing key: %w", err)
	}
	private, err := x509.MarshalPKCS8PrivateKey(signer)
	if err != nil {
		return nil, fmt.Errorf("root key: encoding signing key: %w", err)
	}
	public, err := x509.MarshalPKIXPublicKey(&signer.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("root key: encoding public key: %w", err)
	}
	sealedData, err := seal(random, kek, meta.KeyID, dataKey)
	if err != nil {
		return nil, err
	}
	sealedSigner, err := seal(random, kek, meta.KeyID, private)
	if err != nil {
		return nil, err
	}
	k := &structs.RootKey{Meta: meta, KEK: kek, DataKey: sealedData, SigningKey: sealedSigner, PublicKey: public}
	return k, k.Validate()
}

// Open unseals a root key's material.
func Open(k *structs.RootKey) (*Material, error) {
	if err := k.Validate(); err != nil {
		return nil, err
	}
	id := k.Meta.KeyID
	dataKey, err := open(k.KEK, id, k.DataKey)
	if err != nil {
		return nil, fmt.Errorf("root key %s: data key: %w", id, err)
	}
	private, err := open(k.KEK, id, k.SigningKey)
	if err != nil {
		return nil, fmt.Errorf("root key %s: signing key: %w", id, err)
	}
	parsed, err := x509.ParsePKCS8PrivateKey(private)
	if err != nil {
		return nil, fmt.Errorf("root key %s: signing key: %w", id, err)
	}
	signer, ok := parsed.(*rsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("root key %s: signing key is a %T, not RSA", id, parsed)
	}
	return &Material{KeyID: id, DataKey: dataKey, Signer: signer}, nil
}

// seal encrypts plain with AES-256-GCM under key, the key ID as additional
// data (so sealed material cannot be passed off as another key's), the
// nonce in front.
func seal(random io.Reader, key []byte, keyID string, plain []byte) ([]byte, error) {
	aead, err := newAEAD(key)
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plain)+aead.Overhead())
	if _, err := io.ReadFull(random, nonce); err != nil {
		return nil, fmt.Errorf("root key: reading nonce: %w", err)
	}
	return aead.Seal(nonce, nonce, plain, []byte(keyID)), nil
}

func open(key []byte, keyID string, sealed []byte) ([]byte, error) {
	aead, err := newAEAD(key)
	if err != nil {
		return nil, err
	}
	if len(sealed) < aead.NonceSize() {
		return nil, fmt.Errorf("sealed material too short")
	}
	nonce, body := sealed[:aead.NonceSize()], sealed[aead.NonceSize():]
	plain, err := aead.Open(nil, nonce, body, []byte(keyID))
	if err != nil {
		return nil, fmt.Errorf("unsealing: %w", err)
	}
	return plain, nil
}

func newAEAD(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("root key: %w", err)
	}
	return cipher.NewGCM(block)
}
