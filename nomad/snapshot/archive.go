// Package snapshot reads and writes snapshot archives: the file `nomad
// operator snapshot save` writes and `restore` reads. An archive is a
// gzip-compressed tar of three files:
//
//	meta.json   the Raft snapshot's metadata (index, term, configuration)
//	state.bin   the state store as Raft persisted it
//	SHA256SUMS  the SHA-256 of both, in sha256sum's format
//
// so that an operator can inspect one with standard tools, and a damaged
// or truncated archive is refused before anything is restored.
package snapshot

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"strings"
	"time"

	"github.com/hashicorp/raft"
)

const (
	metaName  = "meta.json"
	stateName = "state.bin"
	sumsName  = "SHA256SUMS"
)

// Write writes an archive of the snapshot meta describes, whose data
// state yields (exactly meta.Size bytes).
func Write(w io.Writer, meta *raft.SnapshotMeta, state io.Reader) error {
	metaJSON, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding snapshot meta: %w", err)
	}
	gz := gzip.NewWriter(w)
	tw := tar.NewWriter(gz)
	now := time.Now()
	header := func(name string, size int64) *tar.Header {
		return &tar.Header{Name: name, Mode: 0o600, Size: size, ModTime: now, Typeflag: tar.TypeReg}
	}

	metaSum := sha256.Sum256(metaJSON)
	if err := tw.WriteHeader(header(metaName, int64(len(metaJSON)))); err != nil {
		return fmt.Errorf("writing snapshot archive: %w", err)
	}
	if _, err := tw.Write(metaJSON); err != nil {
		return fmt.Errorf("writing snapshot archive: %w", err)
	}

	if err := tw.WriteHeader(header(stateName, meta.Size)); err != nil {
		return fmt.Errorf("writing snapshot archive: %w", err)
	}
	stateHash := sha256.New()
	n, err := io.Copy(io.MultiWriter(tw, stateHash), state)
	if err != nil {
		return fmt.Errorf("writing snapshot state: %w", err)
	}
	if n != meta.Size {
		return fmt.Errorf("snapshot state is %d bytes, its meta says %d", n, meta.Size)
	}

	sums := fmt.Sprintf("%x  %s\n%x  %s\n", metaSum, metaName, stateHash.Sum(nil), stateName)
	if err := tw.WriteHeader(header(sumsName, int64(len(sums)))); err != nil {
		return fmt.Errorf("writing snapshot archive: %w", err)
	}
	if _, err := io.WriteString(tw, sums); err != nil {
		return fmt.Errorf("writing snapshot archive: %w", err)
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("writing snapshot archive: %w", err)
	}
	if err := gz.Close(); err != nil {
		return fmt.Errorf("writing snapshot archive: %w", err)
	}
	return nil
}

// ErrCorrupt marks an archive that is damaged, truncated or not an
// archive at all.
var ErrCorrupt = errors.New("snapshot archive is corrupt")

// Read reads an archive whole, checks it against its checksums and
// returns its meta and its state, spooled to a temporary file in dir
// (the system's when ""), which closing the returned reader removes.
// Nothing is returned from an archive that fails its checks.
func Read(r io.Reader, dir string) (*raft.SnapshotMeta, io.ReadCloser, error) {
	gz, err := gzip.NewReader(bufio.NewReader(r))
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	defer gz.Close()
	f, err := os.CreateTemp(dir, "snapshot-restore-*")
	if err != nil {
		return nil, nil, fmt.Errorf("spooling snapshot: %w", err)
	}
	state := &tempFile{File: f}
	fail := func(err error) (*raft.SnapshotMeta, io.ReadCloser, error) {
		state.Close()
		return nil, nil, err
	}

	var (
		metaJSON  []byte
		metaHash  hash.Hash = sha256.New()
		stateHash hash.Hash = sha256.New()
		sums      map[string]string
		seen      = map[string]bool{}
	)
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fail(fmt.Errorf("%w: %w", ErrCorrupt, err))
		}
		if seen[h.Name] {
			return fail(fmt.Errorf("%w: %s appears twice", ErrCorrupt, h.Name))
		}
		seen[h.Name] = true
		switch h.Name {
		case metaName:
			if metaJSON, err = io.ReadAll(io.TeeReader(io.LimitReader(tr, 1<<20), metaHash)); err != nil {
				return fail(fmt.Errorf("%w: reading %s: %w", ErrCorrupt, metaName, err))
			}
		case stateName:
			if _, err := io.Copy(io.MultiWriter(f, stateHash), tr); err != nil {
				return fail(fmt.Errorf("%w: reading %s: %w", ErrCorrupt, stateName, err))
			}
		case sumsName:
			if sums, err = parseSums(io.LimitReader(tr, 1<<16)); err != nil {
				return fail(err)
			}
		default:
			return fail(fmt.Errorf("%w: unexpected file %q", ErrCorrupt, h.Name))
		}
	}
	for _, name := range []string{metaName, stateName, sumsName} {
		if !seen[name] {
			return fail(fmt.Errorf("%w: %s is missing", ErrCorrupt, name))
		}
	}
	for name, h := range map[string]hash.Hash{metaName: metaHash, stateName: stateHash} {
		if got := hex.EncodeToString(h.Sum(nil)); sums[name] != got {
			return fail(fmt.Errorf("%w: %s does not match its checksum", ErrCorrupt, name))
		}
	}
	var meta raft.SnapshotMeta
	if err := json.Unmarshal(metaJSON, &meta); err != nil {
		return fail(fmt.Errorf("%w: decoding %s: %w", ErrCorrupt, metaName, err))
	}
	if size, err := f.Seek(0, io.SeekCurrent); err != nil || size != meta.Size {
		return fail(fmt.Errorf("%w: state is %d bytes, its meta says %d", ErrCorrupt, size, meta.Size))
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fail(fmt.Errorf("spooling snapshot: %w", err))
	}
	return &meta, state, nil
}

// parseSums reads sha256sum's "<hex>  <name>" lines.
func parseSums(r io.Reader) (map[string]string, error) {
	sums := make(map[string]string)
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		sum, name, ok := strings.Cut(line, "  ")
		if !ok {
			return nil, fmt.Errorf("%w: bad %s line %q", ErrCorrupt, sumsName, line)
		}
		sums[name] = sum
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: reading %s: %w", ErrCorrupt, sumsName, err)
	}
	return sums, nil
}

// tempFile removes itself when closed.
type tempFile struct {
	*os.File
}

// Close closes and removes the file.
func (t *tempFile) Close() error {
	err := t.File.Close()
	if rmErr := os.Remove(t.Name()); rmErr != nil && !errors.Is(rmErr, os.ErrNotExist) {
		err = errors.Join(err, rmErr)
	}
	return err
}
