package nodesim

import (
	"time"

	"github.com/opennomad/nomad/structs"
)

// watch follows the node's allocations as a client does: a blocking
// Node.GetClientAllocs returns the IDs with their AllocModifyIndex, and
// only new or changed allocations are fetched in full (Alloc.GetAllocs).
// The first query reads the leader's state; later ones accept any
// server's. It returns when the simulator stops (after the pending query
// answers).
func (s *Simulator) watch(n *simNode) {
	var index uint64
	failures := 0
	for !s.stopped() {
		req := &structs.NodeSpecificRequest{
			NodeID:   n.id,
			SecretID: n.secretID,
			QueryOptions: structs.QueryOptions{
				Region:        s.cfg.Region,
				MinQueryIndex: index,
				MaxQueryTime:  s.cfg.WatchWait,
				AllowStale:    index > 0,
			},
		}
		var resp structs.NodeClientAllocsResponse
		err := s.servers.read(n, "Node.GetClientAllocs", req, &resp)
		s.stats.watchCalls.Add(1)
		if err == nil && resp.Index > index {
			if err = s.sync(n, resp.Allocs); err == nil {
				index = resp.Index
			}
		}
		if err != nil {
			if s.stopped() {
				return
			}
			failures++
			s.stats.watchErrors.Add(1)
			s.logger.Warn("watching a node's allocations failed", "node", n.name, "error", err)
			if !s.sleep(backoff(failures)) {
				return
			}
			continue
		}
		failures = 0
	}
}

// sync brings the node's view in line with the servers' alloc index:
// allocations it has not seen or that changed are fetched and handled,
// and those the servers dropped are forgotten.
func (s *Simulator) sync(n *simNode, serverIndex map[string]uint64) error {
	var stale []string
	var newest uint64
	n.mu.Lock()
	for id, idx := range serverIndex {
		if a, ok := n.allocs[id]; !ok || a.modifyIndex < idx {
			stale = append(stale, id)
			newest = max(newest, idx)
		}
	}
	for id := range n.allocs {
		if _, ok := serverIndex[id]; !ok {
			delete(n.allocs, id)
		}
	}
	n.mu.Unlock()
	if len(stale) == 0 {
		return nil
	}
	req := &structs.AllocsGetRequest{
		AllocIDs: stale,
		QueryOptions: structs.QueryOptions{
			// A node's secret is its credential, as a real client's.
			AuthToken: n.secretID,
			Region:    s.cfg.Region,
			// Wait until the answering server has the newest of them.
			MinQueryIndex: newest - 1,
			MaxQueryTime:  30 * time.Second,
			AllowStale:    true,
		},
	}
	var resp structs.AllocsGetResponse
	if err := s.servers.read(n, "Alloc.GetAllocs", req, &resp); err != nil {
		return err
	}
	now := time.Now()
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, a := range resp.Allocs {
		s.handle(n, a, now)
	}
	return nil
}

// handle decides what the node's client would report for a, with n.mu
// held: a new allocation the servers want running is reported running
// (and, in a deployment, healthy once its group's min_healthy_time has
// passed, as a client whose tasks have no checks does), a batch one
// complete after BatchRunTime, and one the servers stopped complete.
func (s *Simulator) handle(n *simNode, a *structs.Allocation, now time.Time) {
	sa, known := n.allocs[a.ID]
	if !known {
		sa = newSimAlloc(a)
		n.allocs[a.ID] = sa
		s.stats.allocsSeen.Add(1)
	}
	sa.modifyIndex = a.AllocModifyIndex
	switch {
	case a.ClientTerminalStatus() || sa.reported == structs.AllocClientStatusComplete:
		// Nothing left to report.
	case a.ServerTerminalStatus():
		s.report(n, a.ID, sa, structs.AllocClientStatusComplete, false, now)
	case sa.reported == "":
		sa.startedAt = now
		s.report(n, a.ID, sa, structs.AllocClientStatusRunning, sa.healthAfter == 0, now)
		id := a.ID
		if sa.healthAfter > 0 {
			time.AfterFunc(sa.healthAfter, func() { s.healthy(n, id) })
		}
		if sa.batch {
			time.AfterFunc(s.cfg.BatchRunTime, func() { s.finish(n, id) })
		}
	}
}

// newSimAlloc remembers what reporting a needs: its tasks, whether it is
// batch work, and when it turns healthy.
func newSimAlloc(a *structs.Allocation) *simAlloc {
	sa := &simAlloc{healthAfter: -1}
	if a.Job == nil {
		return sa
	}
	sa.batch = a.Job.Type == structs.JobTypeBatch || a.Job.Type == structs.JobTypeSysBatch
	tg := a.Job.LookupTaskGroup(a.TaskGroup)
	if tg == nil {
		return sa
	}
	for _, t := range tg.Tasks {
		sa.tasks = append(sa.tasks, t.Name)
	}
	if u := tg.Update; a.DeploymentID != "" && u != nil && u.HealthCheck != "manual" {
		sa.healthAfter = max(u.MinHealthyTime, 0)
	}
	return sa
}

// healthy reports a running allocation healthy to its deployment.
func (s *Simulator) healthy(n *simNode, id string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if sa, ok := n.allocs[id]; ok && sa.reported == structs.AllocClientStatusRunning {
		s.report(n, id, sa, structs.AllocClientStatusRunning, true, time.Now())
	}
}

// finish reports a batch allocation complete, unless it ended already.
func (s *Simulator) finish(n *simNode, id string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if sa, ok := n.allocs[id]; ok && sa.reported == structs.AllocClientStatusRunning {
		s.report(n, id, sa, structs.AllocClientStatusComplete, false, time.Now())
	}
}

// report queues the client status of an allocation with its task states
// (and its deployment health when healthy), with n.mu held.
func (s *Simulator) report(n *simNode, id string, sa *simAlloc, status string, healthy bool, now time.Time) {
	first := sa.reported != status
	sa.reported = status
	update := &structs.Allocation{
		ID:           id,
		NodeID:       n.id,
		ClientStatus: status,
		TaskStates:   make(map[string]*structs.TaskState, len(sa.tasks)),
	}
	for _, t := range sa.tasks {
		ts := &structs.TaskState{State: structs.TaskStateRunning, StartedAt: sa.startedAt}
		if status == structs.AllocClientStatusComplete {
			ts.State = structs.TaskStateDead
			ts.FinishedAt = now
		}
		update.TaskStates[t] = ts
	}
	if healthy {
		update.DeploymentStatus = &structs.AllocDeploymentStatus{Healthy: &healthy, Timestamp: now}
		s.stats.allocsHealthy.Add(1)
	}
	switch {
	case !first:
	case status == structs.AllocClientStatusRunning:
		s.stats.allocsRunning.Add(1)
	case status == structs.AllocClientStatusComplete:
		s.stats.allocsComplete.Add(1)
	}
	s.reports.add(update)
}
