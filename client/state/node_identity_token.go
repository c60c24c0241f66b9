package state

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// nodeIdentityTokenFile holds the node identity the servers last signed
// for the node (a JWT), readable by the agent alone.
const nodeIdentityTokenFile = "node-identity.jwt"

// LoadNodeIdentityToken returns the node identity stored in dir, "" when
// none was ever stored.
func LoadNodeIdentityToken(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, nodeIdentityTokenFile))
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("node identity token: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// SaveNodeIdentityToken replaces the node identity stored in dir; a crash
// leaves the old or the new one.
func SaveNodeIdentityToken(dir, token string) error {
	if err := writeFileAtomic(filepath.Join(dir, nodeIdentityTokenFile), []byte(token)); err != nil {
		return fmt.Errorf("node identity token: %w", err)
	}
	return nil
}
