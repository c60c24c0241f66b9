package command

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/opennomad/nomad/api"
)

// fsAgent serves one allocation whose directory holds alloc/ (a
// directory) and alloc/logs.txt (a file).
func newFSAgent(t *testing.T) *httptest.Server {
	t.Helper()
	content := "one\ntwo\nthree\nfour\n"
	mod := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	files := map[string]*api.AllocFileInfo{
		"/":              {Name: "/", IsDir: true, Size: 4096, FileMode: "drwxrwxrwx", ModTime: mod},
		"alloc":          {Name: "alloc", IsDir: true, Size: 4096, FileMode: "drwxrwxrwx", ModTime: mod},
		"alloc/logs.txt": {Name: "logs.txt", Size: int64(len(content)), FileMode: "-rw-r--r--", ModTime: mod},
		"empty":          {Name: "empty", IsDir: true, Size: 0, FileMode: "drwxr-xr-x", ModTime: mod},
	}
	listing := map[string][]*api.AllocFileInfo{"/": {files["alloc"], files["empty"]}, "alloc": {files["alloc/logs.txt"]}, "empty": {}}
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/allocations", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode([]api.AllocationListStub{{ID: logsAllocID}})
	})
	mux.HandleFunc("/v1/allocation/", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(api.Allocation{ID: logsAllocID, TaskGroup: "web"})
	})
	mux.HandleFunc("/v1/client/fs/stat/", func(w http.ResponseWriter, r *http.Request) {
		f := files[r.URL.Query().Get("path")]
		if f == nil {
			http.Error(w, "file not found", http.StatusNotFound)
			return
		}
		json.NewEncoder(w).Encode(f)
	})
	mux.HandleFunc("/v1/client/fs/ls/", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(listing[r.URL.Query().Get("path")])
	})
	mux.HandleFunc("/v1/client/fs/cat/", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, content) })
	mux.HandleFunc("/v1/client/fs/readat/", func(w http.ResponseWriter, r *http.Request) {
		off, _ := strconv.Atoi(r.URL.Query().Get("offset"))
		limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
		io.WriteString(w, content[off:off+limit])
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestAllocFS(t *testing.T) {
	srv := newFSAgent(t)
	cases := []struct {
		name     string
		args     []string
		wantCode int
		stdout   string
		errHas   string
	}{
		{name: "the root is listed", args: []string{"alloc", "fs", "5f0e"},
			stdout: "Mode        Size     Modified Time         Name\ndrwxrwxrwx  4.0 KiB  2024-05-01T10:00:00Z  alloc/\ndrwxr-xr-x  0 B      2024-05-01T10:00:00Z  empty/\n"},
		{name: "sizes in bytes", args: []string{"fs", "-H", "5f0e", "alloc"},
			stdout: "Mode        Size  Modified Time         Name\n-rw-r--r--  19    2024-05-01T10:00:00Z  logs.txt\n"},
		{name: "an empty directory", args: []string{"alloc", "fs", "5f0e", "empty"}, stdout: "Empty directory \"empty\"\n"},
		{name: "a file is printed", args: []string{"alloc", "fs", "5f0e", "alloc/logs.txt"}, stdout: "one\ntwo\nthree\nfour\n"},
		{name: "stat", args: []string{"alloc", "fs", "-stat", "5f0e", "alloc/logs.txt"},
			stdout: "Mode        Size  Modified Time         Name\n-rw-r--r--  19 B  2024-05-01T10:00:00Z  logs.txt\n"},
		{name: "tail lines", args: []string{"alloc", "fs", "-tail", "-n", "2", "5f0e", "alloc/logs.txt"}, stdout: "three\nfour\n"},
		{name: "tail bytes", args: []string{"alloc", "fs", "-tail", "-c", "5", "5f0e", "alloc/logs.txt"}, stdout: "four\n"},
		{name: "a missing file", args: []string{"alloc", "fs", "5f0e", "nope"}, wantCode: 1, errHas: "file not found"},
		{name: "follow is refused", args: []string{"alloc", "fs", "-f", "5f0e", "alloc/logs.txt"}, wantCode: 1, errHas: "-f option is not supported"},
		{name: "no allocation", args: []string{"alloc", "fs"}, wantCode: 1, errHas: "one or two arguments"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := runCommand(t, srv.URL, runOpts{}, tc.args...)
			if res.code != tc.wantCode {
				t.Fatalf("exit %d, want %d\nstdout:%s\nstderr:%s", res.code, tc.wantCode, res.stdout, res.stderr)
			}
			if tc.stdout != "" && res.stdout != tc.stdout {
				t.Errorf("stdout = %q, want %q", res.stdout, tc.stdout)
			}
			if !strings.Contains(res.stderr, tc.errHas) {
				t.Errorf("stderr lacks %q: %s", tc.errHas, res.stderr)
			}
		})
	}
}
