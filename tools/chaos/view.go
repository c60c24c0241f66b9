package main

import (
	"crypto/sha256"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/opennomad/nomad/api"
)

// view is one server's committed state as its own stale reads show it.
type view struct {
	server string
	// applied is the server's last applied Raft index.
	applied uint64
	jobs    map[string]*api.Job
	allocs  []*api.AllocationListStub
	evals   []*api.Evaluation
	nodes   []*api.NodeListStub
	// deployments are read for the alloc-count check only; the digest
	// leaves them out.
	deployments []*api.Deployment
}

// readView reads s's state without forwarding to the leader.
func readView(s *server) (*view, error) {
	c := s.api(30 * time.Second)
	stale := &api.QueryOptions{AllowStale: true}
	v := &view{server: s.name, jobs: map[string]*api.Job{}}
	var err error
	if v.applied, err = appliedIndex(s); err != nil {
		return nil, err
	}
	stubs, _, err := c.Jobs().List(stale)
	if err != nil {
		return nil, fmt.Errorf("%s: jobs: %w", s.name, err)
	}
	for _, st := range stubs {
		j, _, err := c.Jobs().Info(st.ID, stale)
		if err != nil {
			return nil, fmt.Errorf("%s: job %s: %w", s.name, st.ID, err)
		}
		v.jobs[st.ID] = j
	}
	if v.allocs, _, err = c.Allocations().List(&api.QueryOptions{AllowStale: true, Params: map[string]string{"resources": "true"}}); err != nil {
		return nil, fmt.Errorf("%s: allocations: %w", s.name, err)
	}
	if v.evals, _, err = c.Evaluations().List(stale); err != nil {
		return nil, fmt.Errorf("%s: evaluations: %w", s.name, err)
	}
	if v.nodes, _, err = c.Nodes().List(&api.QueryOptions{AllowStale: true, Params: map[string]string{"resources": "true"}}); err != nil {
		return nil, fmt.Errorf("%s: nodes: %w", s.name, err)
	}
	if v.deployments, _, err = c.Deployments().List(stale); err != nil {
		return nil, fmt.Errorf("%s: deployments: %w", s.name, err)
	}
	return v, nil
}

// readPlacements reads only s's allocations and nodes, for the checks
// made after every fault.
func readPlacements(s *server) (*view, error) {
	c := s.api(5 * time.Second)
	v := &view{server: s.name}
	var err error
	opts := &api.QueryOptions{AllowStale: true, Params: map[string]string{"resources": "true"}}
	if v.allocs, _, err = c.Allocations().List(opts); err != nil {
		return nil, err
	}
	if v.nodes, _, err = c.Nodes().List(opts); err != nil {
		return nil, err
	}
	return v, nil
}

// appliedIndex is the last Raft index s has applied to its state.
func appliedIndex(s *server) (uint64, error) {
	self, err := s.api(5 * time.Second).Agent().Self()
	if err != nil {
		return 0, fmt.Errorf("%s: agent self: %w", s.name, err)
	}
	idx, err := strconv.ParseUint(self.Stats["raft"]["applied_index"], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: raft applied_index %q: %w", s.name, self.Stats["raft"]["applied_index"], err)
	}
	return idx, nil
}

// digest summarises the objects and their modify indexes, to compare
// servers: equal digests mean the same jobs, allocations, evaluations
// and nodes at the same versions.
func (v *view) digest() string {
	var lines []string
	for id, j := range v.jobs {
		lines = append(lines, fmt.Sprintf("job %s v%d stop=%t m%d", id, deref(j.Version), deref(j.Stop), deref(j.ModifyIndex)))
	}
	for _, a := range v.allocs {
		lines = append(lines, fmt.Sprintf("alloc %s %s %s/%s m%d", a.ID, a.Name, a.DesiredStatus, a.ClientStatus, a.ModifyIndex))
	}
	for _, e := range v.evals {
		lines = append(lines, fmt.Sprintf("eval %s %s m%d", e.ID, e.Status, e.ModifyIndex))
	}
	for _, n := range v.nodes {
		lines = append(lines, fmt.Sprintf("node %s %s %s m%d", n.ID, n.Status, n.SchedulingEligibility, n.ModifyIndex))
	}
	slices.Sort(lines)
	h := sha256.New()
	for _, l := range lines {
		h.Write([]byte(l + "\n"))
	}
	return fmt.Sprintf("%x", h.Sum(nil))[:16]
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// liveAllocs groups by job the allocations meant to run and not
// finished: desired run, client pending or running.
func (v *view) liveAllocs() map[string][]*api.AllocationListStub {
	out := map[string][]*api.AllocationListStub{}
	for _, a := range v.allocs {
		if a.DesiredStatus == "run" && (a.ClientStatus == "pending" || a.ClientStatus == "running") {
			out[a.JobID] = append(out[a.JobID], a)
		}
	}
	return out
}

// blocked reports the jobs with a blocked evaluation.
func (v *view) blocked() map[string]bool {
	out := map[string]bool{}
	for _, e := range v.evals {
		if e.Status == "blocked" {
			out[e.JobID] = true
		}
	}
	return out
}

// failedDeployment reports the jobs whose current version's deployment
// failed. The scheduler places no new allocations for such a version,
// as Nomad does: only lost and rescheduled ones are replaced, until the
// job is updated.
func (v *view) failedDeployment() map[string]bool {
	latest := map[string]*api.Deployment{}
	for _, d := range v.deployments {
		if l := latest[d.JobID]; l == nil || d.CreateIndex > l.CreateIndex {
			latest[d.JobID] = d
		}
	}
	out := map[string]bool{}
	for id, d := range latest {
		j := v.jobs[id]
		if j != nil && d.Status == "failed" && d.JobVersion == deref(j.Version) && d.JobCreateIndex == deref(j.CreateIndex) {
			out[id] = true
		}
	}
	return out
}

// groupCount is the count of the job's only group.
func groupCount(j *api.Job) int {
	if len(j.TaskGroups) == 0 {
		return 0
	}
	return deref(j.TaskGroups[0].Count)
}
