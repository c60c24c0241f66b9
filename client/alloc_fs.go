package client

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
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
		var errno syscall.Errno
		var pathErr *fs.PathError
		if !errors.As(err, &errno) && !errors.As(err, &pathErr) {
			// EvalSymlinks's own refusal: more links than it follows.
			return "", invalid("path %q: too many levels of symbolic links", p)
		}
		return "", fsError(p, err)
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

// ReadFile opens a regular file of an allocation at offset, limited to
// limit bytes (no limit when limit is 0). The caller closes it. An offset
// past the end of the file is refused: it is a position that does not
// exist, and on some file systems seeking to it fails anyway.
func (c *Client) ReadFile(allocID, path string, offset, limit int64) (io.ReadCloser, error) {
	if offset < 0 {
		return nil, invalid("offset must be >= 0, got %d", offset)
	}
	if limit < 0 {
		return nil, invalid("limit must be >= 0, got %d", limit)
	}
	full, err := c.allocPath(allocID, path)
	if err != nil {
		return nil, err
	}
	// Judged before opening: opening a pipe a task made blocks until a
	// writer comes, and a device could be read without end.
	info, err := os.Stat(full)
	if err != nil {
		return nil, fsError(path, err)
	}
	if info.IsDir() {
		return nil, invalid("file %q is a directory", path)
	}
	if !info.Mode().IsRegular() {
		return nil, invalid("file %q is not a regular file", path)
	}
	f, err := os.Open(full)
	if err != nil {
		return nil, fsError(path, err)
	}
	if info, err = f.Stat(); err != nil {
		f.Close()
		return nil, fsError(path, err)
	}
	if offset > info.Size() {
		f.Close()
		return nil, invalid("offset %d is beyond the end of file %q (%d bytes)", offset, path, info.Size())
	}
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		f.Close()
		return nil, fsError(path, err)
	}
	if limit == 0 {
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

// fsError turns a file system error about path (relative to the
// allocation directory) into a refusal of the right kind. The error the
// operating system gave names the host path, which tells a caller where
// the client keeps its data; the error returned names path instead, and
// still matches the system's error number with errors.Is.
func fsError(path string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return notFound("path %q: no such file or directory", path)
	case errors.Is(err, fs.ErrPermission):
		return forbidden("path %q: permission denied", path)
	}
	op, cause := "access", error(errUnknownFS)
	var pathErr *fs.PathError
	var linkErr *os.LinkError
	var sysErr *os.SyscallError
	var errno syscall.Errno
	switch {
	case errors.As(err, &pathErr):
		op, cause = pathErr.Op, pathErr.Err
	case errors.As(err, &linkErr):
		op, cause = linkErr.Op, linkErr.Err
	case errors.As(err, &sysErr):
		op, cause = sysErr.Syscall, sysErr.Err
	case errors.As(err, &errno):
		// filepath.EvalSymlinks returns some errors bare, without a path.
		cause = errno
	}
	msg := fmt.Sprintf("path %q: %s: %v", path, op, cause)
	for _, e := range pathMistakes {
		if errors.Is(cause, e) {
			return &opError{kind: ErrInvalid, msg: msg, cause: cause}
		}
	}
	return &allocPathError{msg: msg, cause: cause}
}

// pathMistakes are the system errors a requested path causes (a file
// used as a directory, a link loop, a name too long) rather than a
// failure of the client.
var pathMistakes = []error{syscall.ENOTDIR, syscall.EISDIR, syscall.ELOOP, syscall.ENAMETOOLONG, syscall.EINVAL}

// errUnknownFS stands for a file system error of a form fsError does not
// know: its text may hold the host path, so it is not passed on.
var errUnknownFS = errors.New("file system error")

// allocPathError is a failed file system operation in an allocation
// directory that is not the caller's doing.
type allocPathError struct {
	msg   string
	cause error
}

func (e *allocPathError) Error() string { return e.msg }
func (e *allocPathError) Unwrap() error { return e.cause }
