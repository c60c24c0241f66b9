package loadgen

import (
	"github.com/opennomad/nomad/api"
	"strings"
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

func TestJobIndex(t *testing.T) {
	cases := []struct {
		id   string
		want int
		ok   bool
	}{
		{"run-0", 0, true},
		{"run-42", 42, true},
		{"run-", 0, false},
		{"run42", 0, false},
		{"other-1", 0, false},
		{"run-01", 0, false}, // not what jobID renders
		{"run--1", 0, false},
		{"run-1x", 0, false},
		{"ru", 0, false},
	}
	for _, c := range cases {
		got, ok := jobIndex("run", c.id)
		must.Eq(t, c.ok, ok, must.Sprint(c.id))
		must.Eq(t, c.want, got, must.Sprint(c.id))
	}
	must.Eq(t, "run-7", jobID("run", 7))
}

func TestPercentile(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	// Nearest rank: the p-th percentile of n sorted values is value
	// ceil(p/100 × n).
	cases := []struct {
		name string
		in   []time.Duration
		p    float64
		want time.Duration
	}{
		{"empty", nil, 50, 0},
		{"one", ms(7), 99, 7 * time.Millisecond},
		{"p50 of 4 is the 2nd", ms(40, 10, 30, 20), 50, 20 * time.Millisecond},
		{"p99 of 4 is the 4th", ms(40, 10, 30, 20), 99, 40 * time.Millisecond},
		{"p99 of 100 is the 99th", seq(100), 99, 99 * time.Millisecond},
		{"p50 of 100 is the 50th", seq(100), 50, 50 * time.Millisecond},
		{"p100 is the max", ms(3, 9, 1), 100, 9 * time.Millisecond},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			must.Eq(t, c.want, percentile(c.in, c.p))
		})
	}
}

func seq(n int) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = time.Duration(n-i) * time.Millisecond
	}
	return out
}

func TestTracker_CommitThenRunning(t *testing.T) {
	tr := newTracker("r", 2, 2, true)
	t0 := time.Unix(1000, 0)
	tr.sent(0, t0)
	tr.sent(1, t0.Add(time.Millisecond))
	tr.accepted(0, t0.Add(2*time.Millisecond))

	tr.alloc("a1", "r-0", "pending", t0.Add(10*time.Millisecond))
	tr.alloc("a1", "r-0", "pending", t0.Add(11*time.Millisecond)) // same alloc again
	tr.alloc("x", "other-0", "pending", t0.Add(11*time.Millisecond))
	tr.alloc("a2", "r-0", "pending", t0.Add(20*time.Millisecond))
	tr.alloc("b1", "r-1", "running", t0.Add(30*time.Millisecond)) // first seen running
	tr.alloc("b2", "r-1", "pending", t0.Add(31*time.Millisecond))
	c, r := tr.progress()
	must.Eq(t, 4, c)
	must.Eq(t, 1, r)
	select {
	case <-tr.done:
		t.Fatal("done before every alloc runs")
	default:
	}
	for _, id := range []string{"a1", "a2"} {
		tr.alloc(id, "r-0", "running", t0.Add(40*time.Millisecond))
	}
	tr.alloc("b2", "r-1", "complete", t0.Add(50*time.Millisecond))
	<-tr.done

	lat, first, last, _ := tr.summary()
	must.Eq(t, t0, first)
	must.Eq(t, t0.Add(31*time.Millisecond), last)
	must.SliceContainsAll(t, []time.Duration{20 * time.Millisecond, 30 * time.Millisecond}, lat.commit)
	must.SliceContainsAll(t, []time.Duration{40 * time.Millisecond, 49 * time.Millisecond}, lat.run)
	must.Eq(t, []time.Duration{2 * time.Millisecond}, lat.accept)
}

func TestTracker_CommitOnlyIsDoneAtTheLastCommit(t *testing.T) {
	tr := newTracker("r", 1, 1, false)
	tr.sent(0, time.Unix(1, 0))
	tr.alloc("a", "r-0", "pending", time.Unix(2, 0))
	<-tr.done
	tr.eval("e1", "r-0", "pending")
	tr.eval("e1", "r-0", "complete")
	tr.eval("e2", "r-0", "blocked")
	tr.eval("e3", "elsewhere", "failed")
	_, _, _, evals := tr.summary()
	must.Eq(t, map[string]int{"complete": 1, "blocked": 1}, evals)
}

func TestParseProcStatus(t *testing.T) {
	in := "Name:\tnomad\nVmPeak:\t  900000 kB\nVmHWM:\t  204800 kB\nVmRSS:\t  102400 kB\nThreads:\t12\n"
	m, err := parseProcStatus(strings.NewReader(in))
	must.NoError(t, err)
	must.Eq(t, int64(100<<20), m.RSS)
	must.Eq(t, int64(200<<20), m.Peak)

	_, err = parseProcStatus(strings.NewReader("VmRSS:\t12 pages\n"))
	must.ErrorContains(t, err, "unexpected VmRSS line")
}

func TestRejectionsIn(t *testing.T) {
	m := &api.MetricsSummary{Counters: []api.SampledValue{
		{Name: "nomad.nomad.plan.node_rejected", Sum: 3, Labels: map[string]string{"node_id": "a"}},
		{Name: "nomad.nomad.plan.node_rejected", Sum: 2, Labels: map[string]string{"node_id": "b"}},
		{Name: "nomad.nomad.rpc.request", Sum: 100},
	}}
	must.Eq(t, 5.0, rejectionsIn(m))
	start, err := parseIntervalStart("2026-11-22 19:02:46 +0000 UTC")
	must.NoError(t, err)
	must.Eq(t, time.Date(2026, 11, 22, 19, 2, 46, 0, time.UTC), start.UTC())
}

func TestConfigValidate(t *testing.T) {
	cfg := DefaultConfig()
	must.NoError(t, cfg.validate())
	cfg.Jobs, cfg.Count, cfg.Type, cfg.Driver, cfg.Addresses = 0, -1, "system", "docker", nil
	err := cfg.validate()
	for _, want := range []string{"jobs must be > 0", "count must be > 0", "job type must be service or batch", "driver must be mock_driver or raw_exec", "server address"} {
		must.ErrorContains(t, err, want)
	}
}

func TestResultLine(t *testing.T) {
	r := &Result{
		Servers: 3, Nodes: 1000, Jobs: 1000, PerJob: 10, Allocs: 10000,
		AllocsPerSec: 5123.4, CommitP50: 12300 * time.Microsecond, CommitP99: 88 * time.Millisecond,
		ServerMemory: []ServerMemory{{PID: 1, Peak: 300 << 20}, {PID: 2, Peak: 412 << 20}},
	}
	must.Eq(t, "W2 servers=3 nodes=1000 allocs=10000 per_job=10 allocs_per_sec=5123 p50_ms=12.3 p99_ms=88.0 peak_rss_mb=412", r.Line("W2"))
}

func TestProgressLine(t *testing.T) {
	got := progressLine(2500, 1000, 10000, 2*time.Second+300*time.Millisecond)
	must.Eq(t, "[=======>                      ] 2,500/10,000 committed  1,000 running  1,086/s  2s", got)
	must.StrContains(t, progressLine(10, 10, 10, time.Second), "[==============================]")
	must.Eq(t, "1,234,567", thousands(1234567))
	must.Eq(t, "999", thousands(999))
}
