package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// nodeMetaFile holds the node's dynamic metadata in the client's state
// directory.
const nodeMetaFile = "node-meta.json"

// LoadNodeMeta returns the dynamic node metadata stored in dir: a key
// with a value overrides (or adds to) the static meta of the agent's
// configuration, a key with nil removes the static one. It returns an
// empty map when none was ever stored.
func LoadNodeMeta(dir string) (map[string]*string, error) {
	b, err := os.ReadFile(filepath.Join(dir, nodeMetaFile))
	if errors.Is(err, os.ErrNotExist) {
		return map[string]*string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("dynamic node meta: %w", err)
	}
	meta := map[string]*string{}
	if err := json.Unmarshal(b, &meta); err != nil {
		return nil, fmt.Errorf("dynamic node meta %s: %w", filepath.Join(dir, nodeMetaFile), err)
	}
	return meta, nil
}

// SaveNodeMeta replaces the dynamic node metadata stored in dir; a crash
// leaves the old or the new version.
func SaveNodeMeta(dir string, meta map[string]*string) error {
	b, err := json.Marshal(meta)
	if err != nil {
		return fmt.Errorf("dynamic node meta: %w", err)
	}
	if err := writeFileAtomic(filepath.Join(dir, nodeMetaFile), b); err != nil {
		return fmt.Errorf("dynamic node meta: %w", err)
	}
	return nil
}
