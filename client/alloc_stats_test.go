package client

import (
	"strconv"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

func TestParseProcStat(t *testing.T) {
	// pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt
	// majflt cmajflt utime stime cutime cstime priority nice threads
	// itrealvalue starttime vsize rss ...; the name has spaces and a ')'.
	line := "4242 (my (odd) task) S 1 4242 4240 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 1 0 12345 1000000 321 18446744073709551615"
	st, err := parseProcStat([]byte(line))
	must.NoError(t, err)
	must.Eq(t, procStat{session: 4240, utime: 250, stime: 50, rssPages: 321}, st)

	_, err = parseProcStat([]byte("4242 (short) S 1 2"))
	must.ErrorContains(t, err, "malformed stat")
	_, err = parseProcStat([]byte("no parenthesis"))
	must.ErrorContains(t, err, "malformed stat")
}

func TestCPUPercent(t *testing.T) {
	t0 := time.Unix(1000, 0)
	cases := []struct {
		name       string
		prev, cur  cpuSample
		mhz        float64
		user, sys  float64
		percent    float64
		totalTicks float64
	}{
		// 0.5s user + 0.25s system over 1s: 75% of a core; at 2000 MHz a
		// core, 1500 MHz.
		{"busy", cpuSample{at: t0}, cpuSample{at: t0.Add(time.Second), user: 0.5, sys: 0.25}, 2000, 50, 25, 75, 1500},
		// 3s of CPU over 2s: a task using two cores.
		{"two cores", cpuSample{at: t0, user: 1}, cpuSample{at: t0.Add(2 * time.Second), user: 4}, 1000, 150, 0, 150, 1500},
		{"no time passed", cpuSample{at: t0}, cpuSample{at: t0, user: 1}, 1000, 0, 0, 0, 0},
		// A restarted process has less CPU time than the sample before.
		{"counter reset", cpuSample{at: t0, user: 5}, cpuSample{at: t0.Add(time.Second), user: 1}, 1000, 0, 0, 0, 0},
	}
	for _, tc := range cases {
		got := cpuPercent(tc.prev, tc.cur, tc.mhz)
		must.Eq(t, tc.user, got.UserMode, must.Sprint(tc.name))
		must.Eq(t, tc.sys, got.SystemMode, must.Sprint(tc.name))
		must.Eq(t, tc.percent, got.Percent, must.Sprint(tc.name))
		must.Eq(t, tc.totalTicks, got.TotalTicks, must.Sprint(tc.name))
	}
}

func TestClient_AllocStatsOfProcesses(t *testing.T) {
	srv := testServer(t, nil)
	cfg := testClientConfig(t, local(srv))
	cfg.Options[OptionRawExecEnable] = "true"
	c := testClient(t, cfg)
	eventually(t, "ready", func() bool { return nodeStatus(t, srv, c.NodeID()) == structs.NodeStatusReady })
	job := mock.Job(mock.Count(1)) // raw_exec /bin/sleep
	job.TaskGroups[0].Networks = nil
	job.TaskGroups[0].Tasks[0].Config = map[string]interface{}{"command": "/bin/sh", "args": []string{"-c", "sleep 3600 & wait"}}
	job = registerJob(t, srv, job)
	a := place(t, srv, job, c.NodeID(), 1)[0]
	eventually(t, "running", clientStatusIs(t, srv, a.ID, structs.AllocClientStatusRunning))
	pid := taskPID(t, c, a.ID, "web")

	var usage *AllocResourceUsage
	eventually(t, "both processes of the session measured", func() bool {
		var err error
		usage, err = c.AllocStats(a.ID)
		must.NoError(t, err)
		return len(usage.Tasks["web"].Pids) == 2
	})
	task := usage.Tasks["web"]
	must.MapContainsKey(t, task.Pids, strconv.Itoa(pid))
	must.Positive(t, task.ResourceUsage.MemoryStats.RSS)
	must.Eq(t, []string{"RSS"}, task.ResourceUsage.MemoryStats.Measured)
	must.Eq(t, task.ResourceUsage.MemoryStats.RSS, usage.ResourceUsage.MemoryStats.RSS)
	must.Eq(t, []string{"System Mode", "User Mode", "Percent"}, task.ResourceUsage.CpuStats.Measured)
	must.GreaterEq(t, 0.0, task.ResourceUsage.CpuStats.Percent)

	_, err := c.AllocStats("nope")
	must.ErrorIs(t, err, ErrNotFound)
}

func TestClient_AllocStatsOfSimulatedTasks(t *testing.T) {
	c, a := runningMockAlloc(t)
	usage, err := c.AllocStats(a.ID)
	must.NoError(t, err)
	web := usage.Tasks["web"]
	must.NotNil(t, web)
	must.MapEmpty(t, web.Pids)
	must.SliceEmpty(t, web.ResourceUsage.MemoryStats.Measured)
}
