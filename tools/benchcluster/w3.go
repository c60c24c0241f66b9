package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"syscall"
	"time"

	"github.com/opennomad/nomad/api"
)

// w3Outcome is what the failover measured.
type w3Outcome struct {
	// Failover is SIGKILL of the leader until every survivor names the
	// same new leader; FirstPlacement until a job registered right after
	// the kill has its allocation running.
	Failover, FirstPlacement time.Duration
	// JobsBefore were running before the kill; Missing lists what a
	// survivor no longer had afterwards (jobs or allocations).
	JobsBefore int
	Missing    []string
}

// Line is the result as benchmark tooling greps it.
func (w *w3Outcome) Line() string {
	return fmt.Sprintf("W3 failover_s=%.2f first_placement_s=%.2f", w.Failover.Seconds(), w.FirstPlacement.Seconds())
}

// w3Jobs is the number of jobs running before the kill.
const w3Jobs = 6

// mockJob is a service job of one mock_driver allocation that runs until
// stopped.
func mockJob(id string) *api.Job {
	task := api.NewTask("work", "mock_driver")
	// mock_driver tasks without run_for exit at once (as Nomad's).
	task.Config = map[string]any{"run_for": "24h"}
	task.Resources = &api.Resources{CPU: ptr(20), MemoryMB: ptr(16)}
	tg := api.NewTaskGroup("g", 1)
	tg.Tasks = []*api.Task{task}
	return &api.Job{ID: ptr(id), Name: ptr(id), Type: ptr("service"), Datacenters: []string{"*"}, TaskGroups: []*api.TaskGroup{tg}}
}

func ptr[T any](v T) *T { return &v }

// runningAlloc returns the ID of the job's running allocation as a's
// local state has it, "" if none.
func runningAlloc(a *agent, jobID string) string {
	allocs, _, err := a.api().Jobs().Allocations(jobID, false, &api.QueryOptions{AllowStale: true})
	if err != nil {
		return ""
	}
	for _, al := range allocs {
		if al.ClientStatus == "running" {
			return al.ID
		}
	}
	return ""
}

// poll calls cond every interval until it holds or ctx ends.
func poll(ctx context.Context, interval time.Duration, what string, cond func() bool) error {
	for !cond() {
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		case <-time.After(interval):
		}
	}
	return nil
}

// runW3 runs the failover: three servers and one real client (running
// mock_driver tasks), jobs running, SIGKILL of the leader.
func runW3(ctx context.Context, o *options) (*w3Outcome, error) {
	c, err := startCluster(o.bin, 3, true, serverOpts{})
	if err != nil {
		return nil, err
	}
	defer o.cleanup(c)
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	leader, err := c.waitLeader(ctx)
	if err != nil {
		return nil, err
	}
	if err := poll(ctx, 50*time.Millisecond, "the client node to be ready", func() bool {
		nodes, _, err := leader.api().Nodes().List(nil)
		return err == nil && len(nodes) == 1 && nodes[0].Status == "ready"
	}); err != nil {
		return nil, err
	}

	out := &w3Outcome{JobsBefore: w3Jobs}
	var jobs []string
	for i := range w3Jobs {
		id := fmt.Sprintf("before-%d", i)
		if _, _, err := c.servers[i%len(c.servers)].api().Jobs().Register(mockJob(id), nil); err != nil {
			return nil, fmt.Errorf("registering %s: %w", id, err)
		}
		jobs = append(jobs, id)
	}
	allocs := map[string]string{}
	if err := poll(ctx, 50*time.Millisecond, "every job's allocation to run", func() bool {
		for _, id := range jobs {
			if allocs[id] == "" {
				allocs[id] = runningAlloc(leader, id)
			}
			if allocs[id] == "" {
				return false
			}
		}
		return true
	}); err != nil {
		return nil, err
	}

	killedAt := time.Now()
	leader.proc.Stop(syscall.SIGKILL, 0)
	survivors := c.running()
	registered := make(chan error, 1)
	go func() {
		// Registered at once through a survivor, retried while there is
		// no leader to take it.
		var err error
		for ctx.Err() == nil {
			if _, _, err = survivors[0].api().Jobs().Register(mockJob("after-failover"), nil); err == nil {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		registered <- err
	}()
	if err := poll(ctx, 10*time.Millisecond, "the survivors to agree on a new leader", func() bool {
		l := c.agreedLeader()
		return l != nil && l != leader
	}); err != nil {
		return nil, err
	}
	out.Failover = time.Since(killedAt)
	if err := poll(ctx, 10*time.Millisecond, "the new job's allocation to run", func() bool {
		return runningAlloc(survivors[0], "after-failover") != ""
	}); err != nil {
		return nil, err
	}
	out.FirstPlacement = time.Since(killedAt)
	if err := <-registered; err != nil {
		return nil, fmt.Errorf("registering after the failover: %w", err)
	}

	for _, s := range survivors {
		list, _, err := s.api().Jobs().List(&api.QueryOptions{AllowStale: true})
		if err != nil {
			return nil, err
		}
		var ids []string
		for _, j := range list {
			ids = append(ids, j.ID)
		}
		for _, id := range append(slices.Clone(jobs), "after-failover") {
			if !slices.Contains(ids, id) {
				out.Missing = append(out.Missing, fmt.Sprintf("%s: job %s", s.name, id))
			}
		}
		for id, allocID := range allocs {
			al, _, err := s.api().Allocations().Info(allocID, &api.QueryOptions{AllowStale: true})
			if err != nil || al == nil || al.JobID != id {
				out.Missing = append(out.Missing, fmt.Sprintf("%s: allocation %s of %s", s.name, allocID, id))
			}
		}
	}
	if len(out.Missing) > 0 {
		return out, errors.New("W3: data registered before the kill is missing after it")
	}
	return out, nil
}
