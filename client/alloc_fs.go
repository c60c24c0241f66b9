package client

import (
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/opennomad/nomad/client/allocdir"
)

// AllocFileInfo describes a file in an allocation directory, as the
// /v1/client/fs endpoints return it.
type AllocFileInfo struct {
	Name     string
	IsDir    bool
	Size     int64
	FileMode string
	ModTime  time.Time
	// ContentType is sniffed from the first bytes of a regular file; Stat
	// fills it, listings do not.
	ContentType string `json:",omitempty"`
}

// allocPath resolves a path given relative to an allocation directory
// ("/", "alloc/logs", "web/local/app.conf") to a host path. A path that
// leaves the directory, lexically or through a symbolic link, is
// refused, and so is anything under a task's secrets/ directory: those
// hold credentials meant for the task alone.
func (c *Client) allocPath(allocID, p string) (string, error) {
	ar, err := c.runner(allocID)
	if err != nil {
		return "", err
	}
	root := ar.AllocDir().Dir
	full := filepath.Join(root, p)
	if full != root && !strings.HasPrefix(full, root+string(filepath.Separator)) {
		return "", invalid("path %q escapes the allocation directory", p)
	}
	inSecrets := func(root, full string) bool {
		rel, _ := filepath.Rel(root, full)
		parts := strings.Split(rel, string(filepath.Separator))
		return len(parts) >= 2 && parts[1] == allocdir.TaskSecrets && ar.TaskRunner(parts[0]) != nil
	}
	secretsErr := forbidden("path %q: reading a task's secrets directory is not allowed", p)
	if inSecrets(root, full) {
		return "", secretsErr
	}
	// A task may plant symbolic links; follow them before trusting the
	// path. A missing file is reported by the caller's own access.
	resolved, err := filepath.EvalSymlinks(full)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", notFound("path %q: no such file or directory", p)
		}
		return "", err
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", notFound("alloc %q: its directory is gone", allocID)
	}
	if resolved != realRoot && !strings.HasPrefix(resolved, realRoot+string(filepath.Separator)) {
		return "", invalid("path %q escapes the allocation directory", p)
	}
	if inSecrets(realRoot, resolved) {
		return "", secretsErr
	}
	return resolved, nil
}

// ListDir lists a directory of an allocation, by name.
func (c *Client) ListDir(allocID, path string) ([]*AllocFileInfo, error) {
	full, err := c.allocPath(allocID, path)
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(full)
	if err != nil {
		return nil, fsError(path, err)
	}
	out := make([]*AllocFileInfo, 0, len(entries))
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			// Removed between the listing and now.
			continue
		}
		out = append(out, fileInfo(info))
	}
	slices.SortFunc(out, func(a, b *AllocFileInfo) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// StatFile describes one file of an allocation.
func (c *Client) StatFile(allocID, path string) (*AllocFileInfo, error) {
	full, err := c.allocPath(allocID, path)
	if err != nil {
		return nil, err
	}
	info, err := os.Stat(full)
	if err != nil {
		return nil, fsError(path, err)
	}
	out := fileInfo(info)
	if info.Mode().IsRegular() {
		if f, err := os.Open(full); err == nil {
			head := make([]byte, 512)
			n, _ := io.ReadFull(f, head)
			f.Close()
			out.ContentType = http.DetectContentType(head[:n])
		}
	}
	return out, nil
}

// ReadFile opens a file of an allocation at offset, limited to limit
// bytes (no limit when limit <= 0). The caller closes it.
func (c *Client) ReadFile(allocID, path string, offset, limit int64) (io.ReadCloser, error) {
	if offset < 0 {
		return nil, invalid("offset must be >= 0, got %d", offset)
	}
	full, err := c.allocPath(allocID, path)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(full)
	if err != nil {
		return nil, fsError(path, err)
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fsError(path, err)
	}
	if info.IsDir() {
		f.Close()
		return nil, invalid("file %q is a directory", path)
	}
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		f.Close()
		return nil, fsError(path, err)
	}
	if limit <= 0 {
		return f, nil
	}
	return limitedFile{Reader: io.LimitReader(f, limit), Closer: f}, nil
}

// limitedFile is a file read up to a limit.
type limitedFile struct {
	io.Reader
	io.Closer
}

func fileInfo(info fs.FileInfo) *AllocFileInfo {
	return &AllocFileInfo{
		Name:     info.Name(),
		IsDir:    info.IsDir(),
		Size:     info.Size(),
		FileMode: info.Mode().String(),
		ModTime:  info.ModTime(),
	}
}

// fsError turns a file system error into a refusal of the right kind.
func fsError(path string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return notFound("path %q: no such file or directory", path)
	case errors.Is(err, fs.ErrPermission):
		return forbidden("path %q: permission denied", path)
	}
	return err
}
