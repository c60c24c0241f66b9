package fingerprint

import (
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/opennomad/nomad/structs"
)

// fakeHost lays out a /proc, /sys and /etc with the given files.
func fakeHost(t *testing.T, files map[string]string) Host {
	t.Helper()
	root := t.TempDir()
	h := Host{ProcDir: filepath.Join(root, "proc"), SysDir: filepath.Join(root, "sys"), EtcDir: filepath.Join(root, "etc")}
	for _, d := range []string{h.ProcDir, h.SysDir, h.EtcDir} {
		os.MkdirAll(d, 0o755)
	}
	for rel, content := range files {
		p := filepath.Join(root, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

func readFixture(t *testing.T, name string) string {
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestFingerprintFromFixtures(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("fixtures describe a Linux host")
	}
	h := fakeHost(t, map[string]string{
		"proc/cpuinfo":              readFixture(t, "cpuinfo_x86"),
		"proc/meminfo":              readFixture(t, "meminfo"),
		"proc/self/status":          "Name:\tnomad\nCpus_allowed_list:\t0-1\n",
		"proc/sys/kernel/osrelease": "6.1.0-18-amd64\n",
		"etc/os-release":            readFixture(t, "os-release_ubuntu"),
		// A 3 GHz maximum beats the momentary 2300 MHz of cpuinfo.
		"sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq": "3000000\n",
		"sys/class/net/lo/speed":                               "10000\n",
	})
	res, err := Fingerprint(&Config{DataDir: t.TempDir(), NetworkInterface: "lo"}, h)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"kernel.name":               "linux",
		"kernel.version":            "6.1.0-18-amd64",
		"os.name":                   "ubuntu",
		"os.version":                "22.04",
		"cpu.arch":                  runtime.GOARCH,
		"cpu.modelname":             "Intel(R) Xeon(R) Processor",
		"cpu.numcores":              "2",
		"cpu.frequency":             "3000",
		"cpu.totalcompute":          "6000", // 2 cores x 3000 MHz
		"memory.totalbytes":         strconv.Itoa(24684092 * 1024),
		"unique.network.ip-address": "127.0.0.1",
	}
	for k, v := range want {
		if got := res.Attributes[k]; got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	r := res.Resources
	if r.Cpu.CpuShares != 6000 || r.Cpu.TotalCpuCores != 2 || !slices.Equal(r.Cpu.ReservableCpuCores, []uint16{0, 1}) {
		t.Errorf("cpu %+v", r.Cpu)
	}
	if r.Memory.MemoryMB != 24684092/1024 {
		t.Errorf("memory %d MB", r.Memory.MemoryMB)
	}
	if len(r.Networks) == 0 || r.Networks[0].Device != "lo" || r.Networks[0].MBits != 10000 || r.Networks[0].CIDR != "127.0.0.1/32" {
		t.Errorf("networks %+v", r.Networks[0])
	}
	if r.MinDynamicPort != 20000 || r.MaxDynamicPort != 32000 {
		t.Errorf("dynamic ports %d-%d", r.MinDynamicPort, r.MaxDynamicPort)
	}
}

// Where the host cannot be read, configured values stand in; without them
// the error names the setting to use.
func TestOverridesAndMissingData(t *testing.T) {
	h := fakeHost(t, nil)
	_, err := Fingerprint(&Config{DataDir: t.TempDir(), NetworkInterface: loopbackName(t)}, h)
	if err == nil || !strings.Contains(err.Error(), "cpu_total_compute") || !strings.Contains(err.Error(), "memory_total_mb") {
		t.Fatalf("err = %v, want both settings named", err)
	}
	res, err := Fingerprint(&Config{DataDir: t.TempDir(), NetworkInterface: loopbackName(t), CPUTotalCompute: 4000, MemoryTotalMB: 2048}, h)
	if err != nil {
		t.Fatal(err)
	}
	if res.Resources.Cpu.CpuShares != 4000 || res.Resources.Memory.MemoryMB != 2048 || res.Attributes["memory.totalbytes"] != strconv.Itoa(2048<<20) {
		t.Fatalf("resources %+v", res.Resources)
	}
}

func loopbackName(t *testing.T) string {
	ifaces, _ := net.Interfaces()
	for _, i := range ifaces {
		if i.Flags&net.FlagLoopback != 0 {
			return i.Name
		}
	}
	t.Skip("no loopback interface")
	return ""
}

// The real machine: values must be present and plausible.
func TestFingerprintRealHost(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	dataDir := t.TempDir()
	res, err := Fingerprint(&Config{DataDir: dataDir}, DefaultHost())
	if err != nil {
		t.Fatal(err)
	}
	a := res.Attributes
	cores, _ := strconv.Atoi(a["cpu.numcores"])
	if cores < 1 || cores > runtime.NumCPU() {
		t.Errorf("cpu.numcores = %d, NumCPU %d", cores, runtime.NumCPU())
	}
	mhz, _ := strconv.Atoi(a["cpu.frequency"])
	if mhz < 100 || mhz > 10000 {
		t.Errorf("cpu.frequency = %d MHz", mhz)
	}
	if total, _ := strconv.Atoi(a["cpu.totalcompute"]); total < cores*mhz-cores || total > cores*mhz+cores {
		t.Errorf("cpu.totalcompute %d != %d cores x %d MHz", total, cores, mhz)
	}
	if mem, _ := strconv.ParseInt(a["memory.totalbytes"], 10, 64); mem < 64<<20 {
		t.Errorf("memory.totalbytes = %d", mem)
	}
	if hn, _ := os.Hostname(); a["unique.hostname"] != hn {
		t.Errorf("unique.hostname = %q, want %q", a["unique.hostname"], hn)
	}
	if net.ParseIP(a["unique.network.ip-address"]) == nil {
		t.Errorf("unique.network.ip-address = %q", a["unique.network.ip-address"])
	}
	if a["kernel.name"] != "linux" || a["kernel.version"] == "" || a["kernel.arch"] == "" || a["os.name"] == "" || a["nomad.version"] == "" {
		t.Errorf("host attributes %v", a)
	}
	if !strings.Contains(a["os.signals"], "SIGTERM") {
		t.Errorf("os.signals = %q", a["os.signals"])
	}
	if res.Resources.Disk.DiskMB <= 0 || a["unique.storage.bytestotal"] == "" || a["unique.storage.volume"] == "" {
		t.Errorf("disk %d MB, attrs %v", res.Resources.Disk.DiskMB, a)
	}
}

func TestParseCoreList(t *testing.T) {
	cases := []struct {
		in   string
		want []uint16
		bad  bool
	}{
		{in: "0", want: []uint16{0}},
		{in: "0-3", want: []uint16{0, 1, 2, 3}},
		{in: "0-1,4,6-7", want: []uint16{0, 1, 4, 6, 7}},
		{in: "3-1", bad: true},
		{in: "x", bad: true},
	}
	for _, tc := range cases {
		got, err := parseCoreList(tc.in)
		if tc.bad != (err != nil) || !slices.Equal(got, tc.want) {
			t.Errorf("parseCoreList(%q) = %v, %v", tc.in, got, err)
		}
	}
}

func TestBuildNode(t *testing.T) {
	res := &Result{
		Attributes: map[string]string{"kernel.name": "linux", "unique.hostname": "box"},
		Resources:  &structs.NodeResources{Cpu: structs.NodeCpuResources{CpuShares: 4000}},
	}
	drivers := map[string]*structs.DriverInfo{
		"raw_exec": {Detected: true, Healthy: true, Attributes: map[string]string{"driver.raw_exec": "1"}},
		"exec":     {Detected: true, Healthy: false, HealthDescription: "no cgroups", Attributes: map[string]string{"driver.exec.x": "y"}},
		"docker":   {Detected: false},
	}
	cfg := &Config{Datacenter: "dc7", NodeClass: "gpu", Meta: map[string]string{"rack": "r1"}}
	n := BuildNode("id-1", "secret-1", cfg, res, drivers)
	if n.ID != "id-1" || n.SecretID != "secret-1" || n.Name != "box" || n.Datacenter != "dc7" || n.NodePool != "default" {
		t.Fatalf("node %+v", n)
	}
	if n.Status != structs.NodeStatusInit || n.SchedulingEligibility != structs.NodeSchedulingEligible || n.ComputedClass == "" {
		t.Fatalf("status %s eligibility %s class %q", n.Status, n.SchedulingEligibility, n.ComputedClass)
	}
	if n.Attributes["driver.raw_exec"] != "1" || n.Attributes["driver.exec"] != "" || n.Attributes["driver.exec.x"] != "" || n.Attributes["driver.docker"] != "" {
		t.Fatalf("driver attributes %v", n.Attributes)
	}
	if !n.HasDriver("raw_exec") || n.HasDriver("exec") {
		t.Fatal("HasDriver disagrees with driver health")
	}
	if res.Attributes["driver.raw_exec"] != "" {
		t.Fatal("BuildNode modified the fingerprint result")
	}
}
