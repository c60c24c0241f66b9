package command

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/opennomad/nomad/api"
)

// routes maps the API paths the CLI uses to the fake's handlers.
func (f *fakeAgent) routes() *http.ServeMux {
	mux := http.NewServeMux()
	route := func(pattern string, h func(w http.ResponseWriter, r *http.Request, body []byte) any) {
		mux.Handle(pattern, f.handle(h))
	}
	route("GET /v1/jobs", f.listJobs)
	route("PUT /v1/jobs", f.registerJob)
	route("GET /v1/job/{id}", f.getJob)
	route("DELETE /v1/job/{id}", f.deregisterJob)
	route("GET /v1/job/{id}/summary", func(w http.ResponseWriter, r *http.Request, _ []byte) any {
		if j := f.currentJob(namespace(r), r.PathValue("id")); j != nil {
			return f.summary(j)
		}
		return notFound("job")
	})
	route("GET /v1/job/{id}/allocations", func(w http.ResponseWriter, r *http.Request, _ []byte) any {
		out := []*api.AllocationListStub{}
		for _, a := range f.jobAllocs(namespace(r), r.PathValue("id")) {
			out = append(out, allocStub(a))
		}
		return out
	})
	route("GET /v1/job/{id}/evaluations", func(w http.ResponseWriter, r *http.Request, _ []byte) any {
		out := []*api.Evaluation{}
		for _, ev := range f.evals {
			if ev.JobID == r.PathValue("id") && ev.Namespace == namespace(r) {
				out = append(out, ev)
			}
		}
		sort.Slice(out, func(i, j int) bool { return out[i].CreateIndex < out[j].CreateIndex })
		return out
	})
	route("GET /v1/job/{id}/versions", func(w http.ResponseWriter, r *http.Request, _ []byte) any {
		vs := f.jobs[jobKey(namespace(r), r.PathValue("id"))]
		if len(vs) == 0 {
			return notFound("job")
		}
		resp := api.JobVersionsResponse{}
		for i := len(vs) - 1; i >= 0; i-- {
			resp.Versions = append(resp.Versions, vs[i])
		}
		if r.URL.Query().Get("diffs") == "true" {
			resp.Diffs = f.versionDiffs
		}
		return resp
	})
	route("GET /v1/job/{id}/deployment", func(w http.ResponseWriter, r *http.Request, _ []byte) any {
		return f.latestDeployment(namespace(r), r.PathValue("id"))
	})
	route("GET /v1/deployment/{id}", func(w http.ResponseWriter, r *http.Request, _ []byte) any {
		if d := f.deployments[r.PathValue("id")]; d != nil {
			return d
		}
		return notFound("deployment")
	})
	route("PUT /v1/job/{id}/dispatch", f.dispatchJob)
	route("PUT /v1/job/{id}/periodic/force", f.forcePeriodic)
	route("PUT /v1/job/{id}/plan", f.planJob)
	route("PUT /v1/job/{id}/evaluate", func(w http.ResponseWriter, r *http.Request, _ []byte) any {
		j := f.currentJob(namespace(r), r.PathValue("id"))
		if j == nil {
			return notFound("job")
		}
		ev := f.createEval(j, "job-register", nil)
		return api.JobRegisterResponse{EvalID: ev.ID, EvalCreateIndex: ev.CreateIndex, JobModifyIndex: derefUint64(j.JobModifyIndex)}
	})
	route("PUT /v1/validate/job", f.validateJob)

	route("GET /v1/nodes", func(w http.ResponseWriter, r *http.Request, _ []byte) any {
		out := []*api.NodeListStub{}
		for _, n := range f.nodes {
			if hasPrefix(r, n.ID) {
				out = append(out, &api.NodeListStub{
					Address: strings.Split(n.HTTPAddr, ":")[0], ID: n.ID, Datacenter: n.Datacenter, Name: n.Name,
					NodeClass: n.NodeClass, NodePool: n.NodePool, Version: "0.1.0-dev", Drain: n.DrainStrategy != nil,
					SchedulingEligibility: n.SchedulingEligibility, Status: n.Status, Drivers: n.Drivers,
					LastDrain: n.LastDrain, CreateIndex: n.CreateIndex, ModifyIndex: n.ModifyIndex,
				})
			}
		}
		return out
	})
	route("GET /v1/node/{id}", func(w http.ResponseWriter, r *http.Request, _ []byte) any {
		if n, ok := f.nodes[r.PathValue("id")]; ok {
			return n
		}
		return notFound("node")
	})
	route("GET /v1/node/{id}/allocations", func(w http.ResponseWriter, r *http.Request, _ []byte) any {
		out := []*api.Allocation{}
		for _, a := range f.allocs {
			if a.NodeID == r.PathValue("id") {
				out = append(out, a)
			}
		}
		return out
	})
	route("PUT /v1/node/{id}/drain", f.drainNode)
	route("PUT /v1/node/{id}/eligibility", func(w http.ResponseWriter, r *http.Request, body []byte) any {
		var req api.NodeUpdateEligibilityRequest
		if err := json.Unmarshal(body, &req); err != nil {
			return badRequest("bad body: %v", err)
		}
		n, ok := f.nodes[r.PathValue("id")]
		if !ok {
			return notFound("node")
		}
		if req.Eligibility == api.NodeSchedulingEligible && n.DrainStrategy != nil {
			return badRequest("can not set node's scheduling eligibility to eligible while it is draining")
		}
		if req.Eligibility != api.NodeSchedulingEligible && req.Eligibility != api.NodeSchedulingIneligible {
			return badRequest("invalid scheduling eligibility %q", req.Eligibility)
		}
		f.updateNode(n.ID, func(n *api.Node) { n.SchedulingEligibility = req.Eligibility })
		return api.NodeEligibilityUpdateResponse{NodeModifyIndex: f.index}
	})

	route("GET /v1/evaluations", func(w http.ResponseWriter, r *http.Request, _ []byte) any {
		q := r.URL.Query()
		out := []*api.Evaluation{}
		for _, ev := range f.evals {
			if !hasPrefix(r, ev.ID) || (q.Get("job") != "" && ev.JobID != q.Get("job")) ||
				(q.Get("status") != "" && ev.Status != q.Get("status")) {
				continue
			}
			out = append(out, ev)
		}
		sort.Slice(out, func(i, j int) bool { return out[i].CreateIndex > out[j].CreateIndex })
		if n, _ := strconv.Atoi(q.Get("per_page")); n > 0 && n < len(out) {
			w.Header().Set(api.HeaderNextToken, out[n].ID)
			out = out[:n]
		}
		return out
	})
	route("GET /v1/evaluation/{id}", func(w http.ResponseWriter, r *http.Request, _ []byte) any {
		ev, ok := f.evals[r.PathValue("id")]
		if !ok {
			return notFound("eval")
		}
		if r.URL.Query().Get("related") != "true" {
			return ev
		}
		withRelated := *ev
		for _, other := range f.evals {
			if other.ID != ev.ID && other.JobID == ev.JobID &&
				(other.PreviousEval == ev.ID || other.ID == ev.PreviousEval || other.ID == ev.BlockedEval || other.ID == ev.NextEval) {
				withRelated.RelatedEvals = append(withRelated.RelatedEvals, &api.EvaluationStub{
					ID: other.ID, Namespace: other.Namespace, Priority: other.Priority, Type: other.Type,
					TriggeredBy: other.TriggeredBy, JobID: other.JobID, Status: other.Status,
					StatusDescription: other.StatusDescription, CreateIndex: other.CreateIndex, ModifyIndex: other.ModifyIndex,
				})
			}
		}
		return &withRelated
	})
	route("GET /v1/evaluation/{id}/allocations", func(w http.ResponseWriter, r *http.Request, _ []byte) any {
		out := []*api.AllocationListStub{}
		for _, a := range f.allocs {
			if a.EvalID == r.PathValue("id") {
				out = append(out, allocStub(a))
			}
		}
		return out
	})

	route("GET /v1/allocations", func(w http.ResponseWriter, r *http.Request, _ []byte) any {
		out := []*api.AllocationListStub{}
		for _, a := range f.allocs {
			if hasPrefix(r, a.ID) {
				out = append(out, allocStub(a))
			}
		}
		return out
	})
	route("GET /v1/allocation/{id}", func(w http.ResponseWriter, r *http.Request, _ []byte) any {
		if a, ok := f.allocs[r.PathValue("id")]; ok {
			return a
		}
		return notFound("alloc")
	})
	route("PUT /v1/allocation/{id}/stop", func(w http.ResponseWriter, r *http.Request, _ []byte) any {
		a, ok := f.allocs[r.PathValue("id")]
		if !ok {
			return notFound("alloc")
		}
		f.updateAlloc(a.ID, func(a *api.Allocation) {
			a.DesiredStatus, a.DesiredDescription = api.AllocDesiredStatusStop, "alloc was stopped by the user"
		})
		ev := f.createEval(a.Job, "alloc-stop", nil)
		return api.AllocStopResponse{EvalID: ev.ID}
	})

	route("GET /v1/agent/self", func(w http.ResponseWriter, r *http.Request, _ []byte) any {
		self := api.AgentSelf{Member: *f.members[0], Stats: map[string]map[string]string{"nomad": {"leader": "true"}}}
		if f.selfNodeID != "" {
			self.Stats["client"] = map[string]string{"node_id": f.selfNodeID}
		}
		return self
	})
	route("GET /v1/agent/members", func(w http.ResponseWriter, r *http.Request, _ []byte) any {
		return api.ServerMembers{ServerName: "server-1", ServerRegion: "global", ServerDC: "dc1", Members: f.members}
	})
	route("GET /v1/agent/schedulers", func(w http.ResponseWriter, r *http.Request, _ []byte) any {
		return api.AgentSchedulerWorkersInfo{ServerID: f.workerConfig.ServerID, Schedulers: f.workers}
	})
	route("GET /v1/agent/schedulers/config", func(w http.ResponseWriter, r *http.Request, _ []byte) any {
		return f.workerConfig
	})
	route("PUT /v1/agent/schedulers/config", f.setWorkerConfig)
	route("GET /v1/status/leader", func(w http.ResponseWriter, r *http.Request, _ []byte) any { return f.leader })
	route("GET /v1/operator/raft/configuration", func(w http.ResponseWriter, r *http.Request, _ []byte) any { return f.raft })
	route("GET /v1/operator/scheduler/configuration", func(w http.ResponseWriter, r *http.Request, _ []byte) any {
		conf := f.schedConfig
		return api.SchedulerConfigurationResponse{SchedulerConfig: &conf}
	})
	route("PUT /v1/operator/scheduler/configuration", f.setSchedulerConfig)
	route("PUT /v1/system/gc", func(w http.ResponseWriter, r *http.Request, _ []byte) any {
		f.gcRuns++
		return nil
	})
	return mux
}

func (f *fakeAgent) listJobs(w http.ResponseWriter, r *http.Request, _ []byte) any {
	ns := namespace(r)
	out := []*api.JobListStub{}
	for _, vs := range f.jobs {
		j := vs[len(vs)-1]
		if (ns == api.AllNamespaces || deref(j.Namespace) == ns) && hasPrefix(r, jobID(j)) {
			out = append(out, f.jobStub(j))
		}
	}
	return out
}

func (f *fakeAgent) getJob(w http.ResponseWriter, r *http.Request, _ []byte) any {
	if j := f.currentJob(namespace(r), r.PathValue("id")); j != nil {
		withStatus := *j
		withStatus.Status = new(f.jobStatus(j))
		return &withStatus
	}
	return notFound("job")
}

// registerJob stores a new version of the job (canonicalized, as the
// servers do) and creates its evaluation unless it is periodic or
// parameterized.
func (f *fakeAgent) registerJob(w http.ResponseWriter, r *http.Request, body []byte) any {
	var req api.JobRegisterRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return badRequest("failed to decode request: %v", err)
	}
	job := req.Job
	if job == nil || jobID(job) == "" {
		return badRequest("Job ID does not match name")
	}
	job.Canonicalize()
	if len(job.Datacenters) == 0 {
		job.Datacenters = []string{"*"}
	}
	if deref(job.NodePool) == "" {
		job.NodePool = new("default")
	}
	if len(job.TaskGroups) == 0 {
		return badRequest("1 error occurred:\n\t* Missing job task groups")
	}
	ns := deref(job.Namespace)
	prev := f.currentJob(ns, jobID(job))
	if req.EnforceIndex {
		switch {
		case req.JobModifyIndex == 0 && prev != nil:
			return badRequest("Enforcing job modify index 0: job already exists")
		case req.JobModifyIndex != 0 && prev == nil:
			return badRequest("Enforcing job modify index %d: job does not exist", req.JobModifyIndex)
		case prev != nil && req.JobModifyIndex != derefUint64(prev.JobModifyIndex):
			return badRequest("Enforcing job modify index %d: job exists with conflicting job modify index: %d",
				req.JobModifyIndex, derefUint64(prev.JobModifyIndex))
		}
	}
	idx := f.bump()
	version := uint64(0)
	create := idx
	if prev != nil {
		version = derefUint64(prev.Version) + 1
		create = derefUint64(prev.CreateIndex)
	}
	job.Version, job.CreateIndex, job.ModifyIndex, job.JobModifyIndex = new(version), new(create), new(idx), new(idx)
	job.SubmitTime = new(f.now.UnixNano())
	job.Status = new(api.JobStatusPending)
	f.jobs[jobKey(ns, jobID(job))] = append(f.jobs[jobKey(ns, jobID(job))], job)

	resp := api.JobRegisterResponse{JobModifyIndex: idx}
	if !job.IsPeriodic() && !job.IsParameterized() {
		ev := f.createEval(job, "job-register", func(ev *api.Evaluation) {
			if req.EvalPriority > 0 {
				ev.Priority = req.EvalPriority
			}
		})
		resp.EvalID, resp.EvalCreateIndex = ev.ID, ev.CreateIndex
	}
	return resp
}

// deregisterJob stores a stopped version (or removes the job with purge)
// and creates the evaluation that stops its allocations.
func (f *fakeAgent) deregisterJob(w http.ResponseWriter, r *http.Request, _ []byte) any {
	ns, id := namespace(r), r.PathValue("id")
	prev := f.currentJob(ns, id)
	if prev == nil {
		return notFound("job")
	}
	stopped := *prev
	stopped.Stop = new(true)
	idx := f.bump()
	stopped.Version, stopped.ModifyIndex, stopped.JobModifyIndex = new(derefUint64(prev.Version)+1), new(idx), new(idx)
	if r.URL.Query().Get("purge") == "true" {
		delete(f.jobs, jobKey(ns, id))
	} else {
		f.jobs[jobKey(ns, id)] = append(f.jobs[jobKey(ns, id)], &stopped)
	}
	if stopped.IsPeriodic() || stopped.IsParameterized() {
		return api.JobDeregisterResponse{JobModifyIndex: idx}
	}
	ev := f.createEval(&stopped, "job-deregister", nil)
	return api.JobDeregisterResponse{EvalID: ev.ID, EvalCreateIndex: ev.CreateIndex, JobModifyIndex: idx}
}

func (f *fakeAgent) planJob(w http.ResponseWriter, r *http.Request, body []byte) any {
	var req api.JobPlanRequest
	if err := json.Unmarshal(body, &req); err != nil || req.Job == nil {
		return badRequest("failed to decode plan request")
	}
	if jobID(req.Job) != r.PathValue("id") {
		return badRequest("Job ID does not match")
	}
	if len(req.Job.TaskGroups) == 0 {
		return badRequest("1 error occurred:\n\t* Missing job task groups")
	}
	plan := f.plan
	if plan == nil {
		plan = defaultPlan
	}
	resp := plan(f, req.Job)
	if !req.Diff {
		resp.Diff = nil
	}
	return resp
}

func (f *fakeAgent) validateJob(w http.ResponseWriter, r *http.Request, body []byte) any {
	var req api.JobValidateRequest
	if err := json.Unmarshal(body, &req); err != nil || req.Job == nil {
		return badRequest("failed to decode validate request")
	}
	var problems []string
	for _, tg := range req.Job.TaskGroups {
		if tg.Count != nil && *tg.Count < 0 {
			problems = append(problems, "Task group "+deref(tg.Name)+" has a negative count")
		}
		for _, t := range tg.Tasks {
			if t.Driver == "" {
				problems = append(problems, "Task "+t.Name+" is missing a driver")
			}
		}
	}
	resp := api.JobValidateResponse{DriverConfigValidated: true, ValidationErrors: problems}
	if len(problems) > 0 {
		resp.Error = strings.Join(problems, "\n")
	}
	return resp
}

// drainNode starts or cancels a drain; the drain itself advances through
// scripted steps (see drainSteps).
func (f *fakeAgent) drainNode(w http.ResponseWriter, r *http.Request, body []byte) any {
	var req api.NodeUpdateDrainRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return badRequest("bad body: %v", err)
	}
	n, ok := f.nodes[r.PathValue("id")]
	if !ok {
		return notFound("node")
	}
	if req.DrainSpec == nil {
		f.updateNode(n.ID, func(n *api.Node) {
			n.DrainStrategy = nil
			n.Drain = false
			if req.MarkEligible {
				n.SchedulingEligibility = api.NodeSchedulingEligible
			}
			n.LastDrain = &api.DrainMetadata{Status: api.DrainStatusCanceled, Meta: req.Meta, UpdatedAt: f.now}
		})
		return api.NodeDrainUpdateResponse{NodeModifyIndex: f.index}
	}
	f.updateNode(n.ID, func(n *api.Node) {
		ds := &api.DrainStrategy{DrainSpec: *req.DrainSpec, StartedAt: f.now}
		if req.DrainSpec.Deadline > 0 {
			ds.ForceDeadline = f.now.Add(req.DrainSpec.Deadline)
		}
		n.DrainStrategy, n.Drain = ds, true
		n.SchedulingEligibility = api.NodeSchedulingIneligible
		n.LastDrain = &api.DrainMetadata{Status: api.DrainStatusDraining, StartedAt: f.now, Meta: req.Meta}
	})
	if !f.drainStuck {
		f.steps = append(f.steps, f.drainSteps(n.ID, req.DrainSpec.Deadline < 0)...)
	}
	return api.NodeDrainUpdateResponse{NodeModifyIndex: f.index}
}

func (f *fakeAgent) setWorkerConfig(w http.ResponseWriter, r *http.Request, body []byte) any {
	var req api.AgentSchedulerWorkerConfigRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return badRequest("Invalid request")
	}
	if req.NumSchedulers < 0 || req.NumSchedulers > 8 || !contains(req.EnabledSchedulers, "_core") {
		return badRequest("Invalid request")
	}
	f.workerConfig.NumSchedulers = req.NumSchedulers
	f.workerConfig.EnabledSchedulers = req.EnabledSchedulers
	if req.Paused != nil && !f.noPauseSupport {
		f.workerConfig.Paused = new(*req.Paused)
	}
	f.resetWorkers()
	f.bump()
	return f.workerConfig
}

// resetWorkers rebuilds the worker list from the configuration.
func (f *fakeAgent) resetWorkers() {
	f.workers = nil
	paused := f.workerConfig.Paused != nil && *f.workerConfig.Paused
	for i := 0; i < f.workerConfig.NumSchedulers; i++ {
		w := api.AgentSchedulerWorkerInfo{
			ID: f.nextID("worker"), EnabledSchedulers: f.workerConfig.EnabledSchedulers,
			Started: fakeEpoch.Add(time.Duration(i) * time.Millisecond).Format(time.RFC3339Nano),
			Status:  api.WorkerStatusStarted, WorkloadStatus: "WaitingToDequeue",
		}
		if paused {
			w.Status, w.WorkloadStatus = api.WorkerStatusPaused, "Paused"
		}
		f.workers = append(f.workers, w)
	}
}

func (f *fakeAgent) setSchedulerConfig(w http.ResponseWriter, r *http.Request, body []byte) any {
	var conf api.SchedulerConfiguration
	if err := json.Unmarshal(body, &conf); err != nil {
		return badRequest("Error parsing scheduler config: %v", err)
	}
	if conf.SchedulerAlgorithm != api.SchedulerAlgorithmBinpack && conf.SchedulerAlgorithm != api.SchedulerAlgorithmSpread {
		return badRequest("invalid scheduler algorithm: %s", conf.SchedulerAlgorithm)
	}
	if cas := r.URL.Query().Get("cas"); cas != "" {
		want, err := strconv.ParseUint(cas, 10, 64)
		if err != nil {
			return badRequest("Error parsing cas value: %v", err)
		}
		if want != f.schedConfig.ModifyIndex {
			return api.SchedulerSetConfigurationResponse{Updated: false}
		}
	}
	conf.CreateIndex = f.schedConfig.CreateIndex
	conf.ModifyIndex = f.bump()
	f.schedConfig = conf
	return api.SchedulerSetConfigurationResponse{Updated: true}
}

// launchChild stores a child of a template job under childID and creates
// its evaluation.
func (f *fakeAgent) launchChild(parent *api.Job, childID, trigger string, change func(*api.Job)) *api.Evaluation {
	child := *parent
	child.ID, child.Name, child.ParentID = new(childID), new(childID), new(jobID(parent))
	child.Periodic, child.ParameterizedJob = nil, nil
	if change != nil {
		change(&child)
	}
	idx := f.bump()
	child.Version, child.CreateIndex, child.ModifyIndex, child.JobModifyIndex = new(uint64(0)), new(idx), new(idx), new(idx)
	f.jobs[jobKey(deref(child.Namespace), childID)] = []*api.Job{&child}
	return f.createEval(&child, trigger, nil)
}

// dispatchJob checks the required meta of a parameterized job and
// launches a child with the payload and meta.
func (f *fakeAgent) dispatchJob(w http.ResponseWriter, r *http.Request, body []byte) any {
	var req api.JobDispatchRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return badRequest("failed to decode request: %v", err)
	}
	parent := f.currentJob(namespace(r), r.PathValue("id"))
	switch {
	case parent == nil:
		return notFound("job")
	case parent.ParameterizedJob == nil:
		return badRequest("Specified job %q is not a parameterized job", jobID(parent))
	}
	for _, k := range parent.ParameterizedJob.MetaRequired {
		if _, ok := req.Meta[k]; !ok {
			return badRequest("Dispatch did not provide required meta keys: [%s]", k)
		}
	}
	f.counters["dispatch"]++
	childID := fmt.Sprintf("%s/dispatch-%d-%08x", jobID(parent), f.now.Unix(), f.counters["dispatch"])
	ev := f.launchChild(parent, childID, "job-register", func(c *api.Job) {
		c.Payload, c.Meta, c.Dispatched = req.Payload, req.Meta, true
	})
	return api.JobDispatchResponse{DispatchedJobID: childID, EvalID: ev.ID, EvalCreateIndex: ev.CreateIndex, JobCreateIndex: ev.CreateIndex}
}

// forcePeriodic launches a periodic job's child now.
func (f *fakeAgent) forcePeriodic(w http.ResponseWriter, r *http.Request, _ []byte) any {
	parent := f.currentJob(namespace(r), r.PathValue("id"))
	switch {
	case parent == nil:
		return notFound("job")
	case parent.Periodic == nil:
		return badRequest("can't force launch non-periodic job %q", jobID(parent))
	}
	ev := f.launchChild(parent, jobID(parent)+"/periodic-"+strconv.FormatInt(f.now.Unix(), 10), "periodic-job", nil)
	return api.PeriodicForceResponse{EvalID: ev.ID, EvalCreateIndex: ev.CreateIndex}
}
