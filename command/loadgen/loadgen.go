package loadgen

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/opennomad/nomad/api"
)

// Metrics polling: often enough for agents collecting every second (as
// the cluster benchmark configures them) and never missing an interval
// of the default 10 s; at the end, long enough for the default interval
// to close.
const (
	metricsPoll   = 500 * time.Millisecond
	metricsFinish = 25 * time.Second
)

// Run registers the configured jobs and waits until every allocation is
// committed (and running, with WaitRunning), or the timeout passes, which
// is reported as an incomplete result rather than an error. Errors are
// for runs that could not start or lost the servers.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("load generator: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	prefix := cfg.IDPrefix
	if prefix == "" {
		prefix = "load-" + randomHex(4)
	}
	httpClient := &http.Client{Transport: &http.Transport{
		Proxy: nil,
		// Compressing the event stream would cost the server CPU that
		// is not part of what is measured.
		DisableCompression:  true,
		MaxIdleConnsPerHost: cfg.Concurrency + 4,
		IdleConnTimeout:     time.Minute,
	}}
	defer httpClient.CloseIdleConnections()
	clients := make([]*api.Client, len(cfg.Addresses))
	for i, addr := range cfg.Addresses {
		// The generator backs off on 429 itself, to count the refusals.
		c, err := api.NewClient(&api.Config{Address: addr, HTTPClient: httpClient, SecretID: cfg.Token, BackoffRetries: -1})
		if err != nil {
			return nil, fmt.Errorf("load generator: server %q: %w", addr, err)
		}
		clients[i] = c
	}

	res := &Result{Jobs: cfg.Jobs, PerJob: cfg.Count, Allocs: cfg.Jobs * cfg.Count, JobShape: describeJob(&cfg)}
	var err error
	if res.Servers, res.Nodes, err = clusterSize(clients[0]); err != nil {
		return nil, fmt.Errorf("load generator: %w", err)
	}
	// Subscribe after the newest index, before the first registration.
	_, qm, err := clients[0].Jobs().PrefixList(prefix)
	if err != nil {
		return nil, fmt.Errorf("load generator: reading the cluster's index: %w", err)
	}
	track := newTracker(prefix, cfg.Jobs, cfg.Count, cfg.WaitRunning)
	stream := &eventStream{address: cfg.Addresses[0], token: cfg.Token, client: httpClient, tracker: track}
	streamCtx, stopStream := context.WithCancel(ctx)
	body, err := stream.open(streamCtx, qm.LastIndex+1)
	if err != nil {
		stopStream()
		return nil, fmt.Errorf("load generator: %w", err)
	}
	streamDone := make(chan error, 1)
	go func() { streamDone <- stream.run(streamCtx, body, qm.LastIndex+1) }()
	defer func() {
		stopStream()
		<-streamDone
	}()

	rejections := newPlanRejections(clients)
	rejections.poll(ctx)
	metricsCtx, stopMetrics := context.WithCancel(ctx)
	metricsDone := make(chan struct{})
	go func() {
		defer close(metricsDone)
		rejections.follow(metricsCtx, metricsPoll)
	}()
	memBefore := make([]ProcMemory, len(cfg.ServerPIDs))
	for i, pid := range cfg.ServerPIDs {
		if memBefore[i], err = ReadProcMemory(pid); err != nil {
			stopMetrics()
			return nil, fmt.Errorf("load generator: %w", err)
		}
	}

	start := time.Now()
	stopProgress := make(chan struct{})
	progressDone := make(chan struct{})
	go func() {
		defer close(progressDone)
		if cfg.Progress != nil {
			progress(cfg.Progress, track, res.Allocs, start, 250*time.Millisecond, stopProgress)
		} else {
			<-stopProgress
		}
	}()

	submitErr := make(chan error, 1)
	go func() { submitErr <- submit(ctx, &cfg, clients, prefix, track) }()

	reconcileTick := time.NewTicker(time.Second)
	defer reconcileTick.Stop()
	var reconnects int64
	var runErr error
wait:
	for {
		select {
		case <-track.done:
			break wait
		case err := <-submitErr:
			if err != nil {
				runErr = err
				break wait
			}
			submitErr = nil
		case err := <-streamDone:
			// The stream ends by itself only on an error or when ctx ends;
			// give the value back for the deferred wait.
			streamDone <- nil
			if err == nil {
				res.Incomplete = true
			} else {
				runErr = fmt.Errorf("event stream: %w", err)
			}
			break wait
		case <-reconcileTick.C:
			if n := stream.reconnects.Load(); n > reconnects {
				reconnects = n
				res.Reconciled += reconcile(ctx, clients[0], &cfg, prefix, track)
			}
		case <-ctx.Done():
			res.Incomplete = true
			break wait
		}
	}
	close(stopProgress)
	<-progressDone
	stopMetrics()
	<-metricsDone
	if runErr != nil {
		return nil, fmt.Errorf("load generator: %w", runErr)
	}

	finishCtx, finishCancel := context.WithTimeout(context.Background(), metricsFinish)
	defer finishCancel()
	res.PlanRejections, res.PlanRejectionsKnown = rejections.finish(finishCtx, time.Now(), metricsPoll)
	for i, pid := range cfg.ServerPIDs {
		after, err := ReadProcMemory(pid)
		if err != nil {
			return nil, fmt.Errorf("load generator: %w", err)
		}
		res.ServerMemory = append(res.ServerMemory, ServerMemory{
			PID: pid, Before: memBefore[i].RSS, After: after.RSS, Peak: after.Peak,
		})
	}
	fill(res, track)
	res.StreamReconnects = int(stream.reconnects.Load())
	res.Throttled = int(track.throttled.Load())
	return res, nil
}

// fill computes the result's figures from the tracker.
func fill(res *Result, track *tracker) {
	lat, first, lastCommit, evals := track.summary()
	res.Committed, res.Running = track.progress()
	res.Start, res.LastCommit, res.Evals = first, lastCommit, evals
	if d := lastCommit.Sub(first); d > 0 {
		res.AllocsPerSec = float64(res.Committed) / d.Seconds()
	}
	track.mu.Lock()
	for _, j := range track.jobs {
		if j.accepted.After(res.Submitted) {
			res.Submitted = j.accepted
		}
	}
	track.mu.Unlock()
	res.AcceptP50, res.AcceptP99 = percentile(lat.accept, 50), percentile(lat.accept, 99)
	res.CommitP50, res.CommitP99 = percentile(lat.commit, 50), percentile(lat.commit, 99)
	res.CommitP999, res.CommitMax = percentile(lat.commit, 99.9), percentile(lat.commit, 100)
	res.RunningP50, res.RunningP99 = percentile(lat.run, 50), percentile(lat.run, 99)
}

// clusterSize returns the number of Raft peers and of ready nodes.
func clusterSize(c *api.Client) (servers, nodes int, err error) {
	peers, err := c.Status().Peers()
	if err != nil {
		return 0, 0, fmt.Errorf("reading the servers: %w", err)
	}
	list, _, err := c.Nodes().List(nil)
	if err != nil {
		return 0, 0, fmt.Errorf("reading the nodes: %w", err)
	}
	for _, n := range list {
		if n.Status == "ready" && n.SchedulingEligibility == "eligible" && !n.Drain {
			nodes++
		}
	}
	return len(peers), nodes, nil
}

// submit registers the jobs, Concurrency at a time, paced at Rate when
// set. A registration the servers fail is retried a few times (a leader
// election, a full queue); one they refuse ends the run.
func submit(ctx context.Context, cfg *Config, clients []*api.Client, prefix string, track *tracker) error {
	work := make(chan int)
	errCh := make(chan error, cfg.Concurrency)
	var wg sync.WaitGroup
	for w := range cfg.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				c := clients[(w+i)%len(clients)]
				if err := register(ctx, c, buildJob(cfg, prefix, i), i, track); err != nil {
					errCh <- err
					return
				}
			}
		}()
	}
	start := time.Now()
	var err error
feed:
	for i := range cfg.Jobs {
		if cfg.Rate > 0 {
			due := start.Add(time.Duration(float64(i) / cfg.Rate * float64(time.Second)))
			if d := time.Until(due); d > 0 {
				select {
				case <-time.After(d):
				case <-ctx.Done():
					break feed
				}
			}
		}
		select {
		case work <- i:
		case err = <-errCh:
			break feed
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	if err == nil {
		select {
		case err = <-errCh:
		default:
		}
	}
	return err
}

// maxThrottled bounds the 429 answers one registration takes before the
// run gives up on it: with waits of a second or more, minutes of a
// server refusing, which is no longer a backlog draining.
const maxThrottled = 200

// register sends one job, retrying failures that are not the job's
// fault. A 429 (the servers' backpressure, or an agent's rate limit) is
// counted and waited out as its Retry-After says, with jitter, apart
// from the few retries of other failures.
func register(ctx context.Context, c *api.Client, job *api.Job, i int, track *tracker) error {
	track.sent(i, time.Now())
	throttled := 0
	for attempt := 1; ; attempt++ {
		_, _, err := c.Jobs().Register(job, nil)
		if err == nil {
			track.accepted(i, time.Now())
			return nil
		}
		if wait, ok := api.RetryDelay(err); ok && throttled < maxThrottled {
			throttled++
			track.throttled.Add(1)
			attempt--
			select {
			case <-time.After(wait):
				continue
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if code, ok := api.StatusCodeOf(err); ok && code >= 400 && code < 500 {
			return fmt.Errorf("job %q refused: %w", *job.ID, err)
		}
		if attempt == 5 || ctx.Err() != nil {
			return fmt.Errorf("registering job %q: %w", *job.ID, err)
		}
		select {
		case <-time.After(time.Duration(attempt) * 200 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// reconcile reads through the API the allocations of every job the
// event stream may have missed events of, and returns how many jobs it
// read.
func reconcile(ctx context.Context, c *api.Client, cfg *Config, prefix string, track *tracker) int {
	var pending []int
	track.mu.Lock()
	for i, j := range track.jobs {
		if !j.accepted.IsZero() && (j.committedAt.IsZero() || (cfg.WaitRunning && j.runningAt.IsZero())) {
			pending = append(pending, i)
		}
	}
	track.mu.Unlock()
	work := make(chan int)
	var wg sync.WaitGroup
	for range min(8, len(pending)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				id := jobID(prefix, i)
				allocs, _, err := c.Jobs().Allocations(id, false, nil)
				if err != nil {
					continue
				}
				now := time.Now()
				for _, a := range allocs {
					track.alloc(a.ID, id, a.ClientStatus, now)
				}
			}
		}()
	}
	for _, i := range pending {
		if ctx.Err() != nil {
			break
		}
		work <- i
	}
	close(work)
	wg.Wait()
	return len(pending)
}

// randomHex returns n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
