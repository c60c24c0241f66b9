package logmon

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// files returns name -> content of every file in dir.
func files(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(b)
	}
	return out
}

func TestRotatorLimits(t *testing.T) {
	cases := []struct {
		name     string
		maxFiles int
		maxSize  int64
		writes   []string
		want     map[string]string
	}{
		{
			name:     "fits in one file",
			maxFiles: 3, maxSize: 10,
			writes: []string{"abc", "def"},
			want:   map[string]string{"t.stdout.0": "abcdef"},
		},
		{
			// 10 bytes per file: "0123456789" fills .0, "ab" spills into .1.
			name:     "one write split at the size limit",
			maxFiles: 3, maxSize: 10,
			writes: []string{"0123456789ab"},
			want:   map[string]string{"t.stdout.0": "0123456789", "t.stdout.1": "ab"},
		},
		{
			// 4-byte files, 2 kept: 14 bytes make .0 .1 .2 (full) and .3
			// ("yz"); .0 and .1 are purged.
			name:     "oldest files purged beyond max_files",
			maxFiles: 2, maxSize: 4,
			writes: []string{"abcd", "efgh", "ijkl", "yz"},
			want:   map[string]string{"t.stdout.2": "ijkl", "t.stdout.3": "yz"},
		},
		{
			name:     "single file kept",
			maxFiles: 1, maxSize: 3,
			writes: []string{"abcdefg"},
			want:   map[string]string{"t.stdout.2": "g"},
		},
		{
			// A file is exactly full after a write; the next byte opens
			// the next file rather than overflowing.
			name:     "exact fill then next file",
			maxFiles: 5, maxSize: 3,
			writes: []string{"abc", "d"},
			want:   map[string]string{"t.stdout.0": "abc", "t.stdout.1": "d"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			r, err := NewFileRotator(dir, "t.stdout", tc.maxFiles, tc.maxSize)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.writes {
				n, err := r.Write([]byte(w))
				if err != nil || n != len(w) {
					t.Fatalf("Write(%q) = %d, %v", w, n, err)
				}
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			got := files(t, dir)
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("files = %v, want %v", got, tc.want)
			}
		})
	}
}

// A reopened rotator (task or client restart) continues the newest file
// and keeps numbering upward so readers see output in order.
func TestRotatorResumesNewestFile(t *testing.T) {
	dir := t.TempDir()
	r, err := NewFileRotator(dir, "t.stderr", 3, 5)
	if err != nil {
		t.Fatal(err)
	}
	r.Write([]byte("12345678"))
	r.Close()

	r, err = NewFileRotator(dir, "t.stderr", 3, 5)
	if err != nil {
		t.Fatal(err)
	}
	if r.CurrentIndex() != 1 {
		t.Fatalf("resumed at %d, want 1", r.CurrentIndex())
	}
	r.Write([]byte("90abcdef"))
	r.Close()
	want := map[string]string{"t.stderr.0": "12345", "t.stderr.1": "67890", "t.stderr.2": "abcde", "t.stderr.3": "f"}
	// max_files 3: .0 is purged once .3 exists.
	delete(want, "t.stderr.0")
	if got := files(t, dir); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("files = %v, want %v", got, want)
	}

	// Reading the files in index order yields the stream in order.
	entries, _ := os.ReadDir(dir)
	var all bytes.Buffer
	for _, n := range LogIndexes(entries, "t.stderr") {
		b, _ := os.ReadFile(filepath.Join(dir, fmt.Sprintf("t.stderr.%d", n)))
		all.Write(b)
	}
	if all.String() != "67890abcdef" {
		t.Fatalf("concatenated = %q", all.String())
	}
}

// A full newest file found at open is not appended to.
func TestRotatorOpensPastFullFile(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "t.stdout.4"), []byte("xxxx"), 0o644)
	r, err := NewFileRotator(dir, "t.stdout", 2, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.CurrentIndex() != 5 {
		t.Fatalf("index = %d, want 5", r.CurrentIndex())
	}
}

func TestLogIndexesIgnoresOtherFiles(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"web.stdout.10", "web.stdout.2", "web.stdout.x", "web.stderr.1", "api.stdout.0", "web.stdout.-1"} {
		os.WriteFile(filepath.Join(dir, n), nil, 0o644)
	}
	entries, _ := os.ReadDir(dir)
	if got := LogIndexes(entries, "web.stdout"); !slices.Equal(got, []int{2, 10}) {
		t.Fatalf("LogIndexes = %v, want [2 10]", got)
	}
}

func TestRotatorRejectsBadLimits(t *testing.T) {
	for _, tc := range []struct {
		files int
		size  int64
		base  string
	}{{0, 10, "a"}, {1, 0, "a"}, {1, 1, ""}, {1, 1, "a/b"}} {
		if _, err := NewFileRotator(t.TempDir(), tc.base, tc.files, tc.size); err == nil {
			t.Errorf("NewFileRotator(%d, %d, %q) accepted bad input", tc.files, tc.size, tc.base)
		}
	}
}

func TestRotatorWriteAfterClose(t *testing.T) {
	r, err := NewFileRotator(t.TempDir(), "t.stdout", 1, 10)
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	if _, err := r.Write([]byte("x")); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Fatalf("Write after Close = %v", err)
	}
}

func BenchmarkRotatorWrite(b *testing.B) {
	r, err := NewFileRotator(b.TempDir(), "t.stdout", 3, 1<<20)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	line := bytes.Repeat([]byte("x"), 4095)
	line = append(line, '\n')
	b.SetBytes(int64(len(line)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := r.Write(line); err != nil {
			b.Fatal(err)
		}
	}
}
