package allocdir

import (
	"os"
	"path/filepath"
	"testing"
)

func TestAllocDirLayout(t *testing.T) {
	root := t.TempDir()
	ad, err := New(root, "a1")
	if err != nil {
		t.Fatal(err)
	}
	if err := ad.Build(); err != nil {
		t.Fatal(err)
	}
	// Build twice: a restarted client rebuilds existing allocations.
	if err := ad.Build(); err != nil {
		t.Fatalf("second Build: %v", err)
	}
	td, err := ad.TaskDir("web")
	if err != nil {
		t.Fatal(err)
	}
	if err := td.Build(nil); err != nil {
		t.Fatal(err)
	}

	want := []struct {
		rel  string
		perm os.FileMode
	}{
		{"a1", 0o755},
		{"a1/alloc", 0o755},
		{"a1/alloc/logs", 0o755},
		{"a1/alloc/data", os.ModeSticky | 0o777},
		{"a1/alloc/tmp", os.ModeSticky | 0o777},
		{"a1/web", 0o755},
		{"a1/web/local", 0o755},
		{"a1/web/secrets", 0o700},
		{"a1/web/tmp", os.ModeSticky | 0o777},
	}
	for _, w := range want {
		fi, err := os.Stat(filepath.Join(root, w.rel))
		if err != nil {
			t.Errorf("%s: %v", w.rel, err)
			continue
		}
		if !fi.IsDir() {
			t.Errorf("%s is not a directory", w.rel)
		}
		got := fi.Mode() & (os.ModePerm | os.ModeSticky)
		if got != w.perm {
			t.Errorf("%s: mode %v, want %v", w.rel, got, w.perm)
		}
	}
	if got, want := td.LogPath("stdout", 3), filepath.Join(root, "a1/alloc/logs/web.stdout.3"); got != want {
		t.Errorf("LogPath = %s, want %s", got, want)
	}
	if td.SharedDir != ad.SharedDir || td.LogDir != ad.LogDir {
		t.Errorf("task dir shared paths %s %s differ from the alloc's", td.SharedDir, td.LogDir)
	}

	if err := ad.Destroy(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(ad.Dir); !os.IsNotExist(err) {
		t.Fatalf("alloc dir still exists after Destroy: %v", err)
	}
	if err := ad.Destroy(); err != nil {
		t.Fatalf("Destroy of a missing dir: %v", err)
	}
}

func TestBadNames(t *testing.T) {
	for _, id := range []string{"", ".", "..", "a/b", `a\b`} {
		if _, err := New(t.TempDir(), id); err == nil {
			t.Errorf("New(%q) accepted a bad alloc ID", id)
		}
	}
	ad, err := New(t.TempDir(), "a1")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"", "..", "x/../../y", "alloc"} {
		if _, err := ad.TaskDir(name); err == nil {
			t.Errorf("TaskDir(%q) accepted a bad task name", name)
		}
	}
}

func TestTaskDirOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chown to another user needs root")
	}
	ad, err := New(t.TempDir(), "a1")
	if err != nil {
		t.Fatal(err)
	}
	if err := ad.Build(); err != nil {
		t.Fatal(err)
	}
	td, err := ad.TaskDir("t")
	if err != nil {
		t.Fatal(err)
	}
	if err := td.Build(&Owner{UID: 65534, GID: 65534}); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{td.LocalDir, td.SecretsDir} {
		uid, gid := ownerOf(t, dir)
		if uid != 65534 || gid != 65534 {
			t.Errorf("%s owned by %d:%d, want 65534:65534", dir, uid, gid)
		}
	}
}
