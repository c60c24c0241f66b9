package command

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opennomad/nomad/api"
	"github.com/opennomad/nomad/nomad/worker"
)

// fakeAgent is an in-memory stand-in for an agent's HTTP API, answering
// with JSON built from the api types (so it stays in sync with them). It
// keeps jobs, evaluations, allocations and nodes, and implements the
// behaviour the CLI relies on: registration creates an evaluation,
// blocking queries (index/wait) wait for a change, prefix lookups, drains,
// the scheduler and worker configuration.
//
// Scheduling is scripted: when an evaluation is created, the agent's
// scheduler function returns steps (state changes). A step runs when a
// client makes a blocking query that would otherwise wait, so a monitor
// sees every intermediate state in order and tests need no sleeps. The
// default scheduler places each group's count on ready nodes (first-fit
// on memory) or records a placement failure with a blocked evaluation.
type fakeAgent struct {
	t   testing.TB
	srv *httptest.Server

	mu       sync.Mutex
	index    uint64
	changed  chan struct{}
	counters map[string]int
	now      time.Time

	jobs   map[string][]*api.Job // namespace/ID -> versions, oldest first
	evals  map[string]*api.Evaluation
	allocs map[string]*api.Allocation
	nodes  map[string]*api.Node
	// deployments are set by tests' scheduling scripts (setDeployment).
	deployments map[string]*api.Deployment

	schedConfig  api.SchedulerConfiguration
	workerConfig api.AgentSchedulerWorkerConfigResponse
	workers      []api.AgentSchedulerWorkerInfo
	members      []*api.AgentMember
	leader       string
	raft         api.RaftConfiguration
	selfNodeID   string
	gcRuns       int

	// steps are pending state changes, applied one per blocking query.
	steps []func()
	// schedule returns the steps that process a new evaluation; nil means
	// the default scheduler. It runs with the lock held.
	schedule func(f *fakeAgent, ev *api.Evaluation) []func()
	// plan answers /v1/job/:id/plan; nil means the default (an added job,
	// or no change for an existing one).
	plan func(f *fakeAgent, job *api.Job) *api.JobPlanResponse
	// opaqueIDs makes IDs start differently from the constants tests
	// know, to prove agent-agnostic cases do not depend on them.
	opaqueIDs bool
	// noPauseSupport makes the agent ignore the paused field, as Nomad
	// does.
	noPauseSupport bool
	// drainStuck makes drains never progress.
	drainStuck bool
	// versionDiffs is returned by /versions?diffs=true.
	versionDiffs []*api.JobDiff

	requests []fakeRequest
}

// fakeRequest is one request the agent received.
type fakeRequest struct {
	Method string
	Path   string
	Query  string
	Body   string
	Token  string
}

// fakeEpoch is the fake's clock at index 0; each write advances it a
// second, so timestamps are distinct and stable.
var fakeEpoch = time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)

func newFakeAgent(t testing.TB) *fakeAgent {
	t.Helper()
	f := &fakeAgent{
		t:           t,
		changed:     make(chan struct{}),
		counters:    map[string]int{},
		now:         fakeEpoch,
		index:       1,
		jobs:        map[string][]*api.Job{},
		evals:       map[string]*api.Evaluation{},
		allocs:      map[string]*api.Allocation{},
		deployments: map[string]*api.Deployment{},
		nodes:       map[string]*api.Node{},
		schedConfig: api.SchedulerConfiguration{
			SchedulerAlgorithm: api.SchedulerAlgorithmBinpack,
			PreemptionConfig:   api.PreemptionConfig{SystemSchedulerEnabled: true},
			CreateIndex:        1, ModifyIndex: 1,
		},
		workerConfig: api.AgentSchedulerWorkerConfigResponse{
			ServerID: "server-1.global", NumSchedulers: 2,
			EnabledSchedulers: worker.AllSchedulers(), Paused: new(false),
		},
		leader: "10.0.0.1:4647",
		members: []*api.AgentMember{
			fakeMember("server-1", "10.0.0.1"), fakeMember("server-2", "10.0.0.2"), fakeMember("server-3", "10.0.0.3"),
		},
		raft: api.RaftConfiguration{Servers: []*api.RaftServer{
			{ID: "11111111-aaaa-4000-8000-000000000001", Node: "server-1.global", Address: "10.0.0.1:4647", Leader: true, Voter: true, RaftProtocol: "3"},
			{ID: "11111111-aaaa-4000-8000-000000000002", Node: "server-2.global", Address: "10.0.0.2:4647", Voter: true, RaftProtocol: "3"},
			{ID: "11111111-aaaa-4000-8000-000000000003", Node: "server-3.global", Address: "10.0.0.3:4647", Voter: true, RaftProtocol: "3"},
		}},
	}
	f.resetWorkers()
	f.srv = httptest.NewServer(f.routes())
	t.Cleanup(f.srv.Close)
	return f
}

func fakeMember(name, addr string) *api.AgentMember {
	return &api.AgentMember{
		Name: name + ".global", Addr: addr, Port: 4648, Status: "alive",
		Tags:        map[string]string{"role": "nomad", "region": "global", "dc": "dc1", "build": "0.1.0-dev", "port": "4647", "rpc_addr": addr, "raft_vsn": "3"},
		ProtocolCur: 2,
	}
}

// Addr implements testCluster.
func (f *fakeAgent) Addr() string { return f.srv.URL }

// fake returns the fake behind a cluster, for cases that script it.
func (f *fakeAgent) fake() *fakeAgent { return f }

// nextID returns a deterministic UUID whose first 8 characters tell the
// kind apart: evals eeee…, allocs aaaa…, nodes bbbb…, workers cccc….
func (f *fakeAgent) nextID(kind string) string {
	f.counters[kind]++
	n := f.counters[kind]
	prefixes := map[string]string{"eval": "eeee", "alloc": "aaaa", "node": "bbbb", "worker": "cccc"}
	if f.opaqueIDs {
		prefixes = map[string]string{"eval": "5e50", "alloc": "a110", "node": "0de0", "worker": "c0c0"}
	}
	prefix := prefixes[kind]
	return fmt.Sprintf("%s%04x-0000-4000-8000-%012x", prefix, n, n)
}

// bump advances the index and clock and wakes blocked queries. Callers
// hold the lock.
func (f *fakeAgent) bump() uint64 {
	f.index++
	f.now = f.now.Add(time.Second)
	close(f.changed)
	f.changed = make(chan struct{})
	return f.index
}

// block implements a blocking query: with index >= the current index it
// applies the next scripted step if there is one, else waits for a change
// or the wait time. Callers hold the lock; it is released while waiting.
func (f *fakeAgent) block(r *http.Request) {
	q := r.URL.Query()
	idx, _ := strconv.ParseUint(q.Get("index"), 10, 64)
	if idx == 0 || idx < f.index {
		return
	}
	if len(f.steps) > 0 {
		step := f.steps[0]
		f.steps = f.steps[1:]
		step()
		return
	}
	wait := time.Second
	if d, err := time.ParseDuration(q.Get("wait")); err == nil && d < wait {
		wait = d
	}
	ch := f.changed
	f.mu.Unlock()
	select {
	case <-ch:
	case <-time.After(wait):
	case <-r.Context().Done():
	}
	f.mu.Lock()
}

// ---- state helpers (callers hold the lock) ----

func jobKey(ns, id string) string { return ns + "/" + id }

// currentJob returns the newest version of a job, or nil.
func (f *fakeAgent) currentJob(ns, id string) *api.Job {
	vs := f.jobs[jobKey(ns, id)]
	if len(vs) == 0 {
		return nil
	}
	return vs[len(vs)-1]
}

// AddNode registers a ready, eligible node; defaults fill what n leaves
// empty. It returns the node's ID.
func (f *fakeAgent) AddNode(t testing.TB, n *api.Node) string {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if n.ID == "" {
		n.ID = f.nextID("node")
	}
	if n.Name == "" {
		n.Name = fmt.Sprintf("node-%d", len(f.nodes)+1)
	}
	if n.Datacenter == "" {
		n.Datacenter = "dc1"
	}
	if n.NodePool == "" {
		n.NodePool = "default"
	}
	if n.Status == "" {
		n.Status = api.NodeStatusReady
	}
	if n.SchedulingEligibility == "" {
		n.SchedulingEligibility = api.NodeSchedulingEligible
	}
	if n.NodeResources == nil {
		n.NodeResources = &api.NodeResources{
			Cpu:    api.NodeCpuResources{CpuShares: 4000},
			Memory: api.NodeMemoryResources{MemoryMB: 8192},
			Disk:   api.NodeDiskResources{DiskMB: 100 * 1024},
		}
	}
	if n.Drivers == nil {
		n.Drivers = map[string]*api.DriverInfo{"raw_exec": {Detected: true, Healthy: true}, "exec": {Detected: true, Healthy: true}}
	}
	if n.HTTPAddr == "" {
		n.HTTPAddr = "127.0.0.1:4646"
	}
	n.CreateIndex = f.bump()
	n.ModifyIndex = n.CreateIndex
	f.nodes[n.ID] = n
	return n.ID
}

// registerJob registers a job through the HTTP API, as a user would.
func registerJob(t testing.TB, c testCluster, job *api.Job) *api.JobRegisterResponse {
	t.Helper()
	client, err := api.NewClient(&api.Config{Address: c.Addr()})
	if err != nil {
		t.Fatal(err)
	}
	resp, _, err := client.Jobs().Register(job, nil)
	if err != nil {
		t.Fatalf("registering job: %v", err)
	}
	return resp
}

// Settle implements testCluster: it applies every pending step, as if
// the servers caught up.
func (f *fakeAgent) Settle(testing.TB) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for len(f.steps) > 0 {
		step := f.steps[0]
		f.steps = f.steps[1:]
		step()
	}
}

// createEval stores a new pending evaluation and schedules it.
func (f *fakeAgent) createEval(job *api.Job, triggeredBy string, tweak func(*api.Evaluation)) *api.Evaluation {
	idx := f.bump()
	ev := &api.Evaluation{
		ID: f.nextID("eval"), Namespace: deref(job.Namespace), Priority: derefInt(job.Priority), Type: deref(job.Type),
		TriggeredBy: triggeredBy, JobID: jobID(job), JobModifyIndex: derefUint64(job.JobModifyIndex),
		Status: api.EvalStatusPending, CreateIndex: idx, ModifyIndex: idx,
		CreateTime: f.now.UnixNano(), ModifyTime: f.now.UnixNano(),
	}
	if tweak != nil {
		tweak(ev)
	}
	f.evals[ev.ID] = ev
	sched := f.schedule
	if sched == nil {
		sched = defaultSchedule
	}
	f.steps = append(f.steps, sched(f, ev)...)
	return ev
}

// updateEval replaces an evaluation with a changed copy.
func (f *fakeAgent) updateEval(id string, change func(*api.Evaluation)) {
	ev := *f.evals[id]
	change(&ev)
	ev.ModifyIndex = f.bump()
	ev.ModifyTime = f.now.UnixNano()
	f.evals[id] = &ev
}

// setDeployment stores a deployment (a copy, at a new index).
func (f *fakeAgent) setDeployment(d api.Deployment) {
	d.ModifyIndex = f.bump()
	if d.CreateIndex == 0 {
		d.CreateIndex = d.ModifyIndex
	}
	f.deployments[d.ID] = &d
}

// latestDeployment is the job's newest deployment, nil for none.
func (f *fakeAgent) latestDeployment(namespace, jobID string) *api.Deployment {
	var latest *api.Deployment
	for _, d := range f.deployments {
		if d.Namespace == namespace && d.JobID == jobID && (latest == nil || d.CreateIndex > latest.CreateIndex) {
			latest = d
		}
	}
	return latest
}

// updateAlloc replaces an allocation with a changed copy.
func (f *fakeAgent) updateAlloc(id string, change func(*api.Allocation)) {
	a := *f.allocs[id]
	change(&a)
	a.ModifyIndex = f.bump()
	a.ModifyTime = f.now.UnixNano()
	f.allocs[id] = &a
}

// updateNode replaces a node with a changed copy.
func (f *fakeAgent) updateNode(id string, change func(*api.Node)) {
	n := *f.nodes[id]
	change(&n)
	n.ModifyIndex = f.bump()
	f.nodes[id] = &n
}

// allocStub is the list form of an allocation.
func allocStub(a *api.Allocation) *api.AllocationListStub {
	s := &api.AllocationListStub{
		ID: a.ID, EvalID: a.EvalID, Name: a.Name, Namespace: a.Namespace, NodeID: a.NodeID, NodeName: a.NodeName,
		JobID: a.JobID, TaskGroup: a.TaskGroup, DesiredStatus: a.DesiredStatus, DesiredDescription: a.DesiredDescription,
		ClientStatus: a.ClientStatus, ClientDescription: a.ClientDescription, TaskStates: a.TaskStates,
		FollowupEvalID: a.FollowupEvalID, NextAllocation: a.NextAllocation,
		CreateIndex: a.CreateIndex, ModifyIndex: a.ModifyIndex, CreateTime: a.CreateTime, ModifyTime: a.ModifyTime,
	}
	if a.Job != nil {
		s.JobVersion = derefUint64(a.Job.Version)
		s.JobType = deref(a.Job.Type)
	}
	return s
}

// jobStub is the list form of a job.
func (f *fakeAgent) jobStub(j *api.Job) *api.JobListStub {
	return &api.JobListStub{
		ID: jobID(j), ParentID: deref(j.ParentID), Name: deref(j.Name), Namespace: deref(j.Namespace),
		Datacenters: j.Datacenters, NodePool: deref(j.NodePool), Type: deref(j.Type), Priority: derefInt(j.Priority),
		Periodic: j.IsPeriodic(), ParameterizedJob: j.IsParameterized(), Stop: j.Stop != nil && *j.Stop,
		Status: f.jobStatus(j), JobSummary: f.summary(j),
		CreateIndex: derefUint64(j.CreateIndex), ModifyIndex: derefUint64(j.ModifyIndex),
		JobModifyIndex: derefUint64(j.JobModifyIndex), SubmitTime: derefInt64(j.SubmitTime),
	}
}

// jobAllocs returns the allocations of a job.
func (f *fakeAgent) jobAllocs(ns, id string) []*api.Allocation {
	var out []*api.Allocation
	for _, a := range f.allocs {
		if a.Namespace == ns && a.JobID == id {
			out = append(out, a)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// jobStatus derives the status the servers would report.
func (f *fakeAgent) jobStatus(j *api.Job) string {
	if j.IsPeriodic() || j.IsParameterized() {
		if j.Stop != nil && *j.Stop {
			return api.JobStatusDead
		}
		return api.JobStatusRunning
	}
	live := 0
	for _, a := range f.jobAllocs(deref(j.Namespace), jobID(j)) {
		if !allocTerminal(a.DesiredStatus, a.ClientStatus) {
			live++
		}
	}
	switch {
	case live > 0:
		return api.JobStatusRunning
	case j.Stop != nil && *j.Stop:
		return api.JobStatusDead
	}
	return api.JobStatusPending
}

// summary counts a job's allocations per group.
func (f *fakeAgent) summary(j *api.Job) *api.JobSummary {
	s := &api.JobSummary{JobID: jobID(j), Namespace: deref(j.Namespace), Summary: map[string]api.TaskGroupSummary{}}
	for _, tg := range j.TaskGroups {
		s.Summary[deref(tg.Name)] = api.TaskGroupSummary{}
	}
	for _, a := range f.jobAllocs(deref(j.Namespace), jobID(j)) {
		c := s.Summary[a.TaskGroup]
		switch a.ClientStatus {
		case api.AllocClientStatusPending:
			c.Starting++
		case api.AllocClientStatusRunning:
			c.Running++
		case api.AllocClientStatusComplete:
			c.Complete++
		case api.AllocClientStatusFailed:
			c.Failed++
		case api.AllocClientStatusLost:
			c.Lost++
		}
		s.Summary[a.TaskGroup] = c
	}
	for _, ev := range f.evals {
		if ev.JobID == jobID(j) && ev.Status == api.EvalStatusBlocked {
			for tg, n := range ev.QueuedAllocations {
				c := s.Summary[tg]
				c.Queued += n
				s.Summary[tg] = c
			}
		}
	}
	if j.IsPeriodic() || j.IsParameterized() {
		s.Children = &api.JobChildrenSummary{}
		for _, vs := range f.jobs {
			child := vs[len(vs)-1]
			if deref(child.ParentID) == jobID(j) {
				switch f.jobStatus(child) {
				case api.JobStatusPending:
					s.Children.Pending++
				case api.JobStatusRunning:
					s.Children.Running++
				default:
					s.Children.Dead++
				}
			}
		}
	}
	return s
}

// ---- HTTP plumbing ----

// handle wraps a handler: records the request, takes the lock, and for
// GETs applies blocking-query semantics and sets X-Nomad-Index.
func (f *fakeAgent) handle(h func(w http.ResponseWriter, r *http.Request, body []byte) any) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		defer f.mu.Unlock()
		f.requests = append(f.requests, fakeRequest{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Body: string(body),
			Token: r.Header.Get(api.HeaderToken)})
		if r.Method == http.MethodGet {
			f.block(r)
		}
		out := h(w, r, body)
		if herr, ok := out.(httpError); ok {
			http.Error(w, herr.msg, herr.code)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set(api.HeaderIndex, strconv.FormatUint(f.index, 10))
		w.Header().Set(api.HeaderKnownLeader, "true")
		w.Header().Set(api.HeaderLastContact, "0")
		if err := json.NewEncoder(w).Encode(out); err != nil {
			f.t.Errorf("encoding response: %v", err)
		}
	}
}

// httpError is a handler's error answer.
type httpError struct {
	code int
	msg  string
}

func badRequest(format string, args ...any) httpError {
	return httpError{http.StatusBadRequest, fmt.Sprintf(format, args...)}
}

func notFound(what string) httpError { return httpError{http.StatusNotFound, what + " not found"} }

// namespace is the request's namespace, "default" when unset.
func namespace(r *http.Request) string {
	if ns := r.URL.Query().Get("namespace"); ns != "" {
		return ns
	}
	return api.DefaultNamespace
}

// hasPrefix applies the ?prefix= filter.
func hasPrefix(r *http.Request, id string) bool {
	return strings.HasPrefix(id, r.URL.Query().Get("prefix"))
}

// requestsTo returns the recorded requests whose path starts with prefix.
func (f *fakeAgent) requestsTo(method, prefix string) []fakeRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []fakeRequest
	for _, r := range f.requests {
		if r.Method == method && strings.HasPrefix(r.Path, prefix) {
			out = append(out, r)
		}
	}
	return out
}
