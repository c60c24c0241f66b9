package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/opennomad/nomad/command/loadgen"
)

// What the servers hold during a flood: -sample prints it at an interval
// (to show that garbage collection keeps it bounded), -drain waits for
// the evaluations left pending when the last allocation is committed.

// stateSample is one reading of the cluster's state.
type stateSample struct {
	Jobs, Evals, Allocs int
	// EvalsByStatus counts the evaluations by status.
	EvalsByStatus map[string]int
	// HeapLive is each server's live heap by name, as the leader last
	// gathered it (nomad.backpressure.heap_live_bytes).
	HeapLive map[string]float64
	// RSS is each server process's resident memory, in server order.
	RSS []int64
}

// getJSON decodes a GET of path on a into out.
func (c *cluster) getJSON(ctx context.Context, a *agent, path string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.httpAddr()+path, nil)
	if err != nil {
		return err
	}
	if c.token != "" {
		req.Header.Set("X-Nomad-Token", c.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("GET %s: %s: %s", path, resp.Status, strings.TrimSpace(string(b)))
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// sampleState reads the lists from a follower (stale reads, sparing the
// leader) and the heaps from the leader's metrics.
func (c *cluster) sampleState(ctx context.Context, leader, follower *agent) (*stateSample, error) {
	s := &stateSample{EvalsByStatus: map[string]int{}, HeapLive: map[string]float64{}}
	var jobs, allocs []struct{ ID string }
	var evals []struct{ Status string }
	if err := c.getJSON(ctx, follower, "/v1/jobs?stale=true", &jobs); err != nil {
		return nil, err
	}
	if err := c.getJSON(ctx, follower, "/v1/evaluations?stale=true", &evals); err != nil {
		return nil, err
	}
	if err := c.getJSON(ctx, follower, "/v1/allocations?stale=true", &allocs); err != nil {
		return nil, err
	}
	s.Jobs, s.Evals, s.Allocs = len(jobs), len(evals), len(allocs)
	for _, e := range evals {
		s.EvalsByStatus[e.Status]++
	}
	var m struct {
		Gauges []struct {
			Name   string
			Value  float64
			Labels map[string]string
		}
	}
	if err := c.getJSON(ctx, leader, "/v1/metrics", &m); err != nil {
		return nil, err
	}
	for _, g := range m.Gauges {
		if strings.HasSuffix(g.Name, "backpressure.heap_live_bytes") {
			s.HeapLive[g.Labels["server"]] = g.Value
		}
	}
	for _, srv := range c.servers {
		mem, err := loadgen.ReadProcMemory(srv.proc.Pid())
		if err != nil {
			return nil, err
		}
		s.RSS = append(s.RSS, mem.RSS)
	}
	return s, nil
}

// line renders a sample for the log.
func (s *stateSample) line(elapsed time.Duration) string {
	var heaps, statuses, rss []string
	names := make([]string, 0, len(s.HeapLive))
	for n := range s.HeapLive {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		heaps = append(heaps, fmt.Sprintf("%s %.0f", n, s.HeapLive[n]/(1<<20)))
	}
	for _, st := range []string{"pending", "blocked", "complete", "failed", "canceled"} {
		if n := s.EvalsByStatus[st]; n > 0 {
			statuses = append(statuses, fmt.Sprintf("%s %d", st, n))
		}
	}
	for _, r := range s.RSS {
		rss = append(rss, fmt.Sprintf("%.0f", float64(r)/(1<<20)))
	}
	return fmt.Sprintf("state %6.0fs: jobs %d, evals %d (%s), allocs %d; live heap MB: %s; RSS MB: %s",
		elapsed.Seconds(), s.Jobs, s.Evals, strings.Join(statuses, ", "), s.Allocs,
		strings.Join(heaps, ", "), strings.Join(rss, ", "))
}

// sampleEvery prints a sample every interval until ctx ends.
func (c *cluster) sampleEvery(ctx context.Context, interval time.Duration, leader, follower *agent) {
	start := time.Now()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s, err := c.sampleState(ctx, leader, follower)
		if err != nil {
			if ctx.Err() == nil {
				fmt.Fprintln(os.Stderr, "benchcluster: sampling state:", err)
			}
			continue
		}
		fmt.Fprintln(os.Stderr, s.line(time.Since(start)))
	}
}

// pendingEvals counts the evaluations the leader has pending.
func (c *cluster) pendingEvals(ctx context.Context, leader *agent) (int, error) {
	var evals []struct{ ID string }
	err := c.getJSON(ctx, leader, "/v1/evaluations?filter="+url.QueryEscape(`Status == "pending"`), &evals)
	return len(evals), err
}

// waitDrained waits until the leader has no pending evaluation and
// returns how many there were at first and how long they took.
func (c *cluster) waitDrained(ctx context.Context, leader *agent) (int, time.Duration, error) {
	start := time.Now()
	first := -1
	for {
		n, err := c.pendingEvals(ctx, leader)
		if err != nil {
			return first, time.Since(start), err
		}
		if first < 0 {
			first = n
		}
		if n == 0 {
			return first, time.Since(start), nil
		}
		select {
		case <-ctx.Done():
			return first, time.Since(start), fmt.Errorf("%d evaluations still pending: %w", n, ctx.Err())
		case <-time.After(time.Second):
		}
	}
}

// evalTriggers counts the evaluations by what triggered them, and the
// jobs with more than one deployment-watcher evaluation.
func (c *cluster) evalTriggers(ctx context.Context, a *agent) (map[string]int, int, error) {
	var evals []struct{ JobID, TriggeredBy string }
	if err := c.getJSON(ctx, a, "/v1/evaluations?stale=true", &evals); err != nil {
		return nil, 0, err
	}
	byTrigger := map[string]int{}
	watcher := map[string]int{}
	for _, e := range evals {
		byTrigger[e.TriggeredBy]++
		if e.TriggeredBy == "deployment-watcher" {
			watcher[e.JobID]++
		}
	}
	dup := 0
	for _, n := range watcher {
		if n > 1 {
			dup++
		}
	}
	return byTrigger, dup, nil
}
