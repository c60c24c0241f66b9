package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/opennomad/nomad/api"
)

// jobRecord is what the load knows of one job from the answers it got.
// Each job belongs to one worker, so its operations never overlap.
type jobRecord struct {
	ID    string
	Count int
	// Stopped: the last acknowledged operation was a stop.
	Stopped bool
	// Uncertain: an operation on the job failed without an answer, so
	// it may or may not have been applied; the job is left alone after.
	Uncertain bool
}

// ledger is every job the load touched and every operation's outcome.
type ledger struct {
	mu   sync.Mutex
	jobs map[string]*jobRecord
	ops  map[string][2]int // kind → {acknowledged, failed}
	// lastErr is the last error of each kind of operation, for the
	// summary.
	lastErr map[string]string
	// drained are the nodes whose drain the load started and has not
	// ended.
	drained map[string]bool
}

func newLedger() *ledger {
	return &ledger{jobs: map[string]*jobRecord{}, ops: map[string][2]int{}, lastErr: map[string]string{}, drained: map[string]bool{}}
}

func (l *ledger) count(kind string, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := l.ops[kind]
	if err == nil {
		n[0]++
	} else {
		n[1]++
		l.lastErr[kind] = err.Error()
	}
	l.ops[kind] = n
}

// snapshot copies the job records.
func (l *ledger) snapshot() []jobRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]jobRecord, 0, len(l.jobs))
	for _, j := range l.jobs {
		out = append(out, *j)
	}
	return out
}

// load is the traffic the cluster serves during the faults: job
// registrations, updates (a new count and version), stops, and node
// drains started and ended, through the HTTP API of a random server
// (a request to a down or isolated server simply fails).
type load struct {
	c       *cluster
	l       *ledger
	nodes   []string
	workers int
	maxJobs int
	seed    uint64
	// pause is the wait between two operations of a worker.
	pause time.Duration
}

// jobSpec is a service job of count allocations of one mock_driver
// task asking for cpu MHz and 64 MB.
func jobSpec(id string, count, cpu, rev int) *api.Job {
	task := api.NewTask("work", "mock_driver")
	task.Config = map[string]any{"run_for": "0s"}
	task.Resources = &api.Resources{CPU: ptr(cpu), MemoryMB: ptr(64)}
	tg := api.NewTaskGroup("g", count)
	tg.Tasks = []*api.Task{task}
	tg.EphemeralDisk = &api.EphemeralDisk{SizeMB: ptr(300)}
	tg.ReschedulePolicy = &api.ReschedulePolicy{Delay: ptr(5 * time.Second), DelayFunction: ptr("constant"), Unlimited: ptr(true)}
	return &api.Job{ID: ptr(id), Name: ptr(id), Type: ptr("service"), Datacenters: []string{"*"},
		TaskGroups: []*api.TaskGroup{tg}, Meta: map[string]string{"rev": fmt.Sprint(rev)}}
}

func ptr[T any](v T) *T { return &v }

// run drives the workers until ctx ends.
func (ld *load) run(ctx context.Context) {
	var wg sync.WaitGroup
	for w := range ld.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ld.worker(ctx, w)
		}()
	}
	wg.Wait()
}

func (ld *load) worker(ctx context.Context, w int) {
	r := rand.New(rand.NewPCG(ld.seed, uint64(w)))
	var mine []*jobRecord
	next := 0
	for ctx.Err() == nil {
		s := ld.c.servers[r.IntN(len(ld.c.servers))]
		client := s.api(10 * time.Second)
		var live []*jobRecord
		for _, j := range mine {
			if !j.Uncertain && !j.Stopped {
				live = append(live, j)
			}
		}
		switch p := r.IntN(100); {
		case p < 10 && len(ld.nodes) > 0:
			ld.drain(client, ld.nodes[r.IntN(len(ld.nodes))])
		case len(live) < ld.maxJobs && (p < 55 || len(live) == 0):
			j := &jobRecord{ID: fmt.Sprintf("chaos-w%d-%d", w, next), Count: 1 + r.IntN(4)}
			next++
			_, _, err := client.Jobs().Register(jobSpec(j.ID, j.Count, 100+100*r.IntN(3), 0), nil)
			ld.l.count("register", err)
			j.Uncertain = err != nil
			ld.l.mu.Lock()
			ld.l.jobs[j.ID] = j
			ld.l.mu.Unlock()
			mine = append(mine, j)
		case p < 85:
			j := live[r.IntN(len(live))]
			count := 1 + r.IntN(4)
			_, _, err := client.Jobs().Register(jobSpec(j.ID, count, 100+100*r.IntN(3), r.IntN(1000)), nil)
			ld.l.count("update", err)
			ld.l.mu.Lock()
			if err != nil {
				j.Uncertain = true
			} else {
				j.Count = count
			}
			ld.l.mu.Unlock()
		default:
			j := live[r.IntN(len(live))]
			_, _, err := client.Jobs().Deregister(j.ID, false, nil)
			ld.l.count("stop", err)
			ld.l.mu.Lock()
			if err != nil {
				j.Uncertain = true
			} else {
				j.Stopped = true
			}
			ld.l.mu.Unlock()
		}
		select {
		case <-ctx.Done():
		case <-time.After(ld.pause):
		}
	}
}

// drain starts a drain (5 s deadline) of a node that is not draining,
// or ends the drain of one that is and makes it eligible again. At most
// a quarter of the nodes drain at once.
func (ld *load) drain(client *api.Client, node string) {
	ld.l.mu.Lock()
	draining, n := ld.l.drained[node], len(ld.l.drained)
	ld.l.mu.Unlock()
	if !draining && n >= max(1, len(ld.nodes)/4) {
		return
	}
	var err error
	if draining {
		_, _, err = client.Nodes().UpdateDrain(node, nil, true, nil)
		ld.l.count("undrain", err)
	} else {
		_, _, err = client.Nodes().UpdateDrain(node, &api.DrainSpec{Deadline: 5 * time.Second}, false, nil)
		ld.l.count("drain", err)
	}
	if err == nil || !draining {
		// A failed drain may have been applied: remember it so that the
		// end of the run undrains it.
		ld.l.mu.Lock()
		if draining {
			delete(ld.l.drained, node)
		} else {
			ld.l.drained[node] = true
		}
		ld.l.mu.Unlock()
	}
}

// undrainAll ends every drain the load started, retrying through the
// leader until each is acknowledged.
func (ld *load) undrainAll(ctx context.Context) error {
	ld.l.mu.Lock()
	var nodes []string
	for n := range ld.l.drained {
		nodes = append(nodes, n)
	}
	ld.l.mu.Unlock()
	for _, n := range nodes {
		for {
			leader, err := ld.c.waitHealthy(ctx, time.Minute)
			if err != nil {
				return err
			}
			if _, _, err = leader.api(10*time.Second).Nodes().UpdateDrain(n, nil, true, nil); err == nil {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		ld.l.mu.Lock()
		delete(ld.l.drained, n)
		ld.l.mu.Unlock()
	}
	return nil
}
