package snapshot

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"testing"

	"github.com/hashicorp/raft"
	"github.com/shoenig/test/must"
)

func testMeta(size int) *raft.SnapshotMeta {
	return &raft.SnapshotMeta{
		Version: 1, ID: "2-10-1700000000", Index: 10, Term: 2, Size: int64(size),
		Configuration:      raft.Configuration{Servers: []raft.Server{{ID: "a", Address: "127.0.0.1:4647"}}},
		ConfigurationIndex: 1,
	}
}

func TestArchive_RoundTrip(t *testing.T) {
	state := bytes.Repeat([]byte("state "), 10000)
	var buf bytes.Buffer
	must.NoError(t, Write(&buf, testMeta(len(state)), bytes.NewReader(state)))

	dir := t.TempDir()
	meta, rc, err := Read(&buf, dir)
	must.NoError(t, err)
	must.Eq(t, testMeta(len(state)), meta)
	got, err := io.ReadAll(rc)
	must.NoError(t, err)
	must.Eq(t, state, got)
	must.NoError(t, rc.Close())
	entries, err := os.ReadDir(dir)
	must.NoError(t, err)
	must.SliceEmpty(t, entries, must.Sprint("the spool file is removed on close"))
}

func TestArchive_WriteChecksSize(t *testing.T) {
	var buf bytes.Buffer
	err := Write(&buf, testMeta(10), bytes.NewReader([]byte("12345")))
	must.ErrorContains(t, err, "snapshot state is 5 bytes, its meta says 10")
}

// rewrite rebuilds an archive with edit applied to each file's content.
func rewrite(t *testing.T, archive []byte, edit func(name string, data []byte) []byte) []byte {
	gz, err := gzip.NewReader(bytes.NewReader(archive))
	must.NoError(t, err)
	tr := tar.NewReader(gz)
	var out bytes.Buffer
	gw := gzip.NewWriter(&out)
	tw := tar.NewWriter(gw)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		must.NoError(t, err)
		data, err := io.ReadAll(tr)
		must.NoError(t, err)
		data = edit(h.Name, data)
		if data == nil {
			continue
		}
		h.Size = int64(len(data))
		must.NoError(t, tw.WriteHeader(h))
		_, err = tw.Write(data)
		must.NoError(t, err)
	}
	must.NoError(t, tw.Close())
	must.NoError(t, gw.Close())
	return out.Bytes()
}

func TestArchive_RefusesDamage(t *testing.T) {
	state := []byte("the whole cluster state")
	var buf bytes.Buffer
	must.NoError(t, Write(&buf, testMeta(len(state)), bytes.NewReader(state)))
	good := buf.Bytes()

	cases := []struct {
		name    string
		archive []byte
		want    string
	}{
		{"not gzip", []byte("hello"), "corrupt"},
		{"truncated", good[:len(good)/2], "corrupt"},
		{"state changed", rewrite(t, good, func(name string, d []byte) []byte {
			if name == stateName {
				return bytes.ToUpper(d)
			}
			return d
		}), "state.bin does not match its checksum"},
		{"meta changed", rewrite(t, good, func(name string, d []byte) []byte {
			if name == metaName {
				return bytes.Replace(d, []byte(`"Index": 10`), []byte(`"Index": 11`), 1)
			}
			return d
		}), "meta.json does not match its checksum"},
		{"sums missing", rewrite(t, good, func(name string, d []byte) []byte {
			if name == sumsName {
				return nil
			}
			return d
		}), "SHA256SUMS is missing"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			_, _, err := Read(bytes.NewReader(tc.archive), dir)
			must.ErrorIs(t, err, ErrCorrupt)
			must.ErrorContains(t, err, tc.want)
			entries, _ := os.ReadDir(dir)
			must.SliceEmpty(t, entries)
		})
	}
}
