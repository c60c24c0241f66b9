// Package logmon keeps a task's output on disk within bounds. A task's
// stdout and stderr each feed one FileRotator, which writes numbered
// files <base>.0, <base>.1, ... in the alloc's logs directory, moves on to
// the next number when a file reaches its size limit, and deletes the
// oldest files beyond the configured count. The highest number is always
// the file being written, so readers (the logs API) read files in
// ascending order to see output in order.
package logmon

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// FileRotator is an io.WriteCloser over a numbered set of files. It is
// safe for concurrent use, though a stream normally has one writer.
type FileRotator struct {
	dir      string
	base     string
	maxFiles int
	maxSize  int64

	mu     sync.Mutex
	f      *os.File
	index  int   // number of the file being written
	size   int64 // bytes in the file being written
	closed bool
}

// NewFileRotator opens the rotator for files named <base>.<n> in dir. It
// continues the highest-numbered existing file, so output of a restarted
// task (or a restarted client) is appended after what came before.
// maxFiles must be >= 1 and maxSize >= 1 byte.
func NewFileRotator(dir, base string, maxFiles int, maxSize int64) (*FileRotator, error) {
	if maxFiles < 1 {
		return nil, fmt.Errorf("log rotator %s: max_files must be >= 1, got %d", base, maxFiles)
	}
	if maxSize < 1 {
		return nil, fmt.Errorf("log rotator %s: max_file_size must be >= 1 byte, got %d", base, maxSize)
	}
	if base == "" || strings.ContainsAny(base, `/\`) {
		return nil, fmt.Errorf("log rotator: invalid base name %q", base)
	}
	r := &FileRotator{dir: dir, base: base, maxFiles: maxFiles, maxSize: maxSize}
	indexes, err := r.existing()
	if err != nil {
		return nil, err
	}
	if len(indexes) > 0 {
		r.index = indexes[len(indexes)-1]
	}
	if err := r.open(); err != nil {
		return nil, err
	}
	if r.size >= r.maxSize {
		if err := r.rotate(); err != nil {
			return nil, err
		}
	} else if err := r.purge(); err != nil {
		return nil, err
	}
	return r, nil
}

// Write appends p, splitting it across files at the size limit so that no
// file exceeds maxSize bytes.
func (r *FileRotator) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return 0, os.ErrClosed
	}
	written := 0
	for len(p) > 0 {
		if r.size >= r.maxSize {
			if err := r.rotate(); err != nil {
				return written, err
			}
		}
		chunk := p
		if room := r.maxSize - r.size; int64(len(chunk)) > room {
			chunk = chunk[:room]
		}
		n, err := r.f.Write(chunk)
		written += n
		r.size += int64(n)
		if err != nil {
			return written, fmt.Errorf("writing %s: %w", r.path(r.index), err)
		}
		p = p[n:]
	}
	return written, nil
}

// Close closes the current file. Further writes fail with os.ErrClosed.
func (r *FileRotator) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	return r.f.Close()
}

// CurrentIndex is the number of the file being written.
func (r *FileRotator) CurrentIndex() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.index
}

func (r *FileRotator) path(n int) string {
	return filepath.Join(r.dir, r.base+"."+strconv.Itoa(n))
}

func (r *FileRotator) open() error {
	f, err := os.OpenFile(r.path(r.index), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("log rotator: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("log rotator: %w", err)
	}
	r.f, r.size = f, fi.Size()
	return nil
}

// rotate moves to the next file and deletes the ones beyond the limit.
func (r *FileRotator) rotate() error {
	if err := r.f.Close(); err != nil {
		return fmt.Errorf("closing %s: %w", r.path(r.index), err)
	}
	r.index++
	if err := r.open(); err != nil {
		return err
	}
	return r.purge()
}

// purge deletes every file numbered at or below index-maxFiles.
func (r *FileRotator) purge() error {
	indexes, err := r.existing()
	if err != nil {
		return err
	}
	var errs []error
	for _, n := range indexes {
		if n > r.index-r.maxFiles {
			break
		}
		if err := os.Remove(r.path(n)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// existing returns the numbers of the files of this stream, ascending.
func (r *FileRotator) existing() ([]int, error) {
	entries, err := os.ReadDir(r.dir)
	if err != nil {
		return nil, fmt.Errorf("log rotator: listing %s: %w", r.dir, err)
	}
	return LogIndexes(entries, r.base), nil
}

// LogIndexes returns, ascending, the numbers n of the entries named
// <base>.<n>. The logs API uses it to list a task's files in order.
func LogIndexes(entries []os.DirEntry, base string) []int {
	prefix := base + "."
	var out []int
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasPrefix(name, prefix) {
			continue
		}
		n, err := strconv.Atoi(name[len(prefix):])
		if err != nil || n < 0 {
			continue
		}
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}
