package client

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/client/logmon"
)

func TestStartPosition(t *testing.T) {
	// Three files of 10, 10 and 5 bytes: 25 bytes in all.
	files := []logFile{{idx: 4, size: 10}, {idx: 5, size: 10}, {idx: 6, size: 5}}
	cases := []struct {
		origin  string
		offset  int64
		wantIdx int
		wantOff int64
	}{
		{OriginStart, 0, 4, 0},
		{OriginStart, 7, 4, 7},
		{OriginStart, 10, 4, 10}, // end of the first file, not the start of the next
		{OriginStart, 12, 5, 2},  // 12 - 10
		{OriginStart, 23, 6, 3},  // 23 - 10 - 10
		{OriginStart, 99, 6, 5},  // past the end: the end
		{OriginEnd, 0, 6, 5},
		{OriginEnd, 3, 6, 2},  // 5 - 3
		{OriginEnd, 12, 5, 3}, // 5 - 12 = -7; +10 in file 5
		{OriginEnd, 25, 4, 0},
		{OriginEnd, 99, 4, 0}, // before the start: the start
	}
	for _, tc := range cases {
		idx, off := startPosition(files, tc.origin, tc.offset)
		if idx != tc.wantIdx || off != tc.wantOff {
			t.Errorf("%s+%d: got file %d offset %d, want %d %d", tc.origin, tc.offset, idx, off, tc.wantIdx, tc.wantOff)
		}
	}
}

// writeLog writes data through a rotator of files of size bytes, keeping
// keep files, as a task's output would be written.
func writeLog(t *testing.T, dir string, keep int, size int64, data string) *logmon.FileRotator {
	t.Helper()
	r, err := logmon.NewFileRotator(dir, "web.stdout", keep, size)
	must.NoError(t, err)
	_, err = r.Write([]byte(data))
	must.NoError(t, err)
	return r
}

// readAll collects frames until EOF.
func readAll(t *testing.T, r *LogReader) []*StreamFrame {
	t.Helper()
	var out []*StreamFrame
	for {
		f, err := r.Next(context.Background())
		if err == io.EOF {
			return out
		}
		must.NoError(t, err)
		out = append(out, f)
	}
}

func dataOf(frames []*StreamFrame) string {
	var b strings.Builder
	for _, f := range frames {
		b.Write(f.Data)
	}
	return b.String()
}

const alphabet = "abcdefghijklmnopqrstuvwxy" // 25 bytes

func TestLogReader_ReadsAcrossRotatedFiles(t *testing.T) {
	dir := t.TempDir()
	writeLog(t, dir, 5, 10, alphabet).Close()

	r, err := openLog(dir, LogRequest{Task: "web", Type: LogStdout})
	must.NoError(t, err)
	defer r.Close()
	frames := readAll(t, r)
	must.Eq(t, alphabet, dataOf(frames))
	// Each frame names its file and the offset after its data.
	must.Eq(t, []StreamFrame{
		{File: "alloc/logs/web.stdout.0", Offset: 10, Data: []byte("abcdefghij")},
		{File: "alloc/logs/web.stdout.1", Offset: 10, Data: []byte("klmnopqrst")},
		{File: "alloc/logs/web.stdout.2", Offset: 5, Data: []byte("uvwxy")},
	}, derefFrames(frames))
}

func derefFrames(fs []*StreamFrame) []StreamFrame {
	out := make([]StreamFrame, 0, len(fs))
	for _, f := range fs {
		out = append(out, *f)
	}
	return out
}

func TestLogReader_OriginsAndOffsets(t *testing.T) {
	dir := t.TempDir()
	writeLog(t, dir, 5, 10, alphabet).Close()
	cases := []struct {
		origin string
		offset int64
		want   string
	}{
		{OriginStart, 0, alphabet},
		{OriginStart, 12, alphabet[12:]},
		{OriginStart, 99, ""},
		{OriginEnd, 0, ""},
		{OriginEnd, 12, alphabet[13:]}, // the last 12 bytes
		{OriginEnd, 99, alphabet},
		{"", 3, alphabet[3:]}, // start by default
	}
	for _, tc := range cases {
		r, err := openLog(dir, LogRequest{Task: "web", Type: LogStdout, Origin: tc.origin, Offset: tc.offset})
		must.NoError(t, err)
		b, err := io.ReadAll(r)
		must.NoError(t, err)
		must.Eq(t, tc.want, string(b), must.Sprintf("%s+%d", tc.origin, tc.offset))
		r.Close()
	}
}

func TestLogReader_SkipsFilesRotatedAway(t *testing.T) {
	dir := t.TempDir()
	// 45 bytes in files of 10 keeping 3: .0 and .1 are deleted.
	data := alphabet + "01234567890123456789"
	writeLog(t, dir, 3, 10, data).Close()
	r, err := openLog(dir, LogRequest{Task: "web", Type: LogStdout})
	must.NoError(t, err)
	defer r.Close()
	must.Eq(t, data[20:], dataOf(readAll(t, r)))

	// The file the reader was positioned on disappears before it reads
	// it: it moves on to the oldest one left.
	r2, err := openLog(dir, LogRequest{Task: "web", Type: LogStdout})
	must.NoError(t, err)
	defer r2.Close()
	must.NoError(t, os.Remove(filepath.Join(dir, "web.stdout.2")))
	must.Eq(t, data[30:], dataOf(readAll(t, r2)))
}

func TestLogReader_FollowsAcrossRotation(t *testing.T) {
	dir := t.TempDir()
	w := writeLog(t, dir, 10, 10, "0123456")
	defer w.Close()
	r, err := openLog(dir, LogRequest{Task: "web", Type: LogStdout, Origin: OriginEnd, Offset: 2, Follow: true})
	must.NoError(t, err)
	r.poll = 2 * time.Millisecond

	got := make(chan string)
	go func() {
		var b strings.Builder
		for b.Len() < 2+len(alphabet) {
			f, err := r.Next(context.Background())
			if err != nil {
				break
			}
			b.Write(f.Data)
		}
		got <- b.String()
	}()
	// Written in pieces that cross two file boundaries.
	for _, piece := range []string{"abc", "defghij", "klmnopqrstuvw", "xy"} {
		time.Sleep(5 * time.Millisecond)
		_, err := w.Write([]byte(piece))
		must.NoError(t, err)
	}
	select {
	case s := <-got:
		must.Eq(t, "56"+alphabet, s)
	case <-time.After(10 * time.Second):
		t.Fatal("follower did not see the output")
	}

	// Close ends a follower waiting for more.
	done := make(chan error)
	go func() {
		_, err := r.Next(context.Background())
		done <- err
	}()
	time.Sleep(10 * time.Millisecond)
	must.NoError(t, r.Close())
	select {
	case err := <-done:
		must.ErrorIs(t, err, io.EOF)
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not end the follower")
	}
}

func TestLogReader_FollowEndsWithContext(t *testing.T) {
	dir := t.TempDir()
	writeLog(t, dir, 2, 100, "x").Close()
	r, err := openLog(dir, LogRequest{Task: "web", Type: LogStdout, Origin: OriginEnd, Follow: true})
	must.NoError(t, err)
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err = r.Next(ctx)
	must.ErrorIs(t, err, context.DeadlineExceeded)
}

func TestLogReader_ReportsTruncation(t *testing.T) {
	dir := t.TempDir()
	writeLog(t, dir, 2, 100, "0123456789").Close()
	r, err := openLog(dir, LogRequest{Task: "web", Type: LogStdout, Follow: true})
	must.NoError(t, err)
	defer r.Close()
	r.poll = time.Millisecond
	f, err := r.Next(context.Background())
	must.NoError(t, err)
	must.Eq(t, "0123456789", string(f.Data))

	must.NoError(t, os.WriteFile(filepath.Join(dir, "web.stdout.0"), []byte("new"), 0o644))
	f, err = r.Next(context.Background())
	must.NoError(t, err)
	must.Eq(t, StreamFrame{File: "alloc/logs/web.stdout.0", FileEvent: FileEventTruncated}, *f)
	f, err = r.Next(context.Background())
	must.NoError(t, err)
	must.Eq(t, "new", string(f.Data))
}

func TestLogReader_NoLogs(t *testing.T) {
	_, err := openLog(t.TempDir(), LogRequest{Task: "web", Type: LogStderr})
	must.True(t, errors.Is(err, ErrNotFound))
	must.EqError(t, err, `log entry for task "web" and log type "stderr" not found`)
}

// Errors of the file system name the log by its path in the allocation
// directory, never by the host path.
func TestLogReader_ErrorsNameNoHostPath(t *testing.T) {
	dir := t.TempDir()
	// The log "file" links to a directory: opening works, reading fails.
	must.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	must.NoError(t, os.Symlink("sub", filepath.Join(dir, "web.stdout.0")))
	r, err := openLog(dir, LogRequest{Task: "web", Type: LogStdout})
	must.NoError(t, err)
	defer r.Close()
	_, err = r.Next(context.Background())
	must.Error(t, err)
	must.StrContains(t, err.Error(), `path "alloc/logs/web.stdout.0"`)
	must.StrNotContains(t, err.Error(), dir)

	// The log directory is a file.
	file := filepath.Join(dir, "not-a-dir")
	must.NoError(t, os.WriteFile(file, nil, 0o644))
	_, err = openLog(file, LogRequest{Task: "web", Type: LogStdout})
	must.Error(t, err)
	must.StrContains(t, err.Error(), `path "alloc/logs"`)
	must.StrNotContains(t, err.Error(), dir)
}
