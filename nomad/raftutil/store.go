// Package raftutil reads a stopped server's durable Raft store for the
// offline operator tools (nomad operator raft info|logs|state): the log
// and stable store of raft-wal under <data_dir>/raft/wal and the
// snapshots beside it.
//
// It never changes the server's files: it refuses a store that a running
// server holds locked, and opens a private copy of the rest, since
// opening a WAL may seal or add a segment and opening the snapshot store
// writes a probe file.
package raftutil

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	wal "github.com/hashicorp/raft-wal"
	"github.com/hashicorp/raft-wal/metadb"
)

// ErrLocked is returned for a store that a running server holds: stop it
// first.
var ErrLocked = errors.New("the Raft store is in use by a running server; stop the server first")

// Store is an opened copy of a server's Raft store.
type Store struct {
	// Dir is the server's raft directory that was copied.
	Dir   string
	Logs  raft.LogStore
	Snaps raft.SnapshotStore
	// stable is the WAL's stable store (terms and votes).
	stable raft.StableStore
	close  func() error
	tmp    string
}

// Locate finds the raft directory (the one holding wal/) from a path an
// operator may give: the raft directory itself, its wal/ directory or
// its wal-meta.db, the server's data directory, or the agent's.
func Locate(path string) (string, error) {
	candidates := []string{path, filepath.Dir(path), filepath.Join(path, "raft"), filepath.Join(path, "server", "raft")}
	if filepath.Base(path) == "wal" {
		candidates = append([]string{filepath.Dir(path)}, candidates...)
	}
	if filepath.Base(filepath.Dir(path)) == "wal" {
		candidates = append([]string{filepath.Dir(filepath.Dir(path))}, candidates...)
	}
	for _, dir := range candidates {
		if fi, err := os.Stat(filepath.Join(dir, "wal", metadb.FileName)); err == nil && !fi.IsDir() {
			return dir, nil
		}
	}
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("raft store %q: %w", path, err)
	}
	return "", fmt.Errorf("no Raft store found at %q: give a server's data directory or its raft directory (holding wal/%s)", path, metadb.FileName)
}

// Open copies the raft directory at path (see Locate) and opens the
// copy. Close removes the copy.
func Open(path string) (*Store, error) {
	dir, err := Locate(path)
	if err != nil {
		return nil, err
	}
	if err := checkUnlocked(filepath.Join(dir, "wal", metadb.FileName)); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	tmp, err := os.MkdirTemp("", "nomad-raft-*")
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*Store, error) {
		os.RemoveAll(tmp)
		return nil, err
	}
	if err := copyTree(dir, tmp); err != nil {
		return fail(fmt.Errorf("copying %s: %w", dir, err))
	}
	meta := &metadb.BoltMetaDB{}
	log, err := wal.Open(filepath.Join(tmp, "wal"), wal.WithMetaStore(meta), wal.WithLogger(hclog.NewNullLogger()))
	if err != nil {
		meta.Close()
		return fail(fmt.Errorf("opening the Raft log of %s: %w", dir, err))
	}
	snaps, err := raft.NewFileSnapshotStoreWithLogger(tmp, 1, hclog.NewNullLogger())
	if err != nil {
		log.Close()
		meta.Close()
		return fail(fmt.Errorf("opening the snapshots of %s: %w", dir, err))
	}
	return &Store{Dir: dir, Logs: log, stable: log, Snaps: snaps, tmp: tmp,
		close: func() error { return errors.Join(log.Close(), meta.Close()) }}, nil
}

// Close releases the copy.
func (s *Store) Close() error {
	return errors.Join(s.close(), os.RemoveAll(s.tmp))
}

// checkUnlocked refuses a metadata file a running server holds: its
// database keeps an exclusive lock on it while open.
func checkUnlocked(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return ErrLocked
		}
		return fmt.Errorf("locking %s: %w", path, err)
	}
	return syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
}

// copyTree copies the regular files and directories under src into dst.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o700)
		case !d.Type().IsRegular():
			return nil
		}
		return copyFile(path, target)
	})
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
