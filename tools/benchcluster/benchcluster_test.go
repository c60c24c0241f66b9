package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	nomadagent "github.com/opennomad/nomad/command/agent"
	"github.com/opennomad/nomad/command/loadgen"
)

func TestParseStatCPU(t *testing.T) {
	// utime 250 and stime 50 ticks at 100 Hz; the command name holds a
	// space and a parenthesis.
	stat := "1234 (nomad (x) y) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 12 0 100 0 0"
	got, err := parseStatCPU(stat)
	must.NoError(t, err)
	must.Eq(t, 3*time.Second, got)

	_, err = parseStatCPU("garbage")
	must.Error(t, err)
}

func TestGeneratedConfigsLoad(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]string{
		"server.hcl": serverConfig("server-1", filepath.Join(dir, "s"), agentPorts{HTTP: 1, RPC: 2, Serf: 3}, 3,
			[]string{"127.0.0.1:3", "127.0.0.1:6", "127.0.0.1:9"}, serverOpts{server: `  memory_limit = "2GB"`}),
		"server-acl.hcl": serverConfig("server-1", filepath.Join(dir, "s"), agentPorts{HTTP: 1, RPC: 2, Serf: 3}, 3,
			[]string{"127.0.0.1:3"}, serverOpts{acl: true}),
		"client.hcl": clientConfig("client-1", filepath.Join(dir, "c"), agentPorts{HTTP: 4, RPC: 5, Serf: 6},
			[]string{"127.0.0.1:2"}),
	}
	for file, body := range cases {
		t.Run(file, func(t *testing.T) {
			path := filepath.Join(dir, file)
			must.NoError(t, os.WriteFile(path, []byte(body), 0o600))
			cfg, err := nomadagent.LoadConfig([]string{"-config=" + path}, io.Discard)
			must.NoError(t, err)
			switch file {
			case "server-acl.hcl":
				must.True(t, cfg.Server.Enabled)
				must.True(t, cfg.ACL.Enabled)
			case "server.hcl":
				must.False(t, cfg.ACL.Enabled)
				must.True(t, cfg.Server.Enabled)
				must.Eq(t, 3, cfg.Server.BootstrapExpect)
				must.Eq(t, []string{"127.0.0.1:3", "127.0.0.1:6", "127.0.0.1:9"}, cfg.Server.ServerJoin.RetryJoin)
				must.Eq(t, time.Second, cfg.Telemetry.InMemoryCollectionInterval)
				must.True(t, cfg.EnableDebug)
				must.Eq(t, 2, cfg.Ports.RPC)
				must.Eq(t, "2GB", cfg.Server.MemoryLimit)
			default:
				must.True(t, cfg.Client.Enabled)
				must.Eq(t, "1", cfg.Client.Options["driver.mock_driver.enable"])
			}
		})
	}
}

func TestCases(t *testing.T) {
	o := &options{nodes: []int{1000, 5000}, allocs: []int{10000, 100000}, perJob: []int{1, 100}, maxJobs: 20000,
		latencyRate: 100, latencyJobs: 50, latencyPerJob: 10}
	run, skipped := o.cases()
	must.Eq(t, []w2Case{
		{Nodes: 1000, Allocs: 10000, PerJob: 1},
		{Nodes: 1000, Allocs: 10000, PerJob: 100},
		{Nodes: 1000, Allocs: 100000, PerJob: 100},
		{Nodes: 5000, Allocs: 10000, PerJob: 1},
		{Nodes: 5000, Allocs: 10000, PerJob: 100},
		{Nodes: 5000, Allocs: 100000, PerJob: 100},
		{Nodes: 1000, Allocs: 500, PerJob: 10, Rate: 100},
	}, run)
	must.Eq(t, "nodes1000-allocs500-perjob10-rate100", run[6].name())
	must.Eq(t, []w2Case{{Nodes: 1000, Allocs: 100000, PerJob: 1}, {Nodes: 5000, Allocs: 100000, PerJob: 1}}, skipped)
}

func TestParseOptions(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "nomad")
	must.NoError(t, os.WriteFile(bin, nil, 0o700))

	o, err := parseOptions([]string{"-nomad", bin, "-quick"})
	must.NoError(t, err)
	must.Eq(t, []int{1000}, o.nodes)
	must.Eq(t, []int{10000}, o.allocs)
	must.Eq(t, []int{1, 10, 100}, o.perJob)
	run, _ := o.cases()
	must.Len(t, 3, run)

	_, err = parseOptions([]string{"-nomad", bin, "-allocs", "1000", "-per-job", "7"})
	must.ErrorContains(t, err, "not a multiple")
	_, err = parseOptions([]string{"-nomad", bin, "-nodes", "x"})
	must.ErrorContains(t, err, `-nodes: "x" is not a positive number`)
	_, err = parseOptions([]string{"-nomad", filepath.Join(t.TempDir(), "missing")})
	must.ErrorContains(t, err, "nomad binary")
}

func TestReplaceBlock(t *testing.T) {
	block := beginMarker + "\nnew\n" + endMarker

	// A page without the section gets it at the end, with its intro.
	got, err := replaceBlock("# Performance\n\n## State store\n\ntext\n", block)
	must.NoError(t, err)
	must.StrHasPrefix(t, "# Performance\n\n## State store\n\ntext\n\n"+sectionHeading+"\n\n", got)
	must.StrHasSuffix(t, block+"\n", got)

	// The block is replaced in place; hand-written text around it stays.
	page := "# P\n\n" + sectionHeading + "\n\nintro\n\n" + beginMarker + "\nold\n" + endMarker + "\n\nanalysis\n"
	got, err = replaceBlock(page, block)
	must.NoError(t, err)
	must.Eq(t, "# P\n\n"+sectionHeading+"\n\nintro\n\n"+block+"\n\nanalysis\n", got)

	_, err = replaceBlock("x "+endMarker, block)
	must.ErrorContains(t, err, "only one of the bench-cluster markers")
}

func TestReportMarkdown(t *testing.T) {
	res := &loadgen.Result{
		Servers: 3, Nodes: 1000, Jobs: 1000, PerJob: 10, Allocs: 10000, Committed: 10000, Running: 10000,
		AllocsPerSec: 4321, CommitP50: 20 * time.Millisecond, CommitP99: 80 * time.Millisecond, RunningP99: 300 * time.Millisecond,
		Evals: map[string]int{"complete": 1000, "blocked": 2}, PlanRejections: 3, PlanRejectionsKnown: true,
		ServerMemory: []loadgen.ServerMemory{{PID: 1, Before: 100 << 20, After: 120 << 20, Peak: 150 << 20}},
	}
	r := &report{
		Command: "make bench-cluster", Commit: "abc1234", Machine: "2 vCPU test", Date: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		W2: []*w2Outcome{{Case: w2Case{Nodes: 1000, Allocs: 10000, PerJob: 10}, Result: res,
			SimCPU: 2 * time.Second, RunTime: 4 * time.Second, SimPeakRSS: 300 << 20,
			LeaderCPU: 3 * time.Second, FollowerCPU: []time.Duration{time.Second, 2 * time.Second}, LoadGenCPU: time.Second}},
		W3: &w3Outcome{JobsBefore: 6, Failover: 1500 * time.Millisecond, FirstPlacement: 2 * time.Second},
	}
	md := r.markdown()
	for _, want := range []string{
		"Full run at commit `abc1234`, 2026-01-02. Machine: 2 vCPU test.",
		"| 1,000 | 10,000 | 10 | max | 4,321 | 20.0 | 80.0 | 300.0 | 150 MB | 2.0 KB | complete 1,000, blocked 2 | 3 | 2.0 s (50% of a core), 300 MB |",
		// 1,000 jobs: the leader's 3 s are 3 ms per job; all five
		// processes 3+1+2+2+1 = 9 s, 9 ms.
		"W2 servers=3 nodes=1000 allocs=10000 per_job=10 allocs_per_sec=4321 p50_ms=20.0 p99_ms=80.0 peak_rss_mb=150 cpu_ms_per_job=9.00",
		"W3 failover_s=1.50 first_placement_s=2.00",
		"| 1,000 | 10,000 | 10 | max | 75% (3.00 ms/job) | 25% (1.00 ms/job), 50% (2.00 ms/job) | 50% (2.00 ms/job) | 25% (1.00 ms/job) | 9.00 |",
	} {
		must.StrContains(t, md, want)
	}
	must.True(t, strings.HasPrefix(md, beginMarker) && strings.HasSuffix(md, endMarker))
}

func TestFindLine(t *testing.T) {
	lines := []string{
		`2026-11-28T23:31:51.900Z [INFO]  agent.server: starting`,
		`2026-11-28T23:31:51.943Z [INFO]  agent.server.raft: starting restore from snapshot: id=2-3631-17 last-index=3631 last-term=2 size-in-bytes=13413126`,
		`2026-11-28T23:31:52.549Z [INFO]  agent.server.raft: restored from snapshot: id=2-3631-17 last-index=3631 last-term=2 size-in-bytes=13413126`,
	}
	began, ok := findLine(lines, "starting restore from snapshot")
	must.True(t, ok)
	done, ok := findLine(lines, "restored from snapshot")
	must.True(t, ok)
	must.Eq(t, 606*time.Millisecond, done.at.Sub(began.at))
	must.Eq(t, "3631", done.fields["last-index"])
	must.Eq(t, "13413126", done.fields["size-in-bytes"])

	_, ok = findLine(lines, "snapshot complete up to")
	must.False(t, ok)
}

func TestCPUCost(t *testing.T) {
	outcome := func(committed, perJob int) *w2Outcome {
		return &w2Outcome{
			Case:        w2Case{PerJob: perJob},
			Result:      &loadgen.Result{Committed: committed},
			LeaderCPU:   2 * time.Second,
			FollowerCPU: []time.Duration{time.Second, time.Second},
			SimCPU:      500 * time.Millisecond, LoadGenCPU: 500 * time.Millisecond,
		}
	}
	cases := []struct {
		name string
		w    *w2Outcome
		want string
		ok   bool
	}{
		{
			// 1,000 jobs of one alloc: 2 s / 1,000 = 2 ms; all 5 s, 5 ms.
			name: "one alloc per job", w: outcome(1000, 1), ok: true,
			want: "leader 2.00, follower 1.00, follower 1.00, simulator 0.50, load generator 0.50; all processes 5.00",
		},
		{
			// 100 jobs of ten allocs: 2 s / 100 = 20 ms a job, 2 ms an alloc.
			name: "ten allocs per job", w: outcome(1000, 10), ok: true,
			want: "leader 20.00 (2.000 per alloc), follower 10.00 (1.000 per alloc), follower 10.00 (1.000 per alloc), " +
				"simulator 5.00 (0.500 per alloc), load generator 5.00 (0.500 per alloc); all processes 50.00 (5.000 per alloc)",
		},
		{
			name: "nothing committed", w: outcome(0, 1), ok: false,
			want: "leader 0.00, follower 0.00, follower 0.00, simulator 0.00, load generator 0.00; all processes 0.00",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cost, ok := tc.w.cpuCost()
			must.Eq(t, tc.ok, ok)
			must.Eq(t, tc.want, cost.line())
		})
	}
}
