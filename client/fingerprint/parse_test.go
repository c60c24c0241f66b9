package fingerprint

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func fixture(t *testing.T, name string) *os.File {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestParseCPUInfo(t *testing.T) {
	cases := []struct {
		file string
		want cpuInfo
	}{
		{"cpuinfo_x86", cpuInfo{ModelName: "Intel(R) Xeon(R) Processor", MHz: 2300, Cores: 2}},
		// ARM kernels report neither a model name nor a clock.
		{"cpuinfo_arm64", cpuInfo{Cores: 4}},
	}
	for _, tc := range cases {
		got, err := parseCPUInfo(fixture(t, tc.file))
		if err != nil || got != tc.want {
			t.Errorf("%s: %+v, %v; want %+v", tc.file, got, err, tc.want)
		}
	}
}

func TestParseMemTotal(t *testing.T) {
	got, err := parseMemTotal(fixture(t, "meminfo"))
	if err != nil || got != 24684092*1024 {
		t.Fatalf("MemTotal = %d, %v", got, err)
	}
	if _, err := parseMemTotal(strings.NewReader("MemFree: 1 kB\n")); err == nil {
		t.Fatal("meminfo without MemTotal accepted")
	}
}

func TestParseOSRelease(t *testing.T) {
	cases := []struct{ file, id, version string }{
		{"os-release_debian", "debian", "12"},
		{"os-release_ubuntu", "ubuntu", "22.04"},
	}
	for _, tc := range cases {
		id, v := parseOSRelease(fixture(t, tc.file))
		if id != tc.id || v != tc.version {
			t.Errorf("%s: %q %q", tc.file, id, v)
		}
	}
}

func TestParseDefaultRoute(t *testing.T) {
	if got := parseDefaultRouteIface(fixture(t, "route")); got != "eth0" {
		t.Fatalf("default route via %q, want eth0", got)
	}
	if got := parseDefaultRouteIface(strings.NewReader("Iface\tDestination\n")); got != "" {
		t.Fatalf("no default route: %q", got)
	}
	ip, err := routeHexIP("0101A8C0")
	if err != nil || ip.String() != "192.168.1.1" {
		t.Fatalf("routeHexIP = %v, %v", ip, err)
	}
}

func TestMountSource(t *testing.T) {
	cases := []struct{ path, want string }{
		{"/var/lib/nomad/data", "/dev/vdb1"},
		{"/var/lib/nomad", "/dev/vdb1"},
		// A sibling with a common prefix is a different mount.
		{"/var/lib/nomadic/x", "tmpfs"},
		{"/opt/nomad", "/dev/vda"},
	}
	for _, tc := range cases {
		if got := mountSource(fixture(t, "mountinfo"), tc.path); got != tc.want {
			t.Errorf("mountSource(%s) = %q, want %q", tc.path, got, tc.want)
		}
	}
}
