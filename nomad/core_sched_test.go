package nomad

import (
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/clock"
	"github.com/opennomad/nomad/nomad/coresched"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// gcFixture is a leader on a fake clock, with helpers to age objects.
type gcFixture struct {
	t     *testing.T
	srv   *Server
	clock *clock.Fake
	node  *structs.Node
}

func newGCFixture(t *testing.T) *gcFixture {
	t.Helper()
	fake := clock.NewFake(time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC))
	s := newTestServer(t, func(c *Config) {
		c.Clock = fake
		// Aging objects by hours must not also expire the node's
		// heartbeat, whose node-update evals would keep jobs alive.
		c.MinHeartbeatTTL = 1000 * time.Hour
	})
	f := &gcFixture{t: t, srv: s, clock: fake, node: mock.Node()}
	registerNode(t, s, f.node)
	return f
}

// runGC runs one core eval of the given kind on a fresh snapshot.
func (f *gcFixture) runGC(kind string) {
	f.t.Helper()
	sched := f.srv.coreSchedulerFactory(nil, f.srv.State().Snapshot().SchedulerView(), nil)
	must.NoError(f.t, sched.Process(coresched.NewEval(kind, latestIndex(f.t, f.srv), f.clock.Now())))
}

// setEval writes the eval with a new status, stamped now.
func (f *gcFixture) setEval(id, status string) {
	f.t.Helper()
	e, err := f.srv.State().EvalByID(nil, id)
	must.NoError(f.t, err)
	c := e.Copy()
	c.Status = status
	c.ModifyTime = f.clock.Now().UnixNano()
	_, _, err = f.srv.raftApply(structs.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{c}})
	must.NoError(f.t, err)
}

// place commits an alloc of job placed by evalID, stamped now.
func (f *gcFixture) place(job *structs.Job, evalID string, index int) *structs.Allocation {
	f.t.Helper()
	stored, err := f.srv.State().JobByID(nil, job.Namespace, job.ID)
	must.NoError(f.t, err)
	a := mock.Alloc(mock.ForJob(stored, index), mock.OnNode(f.node))
	a.EvalID = evalID
	a.CreateTime = f.clock.Now().UnixNano()
	a.ModifyTime = a.CreateTime
	_, _, err = f.srv.raftApply(structs.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
		AllocUpdateRequest: structs.AllocUpdateRequest{AllocsUpdated: []*structs.Allocation{a}, Job: stored}})
	must.NoError(f.t, err)
	return a
}

// report writes a client status for the alloc, stamped now.
func (f *gcFixture) report(id, status string) {
	f.t.Helper()
	_, _, err := f.srv.raftApply(structs.AllocClientUpdateRequestType, &structs.AllocUpdateRequest{
		Alloc: []*structs.Allocation{{ID: id, ClientStatus: status, ModifyTime: f.clock.Now().UnixNano()}}})
	must.NoError(f.t, err)
}

func (f *gcFixture) evalExists(id string) bool {
	f.t.Helper()
	e, err := f.srv.State().EvalByID(nil, id)
	must.NoError(f.t, err)
	return e != nil
}

func (f *gcFixture) allocExists(id string) bool {
	f.t.Helper()
	a, err := f.srv.State().AllocByID(nil, id)
	must.NoError(f.t, err)
	return a != nil
}

func (f *gcFixture) jobExists(job *structs.Job) bool {
	f.t.Helper()
	j, err := f.srv.State().JobByID(nil, job.Namespace, job.ID)
	must.NoError(f.t, err)
	return j != nil
}

func TestCoreScheduler_EvalGC(t *testing.T) {
	f := newGCFixture(t)
	job := mock.Job()
	done := registerJob(t, f.srv, job).EvalID // complete, its alloc finished
	f.setEval(done, structs.EvalStatusComplete)
	finished := f.place(job, done, 0)
	f.report(finished.ID, structs.AllocClientStatusComplete)

	live := registerJob(t, f.srv, job.Copy()).EvalID // complete, its alloc runs
	f.setEval(live, structs.EvalStatusComplete)
	running := f.place(job, live, 1)
	f.report(running.ID, structs.AllocClientStatusRunning)

	pending := registerJob(t, f.srv, job.Copy()).EvalID // never terminal

	f.runGC(structs.CoreJobEvalGC)
	must.True(t, f.evalExists(done), must.Sprint("younger than the threshold"))

	f.clock.Advance(f.srv.config.EvalGCThreshold + time.Second)
	f.runGC(structs.CoreJobEvalGC)
	must.False(t, f.evalExists(done))
	must.False(t, f.allocExists(finished.ID))
	must.True(t, f.evalExists(live), must.Sprint("an eval goes only with all its allocs"))
	must.True(t, f.allocExists(running.ID))
	must.True(t, f.evalExists(pending))
	must.True(t, f.jobExists(job))
}

func TestCoreScheduler_BatchEvalsStayWhileTheJobLives(t *testing.T) {
	f := newGCFixture(t)
	job := mock.BatchJob()
	evalID := registerJob(t, f.srv, job).EvalID
	f.setEval(evalID, structs.EvalStatusComplete)
	alloc := f.place(job, evalID, 0)
	f.report(alloc.ID, structs.AllocClientStatusComplete)
	stored, _ := f.srv.State().JobByID(nil, job.Namespace, job.ID)
	must.Eq(t, structs.JobStatusDead, stored.Status)

	// Past the batch threshold the eval GC still keeps a live batch job's
	// record of its run: collecting it would run the work again.
	f.clock.Advance(f.srv.config.BatchEvalGCThreshold + time.Second)
	f.runGC(structs.CoreJobEvalGC)
	must.True(t, f.evalExists(evalID))
	must.True(t, f.allocExists(alloc.ID))

	// The job GC takes the dead batch job with everything it left.
	f.runGC(structs.CoreJobJobGC)
	must.False(t, f.jobExists(job))
	must.False(t, f.evalExists(evalID))
	must.False(t, f.allocExists(alloc.ID))
}

func TestCoreScheduler_JobGC(t *testing.T) {
	f := newGCFixture(t)
	stopped := mock.Job()
	first := registerJob(t, f.srv, stopped).EvalID
	f.setEval(first, structs.EvalStatusComplete)
	alloc := f.place(stopped, first, 0)
	var dereg structs.JobDeregisterResponse
	must.NoError(t, f.srv.RPC("Job.Deregister", &structs.JobDeregisterRequest{JobID: stopped.ID}, &dereg))
	f.setEval(dereg.EvalID, structs.EvalStatusComplete)
	f.report(alloc.ID, structs.AllocClientStatusComplete)

	running := mock.Job()
	runEval := registerJob(t, f.srv, running).EvalID
	f.setEval(runEval, structs.EvalStatusComplete)
	f.report(f.place(running, runEval, 0).ID, structs.AllocClientStatusRunning)

	f.runGC(structs.CoreJobJobGC)
	must.True(t, f.jobExists(stopped), must.Sprint("younger than the threshold"))
	f.clock.Advance(f.srv.config.JobGCThreshold + time.Second)
	f.runGC(structs.CoreJobJobGC)
	must.False(t, f.jobExists(stopped))
	must.False(t, f.evalExists(first))
	must.False(t, f.evalExists(dereg.EvalID))
	must.False(t, f.allocExists(alloc.ID))
	must.True(t, f.jobExists(running))
	must.True(t, f.evalExists(runEval))
}

// TestCoreScheduler_TaggedJobsStay: a stopped job with a tagged version
// is not collected; once the tag is gone, it is.
func TestCoreScheduler_TaggedJobsStay(t *testing.T) {
	f := newGCFixture(t)
	job := mock.Job()
	first := registerJob(t, f.srv, job).EvalID
	f.setEval(first, structs.EvalStatusComplete)
	var tag structs.JobTagResponse
	must.NoError(t, f.srv.RPC("Job.TagVersion", &structs.JobApplyTagRequest{JobID: job.ID, Name: "keep",
		Tag: &structs.JobVersionTag{Name: "keep"}}, &tag))
	var dereg structs.JobDeregisterResponse
	must.NoError(t, f.srv.RPC("Job.Deregister", &structs.JobDeregisterRequest{JobID: job.ID}, &dereg))
	f.setEval(dereg.EvalID, structs.EvalStatusComplete)

	f.clock.Advance(f.srv.config.JobGCThreshold + time.Second)
	f.runGC(structs.CoreJobJobGC)
	must.True(t, f.jobExists(job), must.Sprint("a tagged version keeps the job"))

	must.NoError(t, f.srv.RPC("Job.TagVersion", &structs.JobApplyTagRequest{JobID: job.ID, Name: "keep"}, &tag))
	f.runGC(structs.CoreJobJobGC)
	must.False(t, f.jobExists(job))
}

func TestCoreScheduler_NodeGC(t *testing.T) {
	f := newGCFixture(t)
	empty := mock.Node()
	busy := mock.Node()
	registerNode(t, f.srv, empty)
	registerNode(t, f.srv, busy)
	job := mock.Job()
	registerJob(t, f.srv, job)
	stored, _ := f.srv.State().JobByID(nil, job.Namespace, job.ID)
	a := mock.Alloc(mock.ForJob(stored, 0), mock.OnNode(busy))
	_, _, err := f.srv.raftApply(structs.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
		AllocUpdateRequest: structs.AllocUpdateRequest{AllocsUpdated: []*structs.Allocation{a}, Job: stored}})
	must.NoError(t, err)
	for _, n := range []*structs.Node{empty, busy} {
		var reply structs.NodeUpdateResponse
		must.NoError(t, f.srv.RPC("Node.UpdateStatus", &structs.NodeUpdateStatusRequest{
			NodeID: n.ID, Status: structs.NodeStatusDown}, &reply))
	}
	nodeExists := func(id string) bool {
		n, err := f.srv.State().NodeByID(nil, id)
		must.NoError(t, err)
		return n != nil
	}

	f.runGC(structs.CoreJobNodeGC)
	must.True(t, nodeExists(empty.ID), must.Sprint("down for less than the threshold"))
	f.clock.Advance(f.srv.config.NodeGCThreshold + time.Second)
	f.runGC(structs.CoreJobNodeGC)
	must.False(t, nodeExists(empty.ID))
	must.True(t, nodeExists(busy.ID), must.Sprint("it still has a live alloc"))
	must.True(t, nodeExists(f.node.ID), must.Sprint("ready nodes stay"))
}

func TestCoreScheduler_DeploymentGC(t *testing.T) {
	f := newGCFixture(t)
	job := mock.Job()
	registerJob(t, f.srv, job)
	stored, _ := f.srv.State().JobByID(nil, job.Namespace, job.ID)
	finished := structs.NewDeployment(stored, 50, f.clock.Now())
	active := structs.NewDeployment(stored, 50, f.clock.Now())
	for _, d := range []*structs.Deployment{finished, active} {
		_, _, err := f.srv.raftApply(structs.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{Deployment: d})
		must.NoError(t, err)
	}
	_, _, err := f.srv.raftApply(structs.DeploymentStatusUpdateRequestType, &structs.DeploymentStatusUpdateRequest{
		DeploymentUpdate: &structs.DeploymentStatusUpdate{DeploymentID: finished.ID, Status: structs.DeploymentStatusSuccessful}})
	must.NoError(t, err)
	exists := func(id string) bool {
		d, err := f.srv.State().DeploymentByID(nil, id)
		must.NoError(t, err)
		return d != nil
	}

	f.runGC(structs.CoreJobDeploymentGC)
	must.True(t, exists(finished.ID))
	f.clock.Advance(f.srv.config.DeploymentGCThreshold + time.Second)
	f.runGC(structs.CoreJobDeploymentGC)
	must.False(t, exists(finished.ID))
	must.True(t, exists(active.ID))
}

func TestCoreScheduler_ForceGCIgnoresThresholds(t *testing.T) {
	f := newGCFixture(t)
	stopped := mock.Job()
	first := registerJob(t, f.srv, stopped).EvalID
	f.setEval(first, structs.EvalStatusComplete)
	var dereg structs.JobDeregisterResponse
	must.NoError(t, f.srv.RPC("Job.Deregister", &structs.JobDeregisterRequest{JobID: stopped.ID}, &dereg))
	f.setEval(dereg.EvalID, structs.EvalStatusComplete)
	down := mock.Node()
	registerNode(t, f.srv, down)
	var reply structs.NodeUpdateResponse
	must.NoError(t, f.srv.RPC("Node.UpdateStatus", &structs.NodeUpdateStatusRequest{NodeID: down.ID,
		Status: structs.NodeStatusDown}, &reply))

	live := mock.Job()
	liveEval := registerJob(t, f.srv, live).EvalID

	f.runGC(structs.CoreJobForceGC)
	must.False(t, f.jobExists(stopped))
	must.False(t, f.evalExists(first))
	n, _ := f.srv.State().NodeByID(nil, down.ID)
	must.Nil(t, n)
	must.True(t, f.jobExists(live))
	must.True(t, f.evalExists(liveEval), must.Sprint("pending evals are never collected"))
}

func TestCoreScheduler_UnknownKind(t *testing.T) {
	f := newGCFixture(t)
	sched := f.srv.coreSchedulerFactory(nil, f.srv.State().Snapshot().SchedulerView(), nil)
	err := sched.Process(coresched.NewEval("volume-gc", 1, f.clock.Now()))
	must.ErrorContains(t, err, `cannot handle job "volume-gc"`)
	// Extra data after a colon is ignored.
	must.NoError(t, sched.Process(coresched.NewEval(structs.CoreJobEvalGC+":extra", 1, f.clock.Now())))
}
