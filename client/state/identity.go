package state

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/opennomad/nomad/structs"
)

// Files holding the node's identity in the client's state directory, as
// Nomad names them.
const (
	nodeIDFile     = "client-id"
	nodeSecretFile = "secret-id"
)

// NodeIdentity is the node's ID and the secret it authenticates with.
type NodeIdentity struct {
	ID       string
	SecretID string
}

// LoadOrCreateNodeIdentity returns the identity stored in dir, generating
// and storing a new one the first time. A restarted client thus
// registers as the same node and keeps its allocations.
func LoadOrCreateNodeIdentity(dir string) (NodeIdentity, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return NodeIdentity{}, fmt.Errorf("node identity: %w", err)
	}
	id, err := loadOrCreate(filepath.Join(dir, nodeIDFile), 0o600)
	if err != nil {
		return NodeIdentity{}, err
	}
	secret, err := loadOrCreate(filepath.Join(dir, nodeSecretFile), 0o600)
	if err != nil {
		return NodeIdentity{}, err
	}
	return NodeIdentity{ID: id, SecretID: secret}, nil
}

func loadOrCreate(path string, perm os.FileMode) (string, error) {
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		v := strings.TrimSpace(string(b))
		if !isUUID(v) {
			return "", fmt.Errorf("node identity: %s holds %q, not a UUID; fix or delete the file", path, v)
		}
		return v, nil
	case !errors.Is(err, os.ErrNotExist):
		return "", fmt.Errorf("node identity: %w", err)
	}
	v := structs.GenerateUUID()
	if err := writeFileAtomic(path, []byte(v)); err != nil {
		return "", fmt.Errorf("node identity: writing %s: %w", path, err)
	}
	if err := os.Chmod(path, perm); err != nil {
		return "", fmt.Errorf("node identity: %w", err)
	}
	return v, nil
}

// isUUID checks the 8-4-4-4-12 hex form.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, c := range s {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				return false
			}
		}
	}
	return true
}
