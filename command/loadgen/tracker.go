package loadgen

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// allocSeen records how far an allocation got.
type allocSeen uint8

const (
	allocCommitted allocSeen = iota + 1
	allocRunning
)

// jobTrack is one job's timeline.
type jobTrack struct {
	// sent is when its registration was sent, accepted when the API
	// answered; zero while not yet sent.
	sent, accepted time.Time
	committed      int
	running        int
	// committedAt and runningAt are set when the last allocation was
	// committed, resp. reported running.
	committedAt, runningAt time.Time
}

// tracker follows every job of the run from the event stream. The
// submitters and the stream reader call it concurrently.
type tracker struct {
	prefix string
	count  int

	mu     sync.Mutex
	jobs   []jobTrack
	allocs map[string]allocSeen
	// committed and running count allocations over all jobs; jobsDone
	// the jobs finished in the sense of waitRunning.
	committed, running, jobsDone int
	waitRunning                  bool
	// first and last are the first registration sent and the last
	// allocation committed.
	first, lastCommit time.Time
	evals             map[string]string
	done              chan struct{}
	// throttled counts registrations answered 429 (backpressure).
	throttled atomic.Int64
}

func newTracker(prefix string, jobs, count int, waitRunning bool) *tracker {
	return &tracker{
		prefix:      prefix,
		count:       count,
		jobs:        make([]jobTrack, jobs),
		allocs:      make(map[string]allocSeen, jobs*count),
		evals:       make(map[string]string, jobs),
		waitRunning: waitRunning,
		done:        make(chan struct{}),
	}
}

// sent records that job i's registration is being sent at t.
func (t *tracker) sent(i int, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.jobs[i].sent = at
	if t.first.IsZero() || at.Before(t.first) {
		t.first = at
	}
}

// accepted records that the API accepted job i's registration at t.
func (t *tracker) accepted(i int, at time.Time) {
	t.mu.Lock()
	t.jobs[i].accepted = at
	t.mu.Unlock()
}

// alloc records an allocation event seen at t: the first event of an
// allocation means it is committed; a client status of running or
// beyond means it started.
func (t *tracker) alloc(id, jobID, clientStatus string, at time.Time) {
	i, ok := jobIndex(t.prefix, jobID)
	if !ok || i >= len(t.jobs) {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	j := &t.jobs[i]
	seen := t.allocs[id]
	if seen == 0 {
		seen = allocCommitted
		t.committed++
		j.committed++
		t.lastCommit = at
		if j.committed == t.count {
			j.committedAt = at
			t.jobFinished(j)
		}
	}
	if seen < allocRunning && started(clientStatus) {
		seen = allocRunning
		t.running++
		j.running++
		if j.running == t.count {
			j.runningAt = at
			t.jobFinished(j)
		}
	}
	t.allocs[id] = seen
}

// started reports a client status of an allocation that has run.
func started(status string) bool {
	switch status {
	case "running", "complete", "failed":
		return true
	}
	return false
}

// jobFinished counts j done once it reached what the run waits for, and
// closes done when every job has; t.mu is held.
func (t *tracker) jobFinished(j *jobTrack) {
	if j.committedAt.IsZero() || (t.waitRunning && j.runningAt.IsZero()) {
		return
	}
	t.jobsDone++
	if t.jobsDone == len(t.jobs) {
		close(t.done)
	}
}

// eval records an evaluation's latest status.
func (t *tracker) eval(id, jobID, status string) {
	if _, ok := jobIndex(t.prefix, jobID); !ok {
		return
	}
	t.mu.Lock()
	t.evals[id] = status
	t.mu.Unlock()
}

// progress returns the allocations committed and running so far.
func (t *tracker) progress() (committed, running int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.committed, t.running
}

// latencies are the per-job latencies of a run.
type latencies struct {
	// commit is register sent → last allocation committed, run the same
	// to last allocation running, accept register sent → API answer.
	commit, run, accept []time.Duration
}

// summary returns the run's timeline: the latencies of the jobs that got
// that far, the first registration sent and the last commit, and the
// evals by status.
func (t *tracker) summary() (latencies, time.Time, time.Time, map[string]int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var l latencies
	for _, j := range t.jobs {
		if j.sent.IsZero() {
			continue
		}
		if !j.accepted.IsZero() {
			l.accept = append(l.accept, j.accepted.Sub(j.sent))
		}
		if !j.committedAt.IsZero() {
			l.commit = append(l.commit, j.committedAt.Sub(j.sent))
		}
		if !j.runningAt.IsZero() {
			l.run = append(l.run, j.runningAt.Sub(j.sent))
		}
	}
	evals := map[string]int{}
	for _, st := range t.evals {
		evals[st]++
	}
	return l, t.first, t.lastCommit, evals
}

// percentile returns the p-th percentile (0 < p <= 100) of ds by the
// nearest-rank method; zero for none.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := int(p/100*float64(len(s))+0.999999) - 1
	return s[min(max(rank, 0), len(s)-1)]
}
