package client

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

// runningMockAlloc starts a client with one running mock_driver alloc
// whose task "web" printed hello to stdout.
func runningMockAlloc(t *testing.T) (*Client, *structs.Allocation) {
	t.Helper()
	srv := testServer(t, nil)
	c := testClient(t, testClientConfig(t, local(srv)))
	eventually(t, "ready", func() bool { return nodeStatus(t, srv, c.NodeID()) == structs.NodeStatusReady })
	job := registerJob(t, srv, mockDriverJob(1, map[string]interface{}{"stdout_string": "hello\n"}))
	a := place(t, srv, job, c.NodeID(), 1)[0]
	eventually(t, "running", clientStatusIs(t, srv, a.ID, structs.AllocClientStatusRunning))
	return c, a
}

func names(infos []*AllocFileInfo) []string {
	var out []string
	for _, i := range infos {
		out = append(out, i.Name)
	}
	return out
}

func TestAllocFS_ListStatRead(t *testing.T) {
	c, a := runningMockAlloc(t)

	root, err := c.ListDir(a.ID, "/")
	must.NoError(t, err)
	must.Eq(t, []string{"alloc", "web"}, names(root))
	must.True(t, root[0].IsDir)
	must.StrHasPrefix(t, "d", root[0].FileMode)

	logs, err := c.ListDir(a.ID, "alloc/logs")
	must.NoError(t, err)
	must.SliceContains(t, names(logs), "web.stdout.0")

	info, err := c.StatFile(a.ID, "alloc/logs/web.stdout.0")
	must.NoError(t, err)
	must.Eq(t, int64(6), info.Size)
	must.Eq(t, "text/plain; charset=utf-8", info.ContentType)

	for _, tc := range []struct {
		offset, limit int64
		want          string
	}{{0, 0, "hello\n"}, {1, 0, "ello\n"}, {1, 3, "ell"}, {6, 0, ""}, {6, 5, ""}} {
		r, err := c.ReadFile(a.ID, "/alloc/logs/web.stdout.0", tc.offset, tc.limit)
		must.NoError(t, err)
		b, err := io.ReadAll(r)
		must.NoError(t, err)
		r.Close()
		must.Eq(t, tc.want, string(b))
	}
}

func TestAllocFS_Confinement(t *testing.T) {
	c, a := runningMockAlloc(t)
	dir := c.allocs.Runner(a.ID).AllocDir().Dir
	must.NoError(t, os.WriteFile(filepath.Join(dir, "web", "secrets", "token"), []byte("s3cret"), 0o600))
	must.NoError(t, os.Symlink("/etc", filepath.Join(dir, "alloc", "data", "etc")))
	must.NoError(t, os.Symlink("../../web/secrets", filepath.Join(dir, "alloc", "data", "peek")))
	must.NoError(t, os.Symlink("../logs", filepath.Join(dir, "alloc", "data", "logs")))

	cases := []struct {
		path string
		kind error
	}{
		{"../", ErrInvalid},
		{"../../../../etc/passwd", ErrInvalid},
		{"alloc/../../x", ErrInvalid},
		{"alloc/data/etc/passwd", ErrInvalid}, // through a planted link
		{"alloc/data/etc", ErrInvalid},
		{"web/secrets", ErrForbidden},
		{"web/secrets/token", ErrForbidden},
		{"alloc/data/peek/token", ErrForbidden}, // a link into secrets
		{"alloc/missing", ErrNotFound},
	}
	for _, tc := range cases {
		_, err := c.ReadFile(a.ID, tc.path, 0, 0)
		must.True(t, errors.Is(err, tc.kind), must.Sprintf("ReadFile(%q): %v, want %v", tc.path, err, tc.kind))
		_, err = c.ListDir(a.ID, tc.path)
		must.True(t, errors.Is(err, tc.kind), must.Sprintf("ListDir(%q): %v, want %v", tc.path, err, tc.kind))
	}
	// A link that stays inside the directory is fine.
	infos, err := c.ListDir(a.ID, "alloc/data/logs")
	must.NoError(t, err)
	must.True(t, slices.Contains(names(infos), "web.stdout.0"))
	// Lexical ".." inside the directory is fine too.
	_, err = c.StatFile(a.ID, "web/../alloc/logs/web.stdout.0")
	must.NoError(t, err)

	_, err = c.ReadFile(a.ID, "alloc", 0, 0)
	must.ErrorIs(t, err, ErrInvalid)
	must.EqError(t, err, `file "alloc" is a directory`)
	_, err = c.ReadFile(a.ID, "alloc/logs/web.stdout.0", -1, 0)
	must.ErrorIs(t, err, ErrInvalid)

	_, err = c.ListDir("no-such-alloc", "/")
	must.ErrorIs(t, err, ErrNotFound)
	must.ErrorIs(t, err, structs.ErrUnknownAlloc)
}

func TestClient_LogsOfATask(t *testing.T) {
	c, a := runningMockAlloc(t)
	r, err := c.Logs(a.ID, LogRequest{Task: "web", Type: LogStdout})
	must.NoError(t, err)
	b, err := io.ReadAll(r)
	must.NoError(t, err)
	must.Eq(t, "hello\n", string(b))
	must.NoError(t, r.Close())

	cases := []struct {
		req  LogRequest
		kind error
		msg  string
	}{
		{LogRequest{Type: LogStdout}, ErrInvalid, "must provide task name"},
		{LogRequest{Task: "web", Type: "stdin"}, ErrInvalid, "must provide log type (stdout/stderr)"},
		{LogRequest{Task: "web", Type: LogStdout, Origin: "middle"}, ErrInvalid, "origin must be start or end"},
		{LogRequest{Task: "web", Type: LogStdout, Offset: -1}, ErrInvalid, "offset must be >= 0, got -1"},
		{LogRequest{Task: "db", Type: LogStdout}, ErrInvalid, `unknown task name "db"`},
	}
	for _, tc := range cases {
		_, err := c.Logs(a.ID, tc.req)
		must.ErrorIs(t, err, tc.kind)
		must.EqError(t, err, tc.msg)
	}
	_, err = c.Logs("nope", LogRequest{Task: "web", Type: LogStdout})
	must.ErrorIs(t, err, ErrNotFound)
}

// TestAllocFS_RefusalsNameNoHostPath covers requests that the file
// system itself refuses, or that would read past a file: each is a
// refusal of the caller's kind, and none names where the allocation
// directory is on the host.
func TestAllocFS_RefusalsNameNoHostPath(t *testing.T) {
	c, a := runningMockAlloc(t)
	dir := c.allocs.Runner(a.ID).AllocDir().Dir
	must.NoError(t, os.Symlink("loop", filepath.Join(dir, "alloc", "data", "loop")))
	const log = "alloc/logs/web.stdout.0" // 6 bytes
	long := "alloc/" + strings.Repeat("x", 300)

	read := func(p string, off, lim int64) func() error {
		return func() error { _, err := c.ReadFile(a.ID, p, off, lim); return err }
	}
	list := func(p string) func() error {
		return func() error { _, err := c.ListDir(a.ID, p); return err }
	}
	stat := func(p string) func() error {
		return func() error { _, err := c.StatFile(a.ID, p); return err }
	}
	cases := []struct {
		name string
		call func() error
		kind error
		msg  string
	}{
		{"offset at int64 max", read(log, math.MaxInt64, 10), ErrInvalid,
			`offset 9223372036854775807 is beyond the end of file "alloc/logs/web.stdout.0" (6 bytes)`},
		{"offset past the end", read(log, 7, 0), ErrInvalid, `offset 7 is beyond the end`},
		{"negative offset", read(log, -1, 0), ErrInvalid, "offset must be >= 0, got -1"},
		{"negative limit", read(log, 0, -1), ErrInvalid, "limit must be >= 0, got -1"},
		{"read through a file", read(log+"/x", 0, 0), ErrInvalid, `path "alloc/logs/web.stdout.0/x"`},
		{"list through a file", list(log + "/x"), ErrInvalid, `path "alloc/logs/web.stdout.0/x"`},
		{"stat through a file", stat(log + "/x"), ErrInvalid, `path "alloc/logs/web.stdout.0/x"`},
		{"list a file", list(log), ErrInvalid, `path "alloc/logs/web.stdout.0"`},
		{"link loop", read("alloc/data/loop", 0, 0), ErrInvalid, `path "alloc/data/loop": too many levels of symbolic links`},
		{"name too long", stat(long), ErrInvalid, `path "` + long + `"`},
		{"traversal", read("../../../etc/passwd", 0, 0), ErrInvalid, "escapes the allocation directory"},
		{"missing", stat("alloc/nothing"), ErrNotFound, `path "alloc/nothing": no such file or directory`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			must.ErrorIs(t, err, tc.kind)
			must.StrContains(t, err.Error(), tc.msg)
			must.StrNotContains(t, err.Error(), dir)
		})
	}
}

// TestFSError rewrites each form of file system error to name the path
// relative to the allocation directory, keeping its kind and cause.
func TestFSError(t *testing.T) {
	const host = "/var/lib/nomad/alloc/0b9c/alloc/logs/x"
	cases := []struct {
		name  string
		err   error
		kind  error // nil: none of the refusal kinds, a server-side failure
		cause error
		msg   string
	}{
		{"missing", &fs.PathError{Op: "open", Path: host, Err: syscall.ENOENT}, ErrNotFound, nil,
			`path "alloc/logs/x": no such file or directory`},
		{"denied", &fs.PathError{Op: "open", Path: host, Err: syscall.EACCES}, ErrForbidden, nil,
			`path "alloc/logs/x": permission denied`},
		{"seek", &fs.PathError{Op: "seek", Path: host, Err: syscall.EINVAL}, ErrInvalid, syscall.EINVAL,
			`path "alloc/logs/x": seek: invalid argument`},
		{"not a directory", &fs.PathError{Op: "lstat", Path: host, Err: syscall.ENOTDIR}, ErrInvalid, syscall.ENOTDIR,
			`path "alloc/logs/x": lstat: not a directory`},
		{"i/o", &fs.PathError{Op: "read", Path: host, Err: syscall.EIO}, nil, syscall.EIO,
			`path "alloc/logs/x": read: input/output error`},
		{"link", &os.LinkError{Op: "symlink", Old: host, New: host + "2", Err: syscall.EIO}, nil, syscall.EIO,
			`path "alloc/logs/x": symlink: input/output error`},
		{"bare errno", syscall.ENOTDIR, ErrInvalid, syscall.ENOTDIR, `path "alloc/logs/x": access: not a directory`},
		{"syscall", os.NewSyscallError("getdents64", syscall.EIO), nil, syscall.EIO,
			`path "alloc/logs/x": getdents64: input/output error`},
		{"unknown form", fmt.Errorf("reading %s: it broke", host), nil, errUnknownFS,
			`path "alloc/logs/x": access: file system error`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := fsError("alloc/logs/x", tc.err)
			must.EqError(t, err, tc.msg)
			for _, kind := range []error{ErrNotFound, ErrInvalid, ErrForbidden} {
				must.Eq(t, kind == tc.kind, errors.Is(err, kind), must.Sprint(kind))
			}
			if tc.cause != nil {
				must.ErrorIs(t, err, tc.cause)
			}
		})
	}
}
