package loadgen

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"
)

// ServerMemory is one server process's resident memory around the run.
type ServerMemory struct {
	PID int
	// Before and After are VmRSS when the run started and ended, Peak the
	// process's VmHWM (its peak over its whole life) at the end.
	Before, After, Peak int64
}

// Result is what a run measured.
type Result struct {
	// Servers and Nodes are the cluster's Raft peers and ready nodes when
	// the run started.
	Servers, Nodes int
	Jobs, PerJob   int
	// Allocs is Jobs × PerJob; Committed and Running how many of them
	// were seen committed and started.
	Allocs, Committed, Running int
	JobShape                   string

	// Start is when the first registration was sent, LastCommit when the
	// last allocation was committed, Submitted when the last registration
	// was accepted.
	Start, LastCommit, Submitted time.Time
	// AllocsPerSec is Committed over LastCommit − Start.
	AllocsPerSec float64
	// Per-job latencies from sending the registration: until the API
	// accepted it, until its last allocation was committed and until its
	// last allocation was reported running.
	AcceptP50, AcceptP99 time.Duration
	CommitP50, CommitP99 time.Duration
	// CommitP999 is the 99.9th percentile; with fewer than 1,000 jobs it
	// is the slowest.
	CommitP999 time.Duration
	CommitMax  time.Duration
	RunningP50 time.Duration
	RunningP99 time.Duration

	// Evals counts the run's evaluations by their last status.
	Evals map[string]int
	// PlanRejections counts nodes the plan applier rejected from plans
	// during the run; PlanRejectionsKnown is false when the servers'
	// metrics could not be read throughout.
	PlanRejections      float64
	PlanRejectionsKnown bool

	// ServerMemory is per server PID given.
	ServerMemory []ServerMemory

	// StreamReconnects counts event streams that ended early (a lagging
	// subscriber is cut off) and Reconciled the jobs whose allocations
	// were then read through the API: their latencies are upper bounds.
	StreamReconnects int
	Reconciled       int
	// Throttled counts registrations the servers answered 429 (too many
	// evaluations waiting, or a rate limit); each was sent again after
	// the wait the answer named.
	Throttled int
	// Incomplete is set when the run ended (timeout, cancel) before every
	// allocation was seen.
	Incomplete bool
}

// Duration is first registration sent to last allocation committed.
func (r *Result) Duration() time.Duration { return r.LastCommit.Sub(r.Start) }

// PeakRSS is the largest peak resident memory among the servers, in
// bytes; 0 without PIDs.
func (r *Result) PeakRSS() int64 {
	var peak int64
	for _, m := range r.ServerMemory {
		peak = max(peak, m.Peak)
	}
	return peak
}

// MemoryPerAlloc is the servers' average growth of resident memory over
// the run divided by the allocations committed, in bytes; 0 when unknown.
func (r *Result) MemoryPerAlloc() float64 {
	if len(r.ServerMemory) == 0 || r.Committed == 0 {
		return 0
	}
	var growth int64
	for _, m := range r.ServerMemory {
		growth += m.After - m.Before
	}
	return float64(growth) / float64(len(r.ServerMemory)) / float64(r.Committed)
}

// Line is the result on one line, as benchmark tooling greps it:
// "W2 servers=3 nodes=1000 allocs=10000 per_job=10 allocs_per_sec=… p50_ms=… p99_ms=… peak_rss_mb=…".
func (r *Result) Line(workload string) string {
	return fmt.Sprintf("%s servers=%d nodes=%d allocs=%d per_job=%d allocs_per_sec=%.0f p50_ms=%.1f p99_ms=%.1f peak_rss_mb=%.0f",
		workload, r.Servers, r.Nodes, r.Allocs, r.PerJob, r.AllocsPerSec,
		ms(r.CommitP50), ms(r.CommitP99), float64(r.PeakRSS())/(1<<20))
}

// Report writes the whole result for people.
func (r *Result) Report(w io.Writer) {
	fmt.Fprintf(w, "jobs:            %s × %s (%s)\n", thousands(r.Jobs), thousands(r.PerJob), r.JobShape)
	fmt.Fprintf(w, "cluster:         %d servers, %s ready nodes\n", r.Servers, thousands(r.Nodes))
	fmt.Fprintf(w, "committed:       %s of %s allocations in %s: %s allocs/s\n",
		thousands(r.Committed), thousands(r.Allocs), r.Duration().Round(time.Millisecond), thousands(int(r.AllocsPerSec)))
	fmt.Fprintf(w, "running:         %s reported running\n", thousands(r.Running))
	if !r.Submitted.IsZero() {
		d := r.Submitted.Sub(r.Start)
		fmt.Fprintf(w, "submission:      %s jobs in %s (%.0f jobs/s), accepted p50 %.1f ms p99 %.1f ms\n",
			thousands(r.Jobs), d.Round(time.Millisecond), float64(r.Jobs)/max(d.Seconds(), 1e-9), ms(r.AcceptP50), ms(r.AcceptP99))
	}
	fmt.Fprintf(w, "register→committed: p50 %.1f ms  p99 %.1f ms  p99.9 %.1f ms  max %.1f ms\n",
		ms(r.CommitP50), ms(r.CommitP99), ms(r.CommitP999), ms(r.CommitMax))
	fmt.Fprintf(w, "register→running:   p50 %.1f ms  p99 %.1f ms\n", ms(r.RunningP50), ms(r.RunningP99))
	fmt.Fprintf(w, "evaluations:     %s\n", formatCounts(r.Evals))
	if r.PlanRejectionsKnown {
		fmt.Fprintf(w, "plan rejections: %.0f nodes rejected\n", r.PlanRejections)
	} else {
		fmt.Fprintf(w, "plan rejections: unknown (the servers' /v1/metrics could not be read throughout)\n")
	}
	for _, m := range r.ServerMemory {
		fmt.Fprintf(w, "server pid %d:  RSS %.0f → %.0f MB, peak %.0f MB\n", m.PID, mb(m.Before), mb(m.After), mb(m.Peak))
	}
	if len(r.ServerMemory) > 0 {
		fmt.Fprintf(w, "server memory:   %.2f KB per allocation (average RSS growth per server)\n", r.MemoryPerAlloc()/1024)
	}
	if r.StreamReconnects > 0 {
		fmt.Fprintf(w, "event stream:    reopened %d times; %d jobs read back through the API (latencies are upper bounds)\n",
			r.StreamReconnects, r.Reconciled)
	}
	if r.Throttled > 0 {
		fmt.Fprintf(w, "backpressure:    %s registrations answered 429 and sent again after Retry-After\n", thousands(r.Throttled))
	}
	if r.Incomplete {
		fmt.Fprintf(w, "INCOMPLETE:      the run ended before every allocation was seen\n")
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func mb(b int64) float64 { return float64(b) / (1 << 20) }

// formatCounts renders "complete=10 blocked=1" in key order.
func formatCounts(m map[string]int) string {
	if len(m) == 0 {
		return "none seen"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s=%d", k, m[k]))
	}
	return strings.Join(parts, " ")
}
