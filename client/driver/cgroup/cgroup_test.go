package cgroup

import (
	"slices"
	"strings"
	"testing"
)

// mountinfo of a hybrid host: v1 controllers plus a v2 mount without
// cpu/memory, with an optional field ("shared:7") before the separator.
const hybridMountinfo = `22 27 0:20 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw
30 22 0:26 / /sys/fs/cgroup ro,nosuid,nodev,noexec shared:9 - tmpfs tmpfs ro,mode=755
31 30 0:27 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime shared:10 - cgroup2 cgroup2 rw,nsdelegate
33 30 0:29 / /sys/fs/cgroup/memory rw,nosuid,nodev,noexec,relatime shared:12 - cgroup cgroup rw,memory
`

func TestMountPoint(t *testing.T) {
	cases := []struct {
		name, in, want, wantErr string
	}{
		{"hybrid", hybridMountinfo, "/sys/fs/cgroup/unified", ""},
		{"unified", "35 24 0:30 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw\n", "/sys/fs/cgroup", ""},
		{"escaped space", `35 24 0:30 / /mnt/my\040cg rw - cgroup2 none rw` + "\n", "/mnt/my cg", ""},
		{"none", "22 27 0:20 / /sys rw - sysfs sysfs rw\n", "", "no cgroup2"},
	}
	for _, tc := range cases {
		got, err := mountPoint(strings.NewReader(tc.in))
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: err = %v", tc.name, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: got %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
}

func TestMissingControllers(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"cpuset cpu io memory hugetlb pids\n", nil},
		{"hugetlb\n", []string{"cpu", "memory"}},
		{"cpu pids", []string{"memory"}},
		{"", []string{"cpu", "memory"}},
	}
	for _, tc := range cases {
		if got := missingControllers(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("missingControllers(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestCPUWeight(t *testing.T) {
	cases := []struct{ shares, want int64 }{
		{0, 1},          // clamped to 2 -> 1 + 0
		{2, 1},          // minimum
		{100, 4},        // 1 + 98*9999/262142 = 1 + 3.73 -> 4
		{1024, 39},      // 1 + 1022*9999/262142 = 1 + 38.98 -> 39
		{262144, 10000}, // maximum
		{1 << 30, 10000},
	}
	for _, tc := range cases {
		if got := CPUWeight(tc.shares); got != tc.want {
			t.Errorf("CPUWeight(%d) = %d, want %d", tc.shares, got, tc.want)
		}
	}
}

func TestOOMKills(t *testing.T) {
	events := "low 0\nhigh 0\nmax 3\noom 2\noom_kill 1\noom_group_kill 0\n"
	if got := oomKills(strings.NewReader(events)); got != 1 {
		t.Fatalf("oomKills = %d, want 1", got)
	}
	if got := oomKills(strings.NewReader("low 0\n")); got != 0 {
		t.Fatalf("oomKills without counter = %d", got)
	}
}
