package fsm_test

import (
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/fsm/fsmtest"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// entries builds a Raft log one entry at a time.
type entries struct {
	t    testing.TB
	next uint64
	logs []*raft.Log
}

// add appends the entry of req and returns its index.
func (e *entries) add(typ structs.MessageType, req interface{}) uint64 {
	e.t.Helper()
	idx := e.next
	e.logs = append(e.logs, fsmtest.Entry(e.t, idx, typ, req))
	e.next++
	return idx
}

// raw appends an entry as given and returns its index.
func (e *entries) raw(l *raft.Log) uint64 {
	l.Index = e.next
	e.logs = append(e.logs, l)
	e.next++
	return l.Index
}

// storedAs is job as the store holds it once registered at index as
// version (the first registration's index is its CreateIndex).
func storedAs(job *structs.Job, create, index, version uint64) *structs.Job {
	j := job.Copy()
	j.CreateIndex, j.ModifyIndex, j.JobModifyIndex, j.Version = create, index, index, version
	return j
}

// A log of every batchable entry type, with entries of other types
// between them and failing entries in the middle of runs (a plan result
// for an eval that does not exist, one naming a job version that does not
// exist, a registration whose check-and-set fails, a body that does not
// decode), applied in ApplyBatch calls of random sizes, gives what
// applying it one entry at a time gives: the responses, every table, the
// events and the broker and blocked-evals calls.
func TestApplyBatch_SameAsOneByOne(t *testing.T) {
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	n1, n2, n3 := mock.Node(), mock.Node(), mock.Node()
	setup := &entries{t: t, next: 10}
	setup.add(structs.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: n1})
	setup.add(structs.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: n2})

	log := &entries{t: t, next: 100}
	job1, job2 := mock.Job(mock.Count(1)), mock.Job(mock.Count(1))
	ev1 := mock.Eval(mock.EvalForJob(job1))
	j1 := log.add(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job1, Eval: ev1})
	ev2 := mock.Eval(mock.EvalForJob(job2))
	log.add(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job2, Eval: ev2})

	// The first plan places a1 of version 0, named by reference: the
	// job version is read from what the entries before wrote.
	v0 := storedAs(job1, j1, j1, 0)
	d1 := structs.NewDeployment(v0, 50, at)
	d1.TaskGroups["web"] = &structs.DeploymentState{DesiredTotal: 1}
	a1 := mock.Alloc(mock.ForJob(v0, 0), mock.OnNode(n1))
	a1.Job = nil
	a1.DeploymentID = d1.ID
	log.add(structs.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
		AllocUpdateRequest: structs.AllocUpdateRequest{AllocsUpdated: []*structs.Allocation{a1}},
		Deployment:         d1, EvalID: ev1.ID, JobRef: v0.VersionRef(), UpdatedAt: at.UnixNano(),
	})
	done1 := ev1.Copy()
	done1.Status = structs.EvalStatusComplete
	log.add(structs.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{done1}})
	// Not batchable: it breaks the run.
	log.add(structs.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: n3})
	running := &structs.Allocation{ID: a1.ID, ClientStatus: structs.AllocClientStatusRunning}
	log.add(structs.AllocClientUpdateRequestType, &structs.AllocUpdateRequest{Alloc: []*structs.Allocation{running}})
	log.add(structs.DeploymentAllocHealthRequestType, &structs.ApplyDeploymentAllocHealthRequest{
		DeploymentAllocHealthRequest: structs.DeploymentAllocHealthRequest{DeploymentID: d1.ID, HealthyAllocationIDs: []string{a1.ID}},
		Timestamp:                    at,
		Eval:                         mock.Eval(mock.EvalForJob(v0)),
	})
	// Verdicts of many deployments in one entry: d1's alloc again, with
	// an eval; then one whose second request names no deployment, refused
	// whole after the first request wrote.
	log.add(structs.DeploymentAllocHealthBatchRequestType, &structs.DeploymentAllocHealthBatchRequest{
		Requests: []*structs.ApplyDeploymentAllocHealthRequest{{
			DeploymentAllocHealthRequest: structs.DeploymentAllocHealthRequest{DeploymentID: d1.ID, HealthyAllocationIDs: []string{a1.ID}},
			Timestamp:                    at,
			Eval:                         mock.Eval(mock.EvalForJob(v0)),
		}},
	})
	badHealth := log.add(structs.DeploymentAllocHealthBatchRequestType, &structs.DeploymentAllocHealthBatchRequest{
		Requests: []*structs.ApplyDeploymentAllocHealthRequest{
			{
				DeploymentAllocHealthRequest: structs.DeploymentAllocHealthRequest{DeploymentID: d1.ID, UnhealthyAllocationIDs: []string{a1.ID}},
				Timestamp:                    at,
				Eval:                         mock.Eval(mock.EvalForJob(v0)),
			},
			{DeploymentAllocHealthRequest: structs.DeploymentAllocHealthRequest{DeploymentID: structs.GenerateUUID()}},
		},
	})
	// It writes its deployment before it finds the eval missing: the
	// batch must not keep that write.
	d2 := structs.NewDeployment(v0, 50, at)
	badEval := log.add(structs.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
		Deployment: d2, EvalID: structs.GenerateUUID(), JobRef: v0.VersionRef(), UpdatedAt: at.UnixNano(),
	})

	job1v1 := job1.Copy()
	job1v1.Meta = map[string]string{"rev": "1"}
	ev3 := mock.Eval(mock.EvalForJob(job1v1))
	j1v1 := log.add(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job1v1, Eval: ev3})
	v1 := storedAs(job1v1, j1, j1v1, 1)
	missing := v1.VersionRef()
	missing.Version = 7
	a2 := mock.Alloc(mock.ForJob(v1, 0), mock.OnNode(n2))
	a2.Job = nil
	badVersion := log.add(structs.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
		AllocUpdateRequest: structs.AllocUpdateRequest{AllocsUpdated: []*structs.Allocation{a2.Copy()}},
		JobRef:             missing, UpdatedAt: at.UnixNano(),
	})
	log.add(structs.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
		AllocUpdateRequest: structs.AllocUpdateRequest{
			AllocsStopped: []*structs.AllocStop{{ID: a1.ID, DesiredDescription: "replaced"}},
			AllocsUpdated: []*structs.Allocation{a2},
		},
		EvalID: ev3.ID, JobRef: v1.VersionRef(), UpdatedAt: at.UnixNano(),
	})
	badCAS := log.add(structs.JobRegisterRequestType, &structs.JobRegisterRequest{
		Job: job1v1.Copy(), EnforceIndex: true, JobModifyIndex: 1,
	})
	finished := a1.Copy()
	finished.Job = v0
	finished = mock.MarkComplete(finished, at)
	finished.Job = nil
	log.add(structs.AllocClientUpdateRequestType, &structs.AllocUpdateRequest{Alloc: []*structs.Allocation{finished}})
	blocked := mock.Eval(mock.EvalForJob(job2))
	blocked.Status = structs.EvalStatusBlocked
	log.add(structs.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{blocked}})
	garbage := log.raw(&raft.Log{Type: raft.LogCommand, Data: []byte{byte(structs.JobRegisterRequestType), 0xc1}})
	migrate := true
	log.add(structs.AllocUpdateDesiredTransitionRequestType, &structs.AllocUpdateDesiredTransitionRequest{
		Allocs: map[string]*structs.DesiredTransition{a2.ID: {Migrate: &migrate}},
		Evals:  []*structs.Evaluation{mock.Eval(mock.EvalForJob(v1))},
	})
	ev5 := mock.Eval(mock.EvalForJob(job2))
	log.add(structs.JobDeregisterRequestType, &structs.JobDeregisterRequest{JobID: job2.ID, Eval: ev5,
		WriteRequest: structs.WriteRequest{Namespace: job2.Namespace}})
	// An entry Raft itself wrote, and one of a type from the future.
	log.raw(&raft.Log{Type: raft.LogNoop})
	log.raw(&raft.Log{Type: raft.LogCommand, Data: []byte{byte(structs.IgnoreUnknownTypeFlag | 99)}})
	log.add(structs.DeploymentStatusUpdateRequestType, &structs.DeploymentStatusUpdateRequest{
		DeploymentUpdate: &structs.DeploymentStatusUpdate{DeploymentID: d1.ID, Status: structs.DeploymentStatusSuccessful},
		Eval:             mock.Eval(mock.EvalForJob(v1)),
	})
	done5 := ev5.Copy()
	done5.Status = structs.EvalStatusComplete
	log.add(structs.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{done5}})

	failing := map[uint64]string{
		badEval:    "plan results",
		badVersion: "version 7",
		badCAS:     "job modify index",
		garbage:    "decoding JobRegister entry",
		badHealth:  "request 2 of 2",
	}
	for _, maxBatch := range []int{2, 3, 5, len(log.logs)} {
		for seed := range uint64(8) {
			resps := fsmtest.SameAsSequential(t, setup.logs, log.logs, seed, maxBatch)
			for i, l := range log.logs {
				want, fails := failing[l.Index]
				if !fails {
					must.Nil(t, resps[i], must.Sprintf("entry %d", l.Index))
					continue
				}
				err, ok := resps[i].(error)
				must.True(t, ok, must.Sprintf("entry %d must fail, got %v", l.Index, resps[i]))
				must.StrContains(t, err.Error(), want)
			}
		}
	}
}

// A batch that is nothing but batchable entries, all succeeding, shares
// one transaction; so does the same batch with a failing entry at its
// start, middle or end, which is applied again one entry at a time.
func TestApplyBatch_FailureAnywhereInARun(t *testing.T) {
	for _, failAt := range []int{-1, 0, 3, 7} {
		log := &entries{t: t, next: 50}
		for i := range 8 {
			if i == failAt {
				log.add(structs.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{EvalID: structs.GenerateUUID()})
				continue
			}
			job := mock.Job()
			log.add(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job, Eval: mock.Eval(mock.EvalForJob(job))})
		}
		resps := fsmtest.SameAsSequential(t, nil, log.logs, 1, len(log.logs)*2)
		for i, r := range resps {
			if i == failAt {
				must.Error(t, r.(error))
			} else {
				must.Nil(t, r)
			}
		}
	}
}

// FuzzApplyBatch puts a fuzzed entry (type byte and msgpack body) in the
// middle of a run of batchable entries, after a node, a job and an alloc
// of it: applied in batches, the log must leave what it leaves applied
// one entry at a time, whatever the entry does (partial writes before an
// error included). The seeds are an entry of each batchable type.
func FuzzApplyBatch(f *testing.F) {
	node := mock.Node(mock.NodeID("00000000-0000-0000-0000-000000000001"))
	job := mock.Job(mock.JobID("fuzz"), mock.Count(1))
	stored := storedAs(job, 11, 11, 0)
	alloc := mock.Alloc(mock.ForJob(stored, 0), mock.OnNode(node))
	alloc.ID = "00000000-0000-0000-0000-0000000000a1"
	eval := mock.Eval(mock.EvalForJob(stored))
	eval.ID = "00000000-0000-0000-0000-0000000000e1"
	deployment := structs.NewDeployment(stored, 50, time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	deployment.ID = "00000000-0000-0000-0000-0000000000d1"
	alloc.DeploymentID = deployment.ID
	setup := func(t testing.TB) []*raft.Log {
		s := &entries{t: t, next: 10}
		s.add(structs.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: node})
		s.add(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job.Copy(), Eval: eval.Copy()})
		s.add(structs.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
			AllocUpdateRequest: structs.AllocUpdateRequest{AllocsUpdated: []*structs.Allocation{alloc.Copy()}},
			Deployment:         deployment.Copy(), EvalID: eval.ID, JobRef: stored.VersionRef(),
		})
		return s.logs
	}
	// The fixture itself applies.
	fixture := fsmtest.NewFSM(f, &fsmtest.Recorder{})
	for _, l := range setup(f) {
		must.Nil(f, fixture.Apply(l), must.Sprintf("fixture entry %d", l.Index))
	}
	migrate := true
	for typ, req := range map[structs.MessageType]interface{}{
		structs.JobRegisterRequestType: &structs.JobRegisterRequest{Job: job.Copy(), EnforceIndex: true, JobModifyIndex: 11,
			Eval: mock.Eval(mock.EvalForJob(stored))},
		structs.JobDeregisterRequestType: &structs.JobDeregisterRequest{JobID: job.ID, Purge: true,
			WriteRequest: structs.WriteRequest{Namespace: job.Namespace}},
		structs.EvalUpdateRequestType: &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{eval}},
		structs.ApplyPlanResultsRequestType: &structs.ApplyPlanResultsRequest{
			AllocUpdateRequest: structs.AllocUpdateRequest{AllocsStopped: []*structs.AllocStop{{ID: alloc.ID}}},
			EvalID:             eval.ID, JobRef: stored.VersionRef()},
		structs.AllocClientUpdateRequestType: &structs.AllocUpdateRequest{Alloc: []*structs.Allocation{
			{ID: alloc.ID, ClientStatus: structs.AllocClientStatusFailed}}},
		structs.AllocUpdateDesiredTransitionRequestType: &structs.AllocUpdateDesiredTransitionRequest{
			Allocs: map[string]*structs.DesiredTransition{alloc.ID: {Migrate: &migrate}, "missing": {Migrate: &migrate}}},
		structs.DeploymentStatusUpdateRequestType: &structs.DeploymentStatusUpdateRequest{
			DeploymentUpdate: &structs.DeploymentStatusUpdate{DeploymentID: deployment.ID, Status: structs.DeploymentStatusFailed}},
		structs.DeploymentPromoteRequestType: &structs.ApplyDeploymentPromoteRequest{
			DeploymentPromoteRequest: structs.DeploymentPromoteRequest{DeploymentID: deployment.ID, All: true}},
		structs.DeploymentAllocHealthRequestType: &structs.ApplyDeploymentAllocHealthRequest{
			DeploymentAllocHealthRequest: structs.DeploymentAllocHealthRequest{DeploymentID: deployment.ID,
				UnhealthyAllocationIDs: []string{alloc.ID}}},
		structs.DeploymentAllocHealthBatchRequestType: &structs.DeploymentAllocHealthBatchRequest{
			Requests: []*structs.ApplyDeploymentAllocHealthRequest{{
				DeploymentAllocHealthRequest: structs.DeploymentAllocHealthRequest{DeploymentID: deployment.ID,
					HealthyAllocationIDs: []string{alloc.ID}},
				Eval: mock.Eval(mock.EvalForJob(stored)),
			}}},
	} {
		buf, err := structs.Encode(typ, req)
		must.NoError(f, err)
		f.Add(buf)
	}
	f.Fuzz(func(t *testing.T, entry []byte) {
		log := &entries{t: t, next: 20}
		next := mock.Job()
		log.add(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: next, Eval: mock.Eval(mock.EvalForJob(next))})
		log.raw(&raft.Log{Type: raft.LogCommand, Data: entry})
		log.add(structs.AllocClientUpdateRequestType, &structs.AllocUpdateRequest{Alloc: []*structs.Allocation{
			{ID: alloc.ID, ClientStatus: structs.AllocClientStatusRunning}}})
		log.raw(&raft.Log{Type: raft.LogCommand, Data: entry})
		log.add(structs.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{mock.Eval(mock.EvalForJob(next))}})
		for seed := range uint64(3) {
			fsmtest.SameAsSequential(t, setup(t), log.logs, seed, len(log.logs))
		}
	})
}
