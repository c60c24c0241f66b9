// Package allocdir lays out the directory tree an allocation's tasks run
// in:
//
//	<root>/<alloc-id>/
//	    alloc/          shared by every task of the group (NOMAD_ALLOC_DIR)
//	        logs/       <task>.stdout.<n> and <task>.stderr.<n>
//	        data/       scratch data that outlives task restarts
//	        tmp/        shared temporary files
//	    <task>/         one per task
//	        local/      the task's own files (NOMAD_TASK_DIR)
//	        secrets/    credentials, readable by the task's user only (NOMAD_SECRETS_DIR)
//	        tmp/        the task's temporary files
//
// The layout mirrors Nomad's so that job files and the logs API written
// against Nomad find files where they expect them.
package allocdir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Names of the directories inside an alloc directory.
const (
	SharedAllocName = "alloc"
	LogDirName      = "logs"
	SharedDataName  = "data"
	TmpDirName      = "tmp"
	TaskLocal       = "local"
	TaskSecrets     = "secrets"
)

// Permissions. Shared and temporary directories are world-writable with
// the sticky bit because tasks of one group may run as different users;
// secrets are private to the task's user.
const (
	sharedPerms  os.FileMode = os.ModeSticky | 0o777
	logDirPerms  os.FileMode = 0o755
	allocPerms   os.FileMode = 0o755
	localPerms   os.FileMode = 0o755
	secretsPerms os.FileMode = 0o700
)

// AllocDir is the directory tree of one allocation.
type AllocDir struct {
	// Dir is the root of the allocation: <root>/<alloc-id>.
	Dir string
	// SharedDir is Dir/alloc, exposed to tasks as NOMAD_ALLOC_DIR.
	SharedDir string
	// LogDir is Dir/alloc/logs, where task output is rotated.
	LogDir string
	// DataDir is Dir/alloc/data.
	DataDir string
	// TmpDir is Dir/alloc/tmp.
	TmpDir string
}

// New describes the alloc directory of allocID under root without
// touching the disk. It rejects IDs that would escape root.
func New(root, allocID string) (*AllocDir, error) {
	if err := checkName(allocID); err != nil {
		return nil, fmt.Errorf("alloc %q: %w", allocID, err)
	}
	dir := filepath.Join(root, allocID)
	shared := filepath.Join(dir, SharedAllocName)
	return &AllocDir{
		Dir:       dir,
		SharedDir: shared,
		LogDir:    filepath.Join(shared, LogDirName),
		DataDir:   filepath.Join(shared, SharedDataName),
		TmpDir:    filepath.Join(shared, TmpDirName),
	}, nil
}

// Build creates the shared part of the tree. It is idempotent, so a
// restarted client can call it on an existing allocation.
func (d *AllocDir) Build() error {
	dirs := []struct {
		path string
		perm os.FileMode
	}{
		{d.Dir, allocPerms},
		{d.SharedDir, allocPerms},
		{d.LogDir, logDirPerms},
		{d.DataDir, sharedPerms},
		{d.TmpDir, sharedPerms},
	}
	for _, x := range dirs {
		if err := mkdirPerm(x.path, x.perm); err != nil {
			return fmt.Errorf("alloc dir %s: %w", d.Dir, err)
		}
	}
	return nil
}

// Destroy removes the whole tree. Removing a tree that does not exist is
// not an error.
func (d *AllocDir) Destroy() error {
	if err := os.RemoveAll(d.Dir); err != nil {
		return fmt.Errorf("removing alloc dir %s: %w", d.Dir, err)
	}
	return nil
}

// TaskDir describes the directory of one task without touching the disk.
func (d *AllocDir) TaskDir(task string) (*TaskDir, error) {
	if err := checkName(task); err != nil {
		return nil, fmt.Errorf("task %q: %w", task, err)
	}
	if task == SharedAllocName {
		return nil, fmt.Errorf("task %q: name collides with the shared %q directory", task, SharedAllocName)
	}
	dir := filepath.Join(d.Dir, task)
	return &TaskDir{
		Name:       task,
		Dir:        dir,
		LocalDir:   filepath.Join(dir, TaskLocal),
		SecretsDir: filepath.Join(dir, TaskSecrets),
		TmpDir:     filepath.Join(dir, TmpDirName),
		SharedDir:  d.SharedDir,
		LogDir:     d.LogDir,
	}, nil
}

// TaskDir is the directory tree of one task plus the shared paths it sees.
type TaskDir struct {
	Name       string
	Dir        string
	LocalDir   string
	SecretsDir string
	TmpDir     string
	SharedDir  string
	LogDir     string
}

// Owner is the user a task runs as; its directories are handed to it.
// A nil Owner keeps the client's own user.
type Owner struct {
	UID int
	GID int
}

// Build creates the task's directories. When owner is set (the client
// runs as root and the task as someone else) local/ and secrets/ are
// chowned so the task can use them. Idempotent.
func (t *TaskDir) Build(owner *Owner) error {
	dirs := []struct {
		path  string
		perm  os.FileMode
		owned bool
	}{
		{t.Dir, allocPerms, false},
		{t.LocalDir, localPerms, true},
		{t.SecretsDir, secretsPerms, true},
		{t.TmpDir, sharedPerms, false},
	}
	for _, x := range dirs {
		if err := mkdirPerm(x.path, x.perm); err != nil {
			return fmt.Errorf("task dir %s: %w", t.Dir, err)
		}
		if owner != nil && x.owned {
			if err := os.Chown(x.path, owner.UID, owner.GID); err != nil {
				return fmt.Errorf("task dir %s: giving %s to uid %d: %w", t.Dir, x.path, owner.UID, err)
			}
		}
	}
	return nil
}

// LogPath is the path of the n-th rotated file of a task's stream
// ("stdout" or "stderr"): alloc/logs/<task>.<stream>.<n>.
func (t *TaskDir) LogPath(stream string, n int) string {
	return filepath.Join(t.LogDir, fmt.Sprintf("%s.%s.%d", t.Name, stream, n))
}

// mkdirPerm creates dir and sets its mode exactly: MkdirAll is subject to
// the umask, which would drop the sticky and world-write bits.
func mkdirPerm(dir string, perm os.FileMode) error {
	if err := os.MkdirAll(dir, perm); err != nil {
		return err
	}
	return os.Chmod(dir, perm)
}

var errBadName = errors.New("must be a non-empty single path element without '/', '\\' or \"..\"")

// checkName rejects names that would make a path leave its parent.
func checkName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) || strings.ContainsRune(name, 0) {
		return errBadName
	}
	return nil
}
