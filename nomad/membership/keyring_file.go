package membership

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/hashicorp/memberlist"
)

// KeyringFileName is the file, in the server's data directory, that keeps
// the gossip keys: a JSON array of base64 keys, the primary first, as
// serf writes it after each change made at run time.
const KeyringFileName = "serf.keyring"

// ParseKey decodes a gossip key: base64 of 16, 24 or 32 bytes (AES-128,
// AES-192 or AES-256).
func ParseKey(key string) ([]byte, error) {
	raw, err := base64.StdEncoding.DecodeString(key)
	if err != nil {
		return nil, fmt.Errorf("not base64: %w", err)
	}
	if err := memberlist.ValidateKey(raw); err != nil {
		return nil, fmt.Errorf("must decode to 16, 24 or 32 bytes, got %d", len(raw))
	}
	return raw, nil
}

// LoadKeyringFile reads the keys of a keyring file, the primary first.
// A missing file is fs.ErrNotExist.
func LoadKeyringFile(path string) ([][]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var encoded []string
	if err := json.Unmarshal(data, &encoded); err != nil {
		return nil, fmt.Errorf("gossip keyring %s: %w", path, err)
	}
	if len(encoded) == 0 {
		return nil, fmt.Errorf("gossip keyring %s: no keys", path)
	}
	keys := make([][]byte, 0, len(encoded))
	for i, k := range encoded {
		raw, err := ParseKey(k)
		if err != nil {
			return nil, fmt.Errorf("gossip keyring %s: key %d: %w", path, i, err)
		}
		keys = append(keys, raw)
	}
	return keys, nil
}

// WriteKeyringFile writes keys (the primary first) to path, readable by
// the owner only: the file holds secrets.
func WriteKeyringFile(path string, keys [][]byte) error {
	encoded := make([]string, len(keys))
	for i, k := range keys {
		encoded[i] = base64.StdEncoding.EncodeToString(k)
	}
	data, err := json.MarshalIndent(encoded, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("gossip keyring %s: %w", path, err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("gossip keyring %s: %w", path, err)
	}
	return nil
}

// InitKeyring returns the gossip keys a server starts with. The keyring
// file, once it exists, is the truth: keys installed, used and removed
// at run time are kept there, so the configured key (encrypt, base64)
// only seeds a file that does not exist yet. conflict reports a
// configured key that is not the file's primary key, for the caller to
// warn about. No file and no configured key: no keys, gossip stays in
// the clear. An empty path keeps the configured key in memory only.
func InitKeyring(path, encrypt string) (keys [][]byte, conflict bool, err error) {
	var configured []byte
	if encrypt != "" {
		if configured, err = ParseKey(encrypt); err != nil {
			return nil, false, fmt.Errorf("encrypt: %w", err)
		}
	}
	if path == "" {
		if configured == nil {
			return nil, false, nil
		}
		return [][]byte{configured}, false, nil
	}
	keys, err = LoadKeyringFile(path)
	switch {
	case err == nil:
		return keys, configured != nil && string(configured) != string(keys[0]), nil
	case !errors.Is(err, fs.ErrNotExist):
		return nil, false, err
	case configured == nil:
		return nil, false, nil
	}
	keys = [][]byte{configured}
	if err := WriteKeyringFile(path, keys); err != nil {
		return nil, false, err
	}
	return keys, false, nil
}
