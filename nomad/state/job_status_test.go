package state

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

func TestJobStatus_Rules(t *testing.T) {
	type setup struct {
		allocs      []string // client statuses of allocs of this job instance
		oldAllocs   []string // client statuses of allocs of a purged instance
		evals       []string
		deployments []string
	}
	cases := []struct {
		name     string
		edit     func(j *structs.Job)
		setup    setup
		evalDel  bool
		expected string
	}{
		{name: "brand new", expected: structs.JobStatusPending},
		{name: "pending eval", setup: setup{evals: []string{structs.EvalStatusPending}}, expected: structs.JobStatusPending},
		{name: "blocked eval", setup: setup{evals: []string{structs.EvalStatusBlocked}}, expected: structs.JobStatusPending},
		{name: "all evals terminal", setup: setup{evals: []string{structs.EvalStatusComplete, structs.EvalStatusFailed}}, expected: structs.JobStatusDead},
		{name: "evals being collected", evalDel: true, expected: structs.JobStatusDead},
		{name: "live alloc", setup: setup{allocs: []string{structs.AllocClientStatusComplete, structs.AllocClientStatusRunning}, evals: []string{structs.EvalStatusComplete}}, expected: structs.JobStatusRunning},
		{name: "live alloc beats pending eval", setup: setup{allocs: []string{structs.AllocClientStatusPending}, evals: []string{structs.EvalStatusPending}}, expected: structs.JobStatusRunning},
		{name: "only terminal allocs", setup: setup{allocs: []string{structs.AllocClientStatusComplete, structs.AllocClientStatusFailed}}, expected: structs.JobStatusDead},
		{name: "live allocs of a purged instance don't count", setup: setup{oldAllocs: []string{structs.AllocClientStatusRunning}}, expected: structs.JobStatusPending},
		{name: "active deployment", setup: setup{deployments: []string{structs.DeploymentStatusRunning}, evals: []string{structs.EvalStatusComplete}}, expected: structs.JobStatusRunning},
		{name: "finished deployment", setup: setup{deployments: []string{structs.DeploymentStatusSuccessful}, evals: []string{structs.EvalStatusComplete}}, expected: structs.JobStatusDead},
		{name: "system job", edit: func(j *structs.Job) { j.Type = structs.JobTypeSystem }, expected: structs.JobStatusRunning},
		{name: "stopped system job", edit: func(j *structs.Job) { j.Type = structs.JobTypeSystem; j.Stop = true }, expected: structs.JobStatusDead},
		{name: "periodic template", edit: func(j *structs.Job) { j.Periodic = &structs.PeriodicConfig{Enabled: true} }, setup: setup{evals: []string{structs.EvalStatusPending}}, expected: structs.JobStatusRunning},
		{name: "parameterized template", edit: func(j *structs.Job) { j.ParameterizedJob = &structs.ParameterizedJobConfig{} }, expected: structs.JobStatusRunning},
		{name: "dispatched child is an ordinary job", edit: func(j *structs.Job) { j.ParameterizedJob = &structs.ParameterizedJobConfig{}; j.Dispatched = true }, expected: structs.JobStatusPending},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := testStore(t)
			job := mockJob()
			if tc.edit != nil {
				tc.edit(job)
			}
			job.CreateIndex = 10
			node := mockNode()
			txn := s.db.Txn(true)
			defer txn.Abort()
			insertAllocs := func(statuses []string, createIndex uint64) {
				for _, st := range statuses {
					j := *job
					j.CreateIndex = createIndex
					a := mockAlloc(&j, node)
					a.ClientStatus = st
					must.NoError(t, txn.Insert(TableAllocs, a))
				}
			}
			insertAllocs(tc.setup.allocs, 10)
			insertAllocs(tc.setup.oldAllocs, 3)
			for _, st := range tc.setup.evals {
				e := mockEval(job)
				e.Status = st
				must.NoError(t, txn.Insert(TableEvals, e))
			}
			for _, st := range tc.setup.deployments {
				d := mockDeployment(job)
				d.JobCreateIndex = 10
				d.Status = st
				must.NoError(t, txn.Insert(TableDeployment, d))
			}
			got, err := jobStatus(txn, job, tc.evalDel)
			must.NoError(t, err)
			must.Eq(t, tc.expected, got)
		})
	}
}

// TestJobStatus_Transitions follows one job through its life and checks
// the status the store keeps after each write.
func TestJobStatus_Transitions(t *testing.T) {
	s := testStore(t)
	node := mockNode()
	must.NoError(t, s.UpsertNode(1, node))
	job := mockJob()
	eval := mockEval(job)

	status := func() string {
		t.Helper()
		j, err := s.JobByID(nil, job.Namespace, job.ID)
		must.NoError(t, err)
		return j.Status
	}

	// Registration with its eval in one transaction: pending.
	must.NoError(t, s.WithWriteTxn(10, func(tx *Txn) error {
		if err := tx.UpsertJob(job); err != nil {
			return err
		}
		return tx.UpsertEvals([]*structs.Evaluation{eval})
	}))
	must.Eq(t, structs.JobStatusPending, status())

	// The plan places an alloc: running.
	stored, _ := s.JobByID(nil, job.Namespace, job.ID)
	alloc := mockAlloc(stored, node)
	alloc.EvalID = eval.ID
	must.NoError(t, s.UpsertAllocs(11, []*structs.Allocation{alloc}))
	must.Eq(t, structs.JobStatusRunning, status())
	j, _ := s.JobByID(nil, job.Namespace, job.ID)
	must.Eq(t, 11, j.ModifyIndex)

	// The eval completes: still running because of the alloc.
	done := eval.Copy()
	done.Status = structs.EvalStatusComplete
	must.NoError(t, s.UpsertEvals(12, []*structs.Evaluation{done}))
	must.Eq(t, structs.JobStatusRunning, status())

	// The client finishes the alloc: dead.
	upd := &structs.Allocation{ID: alloc.ID, ClientStatus: structs.AllocClientStatusComplete}
	must.NoError(t, s.UpdateAllocsFromClient(13, []*structs.Allocation{upd}))
	must.Eq(t, structs.JobStatusDead, status())

	// A new eval for the job: pending again.
	again := mockEval(job)
	must.NoError(t, s.UpsertEvals(14, []*structs.Evaluation{again}))
	must.Eq(t, structs.JobStatusPending, status())

	// Garbage collection removes every eval: dead.
	must.NoError(t, s.DeleteEvals(15, []string{eval.ID, again.ID}, nil))
	must.Eq(t, structs.JobStatusDead, status())
}

func TestJobStatus_ParentChildrenSummary(t *testing.T) {
	s := testStore(t)
	parent := mockJob()
	parent.Type = structs.JobTypeBatch
	parent.ParameterizedJob = &structs.ParameterizedJobConfig{}
	registered(t, s, 1, parent)

	child := mockJob()
	child.Type = structs.JobTypeBatch
	child.ID = parent.ID + "/dispatch-1"
	child.ParentID = parent.ID
	child.Dispatched = true
	registered(t, s, 2, child)

	children := func() structs.JobChildrenSummary {
		t.Helper()
		sum, err := s.JobSummaryByID(nil, parent.Namespace, parent.ID)
		must.NoError(t, err)
		return *sum.Children
	}
	must.Eq(t, structs.JobChildrenSummary{Pending: 1}, children())

	ev := mockEval(child)
	ev.Status = structs.EvalStatusComplete
	must.NoError(t, s.UpsertEvals(3, []*structs.Evaluation{ev}))
	must.Eq(t, structs.JobChildrenSummary{Dead: 1}, children())

	must.NoError(t, s.DeleteJob(4, child.Namespace, child.ID))
	must.Eq(t, structs.JobChildrenSummary{}, children())
}
