package nomad

import (
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/go-memdb"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/nomad/state/statetest"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// The whole pipeline in one server: Job.Register writes the job and its
// eval through Raft, the broker hands the eval to a worker, the builtin
// scheduler plans, the applier commits, and the allocs are in state.

func TestServerPipeline_ServiceJobIsPlaced(t *testing.T) {
	s := newPipelineServer(t, 2, nil)
	nodes := []*structs.Node{mock.Node(), mock.Node(), mock.Node()}
	for _, n := range nodes {
		registerNode(t, s, n)
	}
	job := mock.Job(mock.Count(3))
	reply := registerJob(t, s, job)

	live := waitForLive(t, s, job, 3)
	for _, a := range live {
		must.Eq(t, reply.EvalID, a.EvalID)
		must.Eq(t, structs.AllocDesiredStatusRun, a.DesiredStatus)
		must.NotEq(t, "", a.NodeID)
	}
	eval, err := s.State().EvalByID(nil, reply.EvalID)
	must.NoError(t, err)
	must.Eq(t, structs.EvalStatusComplete, eval.Status)
	summary, err := s.State().JobSummaryByID(nil, job.Namespace, job.ID)
	must.NoError(t, err)
	must.Eq(t, 3, summary.Summary["web"].Starting)
}

func TestServerPipeline_BatchAndSystemJobs(t *testing.T) {
	s := newPipelineServer(t, 2, nil)
	for range 3 {
		registerNode(t, s, mock.Node())
	}
	batch := mock.BatchJob()
	system := mock.SystemJob()
	registerJob(t, s, batch)
	registerJob(t, s, system)

	waitForLive(t, s, batch, batch.TaskGroups[0].Count)
	onNodes := waitForLive(t, s, system, 3)
	seen := map[string]bool{}
	for _, a := range onNodes {
		seen[a.NodeID] = true
	}
	must.MapLen(t, 3, seen, must.Sprint("one system alloc per node"))

	// A node that joins later gets the system job too.
	registerNode(t, s, mock.Node())
	waitForLive(t, s, system, 4)
}

func TestServerPipeline_BlockedEvalIsUnblockedByANewNode(t *testing.T) {
	s := newPipelineServer(t, 2, nil)
	registerNode(t, s, mock.Node(mock.NodeResources(1000, 1024)))
	job := mock.Job(mock.Count(2), mock.TaskResources(1500, 256))
	reply := registerJob(t, s, job)

	var blockedID string
	waitForState(t, s, func(ws memdb.WatchSet, store *state.StateStore) (bool, string) {
		eval, err := store.EvalByID(ws, reply.EvalID)
		must.NoError(t, err)
		if eval.Status != structs.EvalStatusComplete || eval.BlockedEval == "" {
			return false, fmt.Sprintf("eval is %s, blocked eval %q", eval.Status, eval.BlockedEval)
		}
		blockedID = eval.BlockedEval
		return true, ""
	})
	must.MapContainsKey(t, mustEval(t, s, reply.EvalID).FailedTGAllocs, "web")
	must.Eq(t, structs.EvalStatusBlocked, mustEval(t, s, blockedID).Status)
	must.SliceEmpty(t, liveAllocs(t, nil, s.State(), job))

	// Room appears: the blocked eval is released and places both.
	registerNode(t, s, mock.Node(mock.NodeResources(4000, 8192)))
	waitForLive(t, s, job, 2)
	waitForState(t, s, func(ws memdb.WatchSet, store *state.StateStore) (bool, string) {
		e, err := store.EvalByID(ws, blockedID)
		must.NoError(t, err)
		return e.Status == structs.EvalStatusComplete, "blocked eval is " + e.Status
	})
}

func mustEval(t *testing.T, s *Server, id string) *structs.Evaluation {
	t.Helper()
	e, err := s.State().EvalByID(nil, id)
	must.NoError(t, err)
	must.NotNil(t, e)
	return e
}

// A job update with max_parallel 1 replaces one alloc at a time: the
// next goes only once the deployment watcher found the previous one
// healthy from its client's task states.
func TestServerPipeline_RollingUpdateOneAtATime(t *testing.T) {
	s := newPipelineServer(t, 2, nil)
	for range 3 {
		registerNode(t, s, mock.Node())
	}
	job := mock.Job(mock.Count(3))
	job.TaskGroups[0].Update = &structs.UpdateStrategy{
		MaxParallel: 1, HealthCheck: structs.UpdateHealthCheckTaskStates,
		MinHealthyTime: 10 * time.Millisecond, HealthyDeadline: time.Minute, ProgressDeadline: 10 * time.Minute,
	}
	registerJob(t, s, job.Copy())
	for _, a := range waitForLive(t, s, job, 3) {
		updateAllocs(t, s, runningUpdate(a, time.Now()))
	}
	waitForDeployment(t, s, job, 0, structs.DeploymentStatusSuccessful)

	// Version 1 changes the task: every alloc must be replaced.
	v1 := job.Copy()
	v1.TaskGroups[0].Tasks[0].Env = map[string]string{"VERSION": "1"}
	registerJob(t, s, v1)
	for replaced := 0; replaced < 3; replaced++ {
		var fresh []*structs.Allocation
		waitForState(t, s, func(ws memdb.WatchSet, store *state.StateStore) (bool, string) {
			fresh = fresh[:0]
			for _, a := range liveAllocs(t, ws, store, job) {
				if a.Job.Version == 1 && a.ClientStatus == structs.AllocClientStatusPending {
					fresh = append(fresh, a)
				}
			}
			return len(fresh) > 0 && openEvals(t, ws, store, job) == 0,
				fmt.Sprintf("%d new allocs waiting to run", len(fresh))
		})
		must.Len(t, 1, fresh, must.Sprintf("step %d: max_parallel 1 allows one new alloc at a time", replaced))
		updateAllocs(t, s, runningUpdate(fresh[0], time.Now()))
		// The old alloc it replaced is stopped; its client says so.
		waitForState(t, s, func(ws memdb.WatchSet, store *state.StateStore) (bool, string) {
			old := 0
			for _, a := range liveAllocs(t, ws, store, job) {
				if a.Job.Version == 0 {
					old++
				}
			}
			return old == 2-replaced, fmt.Sprintf("%d old allocs left, want %d", old, 2-replaced)
		})
	}
	waitForDeployment(t, s, job, 1, structs.DeploymentStatusSuccessful)
	for _, a := range liveAllocs(t, nil, s.State(), job) {
		must.Eq(t, uint64(1), a.Job.Version)
	}
}

// waitForDeployment waits until the deployment of the job's version has
// the status.
func waitForDeployment(t *testing.T, s *Server, job *structs.Job, version uint64, status string) *structs.Deployment {
	t.Helper()
	var found *structs.Deployment
	waitForState(t, s, func(ws memdb.WatchSet, store *state.StateStore) (bool, string) {
		ds, err := store.DeploymentsByJobID(ws, job.Namespace, job.ID, true)
		must.NoError(t, err)
		for _, d := range ds {
			if d.JobVersion == version {
				found = d
				return d.Status == status, fmt.Sprintf("deployment of version %d is %s: %s", version, d.Status, d.StatusDescription)
			}
		}
		return false, fmt.Sprintf("no deployment of version %d", version)
	})
	return found
}

// Draining a node migrates its allocs as the migrate block allows and
// completes the drain once none is left.
func TestServerPipeline_NodeDrainMigratesAndCompletes(t *testing.T) {
	s := newPipelineServer(t, 2, nil)
	startFakeClients(t, s, false)
	drained := mock.Node()
	registerNode(t, s, drained)
	job := mock.Job(mock.Count(3))
	job.TaskGroups[0].Migrate = &structs.MigrateStrategy{
		MaxParallel: 1, HealthCheck: structs.UpdateHealthCheckTaskStates,
		MinHealthyTime: 10 * time.Millisecond, HealthyDeadline: time.Minute,
	}
	registerJob(t, s, job)
	for _, a := range waitForLive(t, s, job, 3) {
		must.Eq(t, drained.ID, a.NodeID)
	}
	other := mock.Node()
	registerNode(t, s, other)

	var reply structs.NodeDrainUpdateResponse
	must.NoError(t, s.RPC("Node.UpdateDrain", &structs.NodeUpdateDrainRequest{
		NodeID:        drained.ID,
		DrainStrategy: &structs.DrainStrategy{DrainSpec: structs.DrainSpec{Deadline: time.Hour}},
	}, &reply))

	waitForState(t, s, func(ws memdb.WatchSet, store *state.StateStore) (bool, string) {
		n, err := store.NodeByID(ws, drained.ID)
		must.NoError(t, err)
		live := liveAllocs(t, ws, store, job)
		onOther := 0
		for _, a := range live {
			if a.NodeID == other.ID && a.ClientStatus == structs.AllocClientStatusRunning {
				onOther++
			}
		}
		done := n.DrainStrategy == nil && n.LastDrain != nil && n.LastDrain.Status == structs.DrainStatusComplete
		return done && onOther == 3 && len(live) == 3,
			fmt.Sprintf("drain done %v, %d live allocs, %d running on the other node", done, len(live), onOther)
	})
	n, err := s.State().NodeByID(nil, drained.ID)
	must.NoError(t, err)
	must.Eq(t, structs.NodeSchedulingIneligible, n.SchedulingEligibility)
}

func TestServerPipeline_GCRemovesOldTerminalObjects(t *testing.T) {
	s := newPipelineServer(t, 1, nil)
	startFakeClients(t, s, true)
	registerNode(t, s, mock.Node())
	job := mock.BatchJob()
	reply := registerJob(t, s, job)
	waitForState(t, s, func(ws memdb.WatchSet, store *state.StateStore) (bool, string) {
		j, err := store.JobByID(ws, job.Namespace, job.ID)
		must.NoError(t, err)
		return j.Status == structs.JobStatusDead, "job is " + j.Status
	})
	var dereg structs.JobDeregisterResponse
	must.NoError(t, s.RPC("Job.Deregister", &structs.JobDeregisterRequest{JobID: job.ID}, &dereg))
	waitForState(t, s, func(ws memdb.WatchSet, store *state.StateStore) (bool, string) {
		return openEvals(t, ws, store, job) == 0, "the deregistration is being scheduled"
	})

	var gc structs.GenericResponse
	must.NoError(t, s.RPC("System.GarbageCollect", &structs.GenericRequest{}, &gc))
	waitForState(t, s, func(ws memdb.WatchSet, store *state.StateStore) (bool, string) {
		j, err := store.JobByID(ws, job.Namespace, job.ID)
		must.NoError(t, err)
		e, err := store.EvalByID(ws, reply.EvalID)
		must.NoError(t, err)
		allocs, err := store.AllocsByJob(ws, job.Namespace, job.ID, true)
		must.NoError(t, err)
		return j == nil && e == nil && len(allocs) == 0,
			fmt.Sprintf("job left %v, eval left %v, %d allocs left", j != nil, e != nil, len(allocs))
	})
}

func TestServerPipeline_RestartFromDataDirFindsPlacements(t *testing.T) {
	dir := t.TempDir()
	onDisk := func(c *Config) {
		c.DevMode = false
		c.DataDir = dir
	}
	s1 := newPipelineServer(t, 2, onDisk)
	for range 2 {
		registerNode(t, s1, mock.Node())
	}
	jobs := []*structs.Job{mock.Job(mock.Count(2)), mock.BatchJob(), mock.SystemJob()}
	for _, j := range jobs {
		registerJob(t, s1, j)
	}
	waitForLive(t, s1, jobs[0], 2)
	waitForLive(t, s1, jobs[1], jobs[1].TaskGroups[0].Count)
	waitForLive(t, s1, jobs[2], 2)
	must.NoError(t, s1.raft.Snapshot().Error())
	// More after the snapshot: the restart needs the snapshot and the log.
	late := mock.Job(mock.Count(1))
	registerJob(t, s1, late)
	waitForLive(t, s1, late, 1)
	must.NoError(t, s1.Shutdown())

	s2 := newPipelineServer(t, 2, onDisk)
	statetest.SameState(t, s1.State(), s2.State())
	allocs, err := s2.State().Allocs(nil, structs.AllNamespaces)
	must.NoError(t, err)
	must.Len(t, 2+jobs[1].TaskGroups[0].Count+2+1, allocs)

	// The restarted server schedules on top of what it found.
	more := mock.Job(mock.Count(1))
	registerJob(t, s2, more)
	waitForLive(t, s2, more, 1)
	assertServerNoOvercommit(t, s2)
}

func TestServerPipeline_SnapshotRestoreHasThePlacements(t *testing.T) {
	s1 := newPipelineServer(t, 2, nil)
	registerNode(t, s1, mock.Node())
	job := mock.Job(mock.Count(2))
	registerJob(t, s1, job)
	waitForLive(t, s1, job, 2)
	future := s1.raft.Snapshot()
	must.NoError(t, future.Error())
	meta, rc, err := future.Open()
	must.NoError(t, err)
	defer rc.Close()

	s2 := newPipelineServer(t, 2, nil)
	must.NoError(t, s2.raft.Restore(meta, rc, 10*time.Second))
	statetest.SameState(t, s1.State(), s2.State())
	must.Len(t, 2, liveAllocs(t, nil, s2.State(), job))
}

// assertServerNoOvercommit checks that no node's live allocs exceed it.
func assertServerNoOvercommit(t *testing.T, s *Server) {
	t.Helper()
	nodes, err := s.State().Nodes(nil)
	must.NoError(t, err)
	for _, n := range nodes {
		allocs, err := s.State().AllocsByNodeTerminal(nil, n.ID, false)
		must.NoError(t, err)
		fit, dim, used := structs.AllocsFit(n, allocs)
		must.True(t, fit, must.Sprintf("node %s overcommitted on %s: %d allocs use %+v", n.ID, dim, len(allocs), used.Flattened))
	}
}

// Alloc.Stop replaces the alloc, wherever it runs: the scheduler stops
// the alloc marked to migrate and places a new one.
func TestServerPipeline_AllocStopReplacesTheAlloc(t *testing.T) {
	s := newPipelineServer(t, 2, nil)
	startFakeClients(t, s, false)
	registerNode(t, s, mock.Node())
	job := mock.Job(mock.Count(1))
	registerJob(t, s, job)
	old := waitForLive(t, s, job, 1)[0]

	var reply structs.AllocStopResponse
	must.NoError(t, s.RPC("Alloc.Stop", &structs.AllocStopRequest{AllocID: old.ID}, &reply))
	must.NotEq(t, "", reply.EvalID)
	waitForState(t, s, func(ws memdb.WatchSet, store *state.StateStore) (bool, string) {
		a, err := store.AllocByID(ws, old.ID)
		must.NoError(t, err)
		live := liveAllocs(t, ws, store, job)
		replaced := len(live) == 1 && live[0].ID != old.ID
		return a.DesiredStatus == structs.AllocDesiredStatusStop && replaced,
			fmt.Sprintf("old alloc desired %s, %d live allocs", a.DesiredStatus, len(live))
	})
}
