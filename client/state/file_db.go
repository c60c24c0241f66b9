package state

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/hashicorp/go-msgpack/v2/codec"

	"github.com/opennomad/nomad/structs"
)

// File names inside an allocation's state directory.
const (
	allocFile  = "alloc.msgpack"
	taskPrefix = "task-"
	taskSuffix = ".msgpack"
)

// FileDB keeps state as msgpack files (the codec the servers use, so a
// task's generic driver config keeps its types) under
// <dir>/allocs/<alloc-id>/. Every write goes to a temporary file that is
// fsynced and renamed over the old one, so a crash leaves either the old
// or the new version, never a torn file.
type FileDB struct {
	dir string

	mu      sync.Mutex
	deleted map[string]bool
}

var _ DB = (*FileDB)(nil)

// NewFileDB opens (creating) a store in dir.
func NewFileDB(dir string) (*FileDB, error) {
	if err := os.MkdirAll(filepath.Join(dir, "allocs"), 0o700); err != nil {
		return nil, fmt.Errorf("client state dir: %w", err)
	}
	return &FileDB{dir: dir, deleted: map[string]bool{}}, nil
}

func (db *FileDB) allocDir(id string) (string, error) {
	if id == "" || strings.ContainsAny(id, `/\`) || id == "." || id == ".." {
		return "", fmt.Errorf("invalid alloc ID %q", id)
	}
	return filepath.Join(db.dir, "allocs", id), nil
}

// PutAllocation stores the allocation.
func (db *FileDB) PutAllocation(alloc *structs.Allocation) error {
	return db.put(alloc.ID, allocFile, alloc)
}

// PutTaskRunnerState stores one task's state.
func (db *FileDB) PutTaskRunnerState(allocID, task string, st *TaskRunnerState) error {
	if task == "" || strings.ContainsAny(task, `/\`) {
		return fmt.Errorf("alloc %s: invalid task name %q", allocID, task)
	}
	return db.put(allocID, taskPrefix+task+taskSuffix, st)
}

func (db *FileDB) put(allocID, name string, v interface{}) error {
	dir, err := db.allocDir(allocID)
	if err != nil {
		return err
	}
	var buf []byte
	if err := codec.NewEncoderBytes(&buf, structs.MsgpackHandle).Encode(v); err != nil {
		return fmt.Errorf("alloc %s: encoding %s: %w", allocID, name, err)
	}
	// The lock orders writes against DeleteAllocation so a late write
	// cannot resurrect a deleted allocation.
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.deleted[allocID] {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("alloc %s: %w", allocID, err)
	}
	if err := writeFileAtomic(filepath.Join(dir, name), buf); err != nil {
		return fmt.Errorf("alloc %s: writing %s: %w", allocID, name, err)
	}
	return nil
}

// GetAllAllocations loads every stored allocation.
func (db *FileDB) GetAllAllocations() ([]*structs.Allocation, map[string]error, error) {
	entries, err := os.ReadDir(filepath.Join(db.dir, "allocs"))
	if err != nil {
		return nil, nil, fmt.Errorf("listing client state: %w", err)
	}
	var allocs []*structs.Allocation
	bad := map[string]error{}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		var a structs.Allocation
		found, err := db.get(e.Name(), allocFile, &a)
		switch {
		case err != nil:
			bad[e.Name()] = err
		case found:
			allocs = append(allocs, &a)
		}
	}
	return allocs, bad, nil
}

// GetTaskRunnerState loads one task's state.
func (db *FileDB) GetTaskRunnerState(allocID, task string) (*TaskRunnerState, error) {
	var st TaskRunnerState
	found, err := db.get(allocID, taskPrefix+task+taskSuffix, &st)
	if err != nil || !found {
		return nil, err
	}
	return &st, nil
}

func (db *FileDB) get(allocID, name string, out interface{}) (bool, error) {
	dir, err := db.allocDir(allocID)
	if err != nil {
		return false, err
	}
	b, err := os.ReadFile(filepath.Join(dir, name))
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("alloc %s: reading %s: %w", allocID, name, err)
	}
	if err := codec.NewDecoderBytes(b, structs.MsgpackHandle).Decode(out); err != nil {
		return false, fmt.Errorf("alloc %s: decoding %s: %w", allocID, name, err)
	}
	return true, nil
}

// DeleteAllocation removes the allocation's directory.
func (db *FileDB) DeleteAllocation(allocID string) error {
	dir, err := db.allocDir(allocID)
	if err != nil {
		return err
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	db.deleted[allocID] = true
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("alloc %s: deleting state: %w", allocID, err)
	}
	return nil
}

// Close is a no-op: every write is complete when it returns.
func (db *FileDB) Close() error { return nil }

// writeFileAtomic replaces path with data via a synced temporary file.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(data)
	if werr == nil {
		werr = tmp.Sync()
	}
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return werr
	}
	// The rename is durable once the directory entry is.
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
