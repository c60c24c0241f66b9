package client

import (
	"strings"
	"testing"

	"github.com/shoenig/test/must"
)

func TestParseMeminfo(t *testing.T) {
	m := parseMeminfo(strings.NewReader("MemTotal:       16000 kB\nMemFree:         2000 kB\nMemAvailable:    6000 kB\nBuffers: x kB\n"))
	must.Eq(t, &HostMemoryStats{Total: 16000 * 1024, Available: 6000 * 1024, Free: 2000 * 1024, Used: 10000 * 1024}, m)
}

func TestDiskStats_OfADirectory(t *testing.T) {
	d, err := diskStats(t.TempDir())
	must.NoError(t, err)
	must.Positive(t, d.Size)
	must.LessEq(t, d.Size, d.Used) // Used is at most Size
	must.LessEq(t, d.Size, d.Available)
	_, err = diskStats("/no/such/dir")
	must.Error(t, err)
}
