package fsm

import (
	"bytes"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/nomad/state/statetest"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// fsmEffects records the FSM's calls into the leader's broker and
// blocked-evals tracker.
type fsmEffects struct {
	mu        sync.Mutex
	enqueued  []string // eval IDs
	blocked   []string // eval IDs
	untracked []string // "namespace/job"
	unblocked []string // "class@index"
	nodes     []string // "node@index"
}

func (r *fsmEffects) Enqueue(e *structs.Evaluation) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.enqueued = append(r.enqueued, e.ID)
}

func (r *fsmEffects) Block(e *structs.Evaluation) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.blocked = append(r.blocked, e.ID)
}

func (r *fsmEffects) Untrack(jobID, namespace string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.untracked = append(r.untracked, namespace+"/"+jobID)
}

func (r *fsmEffects) Unblock(class string, index uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.unblocked = append(r.unblocked, fmt.Sprintf("%s@%d", class, index))
}

func (r *fsmEffects) UnblockClassAndQuota(class, quota string, index uint64) {
	r.Unblock(class+quota, index)
}

func (r *fsmEffects) UnblockNode(nodeID string, index uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.nodes = append(r.nodes, fmt.Sprintf("%s@%d", nodeID, index))
}

// testEpochTime is a fixed instant for objects whose time does not matter.
var testEpochTime = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// newTestFSM returns an FSM whose side effects are recorded.
func newTestFSM(t *testing.T) (*FSM, *fsmEffects) {
	t.Helper()
	fx := &fsmEffects{}
	f, err := New(Config{EvalBroker: fx, BlockedEvals: fx})
	must.NoError(t, err)
	return f, fx
}

// applyEntry feeds one encoded entry to the FSM as Raft would.
func applyEntry(t *testing.T, f *FSM, index uint64, typ structs.MessageType, req interface{}) interface{} {
	t.Helper()
	buf, err := structs.Encode(typ, req)
	must.NoError(t, err)
	return f.Apply(&raft.Log{Index: index, Type: raft.LogCommand, Data: buf})
}

// mustApply applies an entry that must succeed.
func mustApply(t *testing.T, f *FSM, index uint64, typ structs.MessageType, req interface{}) {
	t.Helper()
	if resp := applyEntry(t, f, index, typ, req); resp != nil {
		if err, ok := resp.(error); ok {
			t.Fatalf("applying %s at %d: %v", typ, index, err)
		}
	}
}

// mustFail applies an entry that must be refused without changing state.
func mustFail(t *testing.T, f *FSM, index uint64, typ structs.MessageType, req interface{}) error {
	t.Helper()
	before, err := f.State().LatestIndex()
	must.NoError(t, err)
	resp := applyEntry(t, f, index, typ, req)
	err, ok := resp.(error)
	if !ok {
		t.Fatalf("applying %s at %d: want an error, got %#v", typ, index, resp)
	}
	after, _ := f.State().LatestIndex()
	must.Eq(t, before, after, must.Sprint("a refused entry must not write"))
	return err
}

func TestFSM_UnknownAndDeprecatedTypes(t *testing.T) {
	f, _ := newTestFSM(t)
	cases := []struct {
		name    string
		data    []byte
		wantErr bool
	}{
		{"unknown type is refused", []byte{99, 0x80}, true},
		{"unknown type flagged ignorable is skipped", []byte{99 | byte(structs.IgnoreUnknownTypeFlag), 0x80}, false},
		{"numbered but unsupported type is refused", []byte{byte(structs.DeploymentPromoteRequestType), 0x80}, true},
		{"deprecated alloc update is a no-op", []byte{byte(structs.AllocUpdateRequestType), 0x80}, false},
		{"garbage body is refused", []byte{byte(structs.EvalUpdateRequestType), 0xc1}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp := f.Apply(&raft.Log{Index: 5, Type: raft.LogCommand, Data: tc.data})
			_, isErr := resp.(error)
			must.Eq(t, tc.wantErr, isErr, must.Sprintf("response %v", resp))
		})
	}
	// Raft's own entries (configuration, no-op) are not commands.
	must.Nil(t, f.Apply(&raft.Log{Index: 6, Type: raft.LogConfiguration, Data: []byte{1}}))
}

func TestFSM_JobRegisterWritesJobAndEvalTogether(t *testing.T) {
	f, fx := newTestFSM(t)
	job := mock.Job()
	eval := mock.Eval(mock.EvalForJob(job))
	mustApply(t, f, 10, structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job, Eval: eval})

	store := f.State()
	gotJob, _ := store.JobByID(nil, job.Namespace, job.ID)
	must.NotNil(t, gotJob)
	must.Eq(t, 10, gotJob.JobModifyIndex)
	gotEval, _ := store.EvalByID(nil, eval.ID)
	must.NotNil(t, gotEval)
	must.Eq(t, 10, gotEval.CreateIndex)
	must.Eq(t, 10, gotEval.JobModifyIndex)
	must.Eq(t, []string{eval.ID}, fx.enqueued)

	// The same spec again writes no new version but a fresh eval, stamped
	// with the job's unchanged modify index.
	again := job.Copy()
	eval2 := mock.Eval(mock.EvalForJob(job))
	mustApply(t, f, 11, structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: again, Eval: eval2})
	gotJob, _ = store.JobByID(nil, job.Namespace, job.ID)
	must.Eq(t, 10, gotJob.JobModifyIndex)
	must.Eq(t, 0, gotJob.Version)
	gotEval, _ = store.EvalByID(nil, eval2.ID)
	must.Eq(t, 10, gotEval.JobModifyIndex)
	must.Eq(t, []string{eval.ID, eval2.ID}, fx.enqueued)
}

func TestFSM_JobRegisterIsAtomic(t *testing.T) {
	f, fx := newTestFSM(t)
	job := mock.Job()
	bad := mock.Eval(mock.EvalForJob(job), mock.EvalStatus("bogus"))
	err := mustFail(t, f, 10, structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job, Eval: bad})
	must.StrContains(t, err.Error(), "invalid status")
	got, _ := f.State().JobByID(nil, job.Namespace, job.ID)
	must.Nil(t, got, must.Sprint("the job must not be written without its eval"))
	must.SliceEmpty(t, fx.enqueued)
}

func TestFSM_JobRegisterEnforceIndex(t *testing.T) {
	f, _ := newTestFSM(t)
	job := mock.Job()
	mustApply(t, f, 10, structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job})

	cases := []struct {
		name    string
		index   uint64
		wantErr string
	}{
		{"must not exist", 0, "Enforcing job modify index 0: job already exists"},
		{"stale index", 7, "Enforcing job modify index 7: job exists with conflicting job modify index: 10"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			update := job.Copy()
			update.Meta = map[string]string{"v": "2"}
			err := mustFail(t, f, uint64(20+i), structs.JobRegisterRequestType,
				&structs.JobRegisterRequest{Job: update, EnforceIndex: true, JobModifyIndex: tc.index})
			// The FSM names the kind; the RPC layer gives it its status.
			must.ErrorIs(t, err, structs.ErrConflict)
			code, msg, ok := structs.ErrorCode(structs.ClassifyError(err))
			must.True(t, ok)
			must.Eq(t, 400, code)
			must.Eq(t, tc.wantErr, msg)
		})
	}
	update := job.Copy()
	update.Meta = map[string]string{"v": "2"}
	mustApply(t, f, 30, structs.JobRegisterRequestType,
		&structs.JobRegisterRequest{Job: update, EnforceIndex: true, JobModifyIndex: 10})
	got, _ := f.State().JobByID(nil, job.Namespace, job.ID)
	must.Eq(t, 30, got.JobModifyIndex)
}

func TestFSM_JobRegisterCancelsSupersededDeployment(t *testing.T) {
	f, _ := newTestFSM(t)
	job := mock.Job()
	mustApply(t, f, 10, structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job})
	stored, _ := f.State().JobByID(nil, job.Namespace, job.ID)
	d := structs.NewDeployment(stored, 50, testEpochTime)
	must.NoError(t, f.State().UpsertDeployment(11, d))

	update := job.Copy()
	update.Meta = map[string]string{"v": "2"}
	cancel := &structs.DeploymentStatusUpdate{DeploymentID: d.ID, Status: structs.DeploymentStatusCancelled,
		StatusDescription: structs.DeploymentStatusDescriptionNewerJob}
	gone := &structs.DeploymentStatusUpdate{DeploymentID: structs.GenerateUUID(), Status: structs.DeploymentStatusCancelled}
	mustApply(t, f, 12, structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: update,
		DeploymentUpdates: []*structs.DeploymentStatusUpdate{cancel, gone}})
	got, _ := f.State().DeploymentByID(nil, d.ID)
	must.Eq(t, structs.DeploymentStatusCancelled, got.Status)
	must.Eq(t, 12, got.ModifyIndex)
}

func TestFSM_JobDeregister(t *testing.T) {
	cases := []struct {
		name      string
		purge     bool
		wantJob   bool
		wantStop  bool
		wantEvals int
	}{
		{name: "stop keeps a stopped version", purge: false, wantJob: true, wantStop: true, wantEvals: 1},
		{name: "purge removes the job", purge: true, wantJob: false, wantEvals: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, fx := newTestFSM(t)
			job := mock.Job()
			mustApply(t, f, 10, structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job})
			eval := mock.Eval(mock.EvalForJob(job), mock.TriggeredBy(structs.EvalTriggerJobDeregister))
			mustApply(t, f, 11, structs.JobDeregisterRequestType, &structs.JobDeregisterRequest{
				JobID: job.ID, Purge: tc.purge, SubmitTime: 42, Eval: eval,
				WriteRequest: structs.WriteRequest{Namespace: job.Namespace}})
			got, _ := f.State().JobByID(nil, job.Namespace, job.ID)
			must.Eq(t, tc.wantJob, got != nil)
			if got != nil {
				must.Eq(t, tc.wantStop, got.Stop)
				must.Eq(t, 42, got.SubmitTime)
				must.Eq(t, 1, got.Version)
			}
			evals, _ := f.State().EvalsByJob(nil, job.Namespace, job.ID)
			must.Len(t, tc.wantEvals, evals)
			must.Eq(t, []string{eval.ID}, fx.enqueued)
		})
	}

	t.Run("unknown job is a no-op that still writes its eval", func(t *testing.T) {
		f, _ := newTestFSM(t)
		eval := mock.Eval(func(e *structs.Evaluation) { e.JobID = "nope" })
		mustApply(t, f, 10, structs.JobDeregisterRequestType, &structs.JobDeregisterRequest{JobID: "nope", Eval: eval})
		job, _ := f.State().JobByID(nil, structs.DefaultNamespace, "nope")
		must.Nil(t, job)
		evals, _ := f.State().EvalsByJob(nil, structs.DefaultNamespace, "nope")
		must.Len(t, 1, evals)
	})
}

func TestFSM_JobBatchDeregisterSkipsMissingJobs(t *testing.T) {
	f, fx := newTestFSM(t)
	a, b := mock.Job(), mock.Job()
	mustApply(t, f, 10, structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: a})
	mustApply(t, f, 11, structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: b})
	eval := mock.Eval(mock.EvalForJob(b))
	mustApply(t, f, 12, structs.JobBatchDeregisterRequestType, &structs.JobBatchDeregisterRequest{
		Jobs: map[structs.NamespacedID]*structs.JobDeregisterOptions{
			a.NamespacedID():                     {Purge: true},
			b.NamespacedID():                     {Purge: false},
			{ID: "gone", Namespace: a.Namespace}: {Purge: true},
		},
		Evals: []*structs.Evaluation{eval},
	})
	gotA, _ := f.State().JobByID(nil, a.Namespace, a.ID)
	must.Nil(t, gotA)
	gotB, _ := f.State().JobByID(nil, b.Namespace, b.ID)
	must.True(t, gotB.Stop)
	must.Eq(t, []string{eval.ID}, fx.enqueued)
}

func TestFSM_EvalUpdateSideEffects(t *testing.T) {
	job := mock.Job()
	cases := []struct {
		name          string
		status        string
		failed        bool
		wantEnqueued  bool
		wantBlocked   bool
		wantUntracked bool
	}{
		{name: "pending is enqueued", status: structs.EvalStatusPending, wantEnqueued: true},
		{name: "blocked is tracked", status: structs.EvalStatusBlocked, wantBlocked: true},
		{name: "complete untracks the job", status: structs.EvalStatusComplete, wantUntracked: true},
		{name: "complete with failures keeps the blocked eval", status: structs.EvalStatusComplete, failed: true},
		{name: "failed does nothing", status: structs.EvalStatusFailed},
		{name: "canceled does nothing", status: structs.EvalStatusCanceled},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, fx := newTestFSM(t)
			e := mock.Eval(mock.EvalForJob(job), mock.EvalStatus(tc.status))
			if tc.failed {
				e.FailedTGAllocs = map[string]*structs.AllocMetric{"web": {NodesEvaluated: 1}}
			}
			mustApply(t, f, 10, structs.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{e}})
			got, _ := f.State().EvalByID(nil, e.ID)
			must.NotNil(t, got)
			must.Eq(t, tc.wantEnqueued, len(fx.enqueued) == 1)
			must.Eq(t, tc.wantBlocked, len(fx.blocked) == 1)
			must.Eq(t, tc.wantUntracked, len(fx.untracked) == 1)
		})
	}
}

func TestFSM_EvalDelete(t *testing.T) {
	f, _ := newTestFSM(t)
	node := mock.Node()
	job := mock.Job()
	mustApply(t, f, 9, structs.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: node})
	mustApply(t, f, 10, structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job})
	stored, _ := f.State().JobByID(nil, job.Namespace, job.ID)
	eval := mock.Eval(mock.EvalForJob(job), mock.EvalStatus(structs.EvalStatusComplete))
	alloc := mock.Alloc(mock.ForJob(stored, 0), mock.OnNode(node))
	alloc.EvalID = eval.ID
	mustApply(t, f, 11, structs.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{eval}})
	must.NoError(t, f.State().UpsertAllocs(12, []*structs.Allocation{alloc}))

	mustApply(t, f, 13, structs.EvalDeleteRequestType, &structs.EvalDeleteRequest{Evals: []string{eval.ID}, Allocs: []string{alloc.ID}})
	gotEval, _ := f.State().EvalByID(nil, eval.ID)
	must.Nil(t, gotEval)
	gotAlloc, _ := f.State().AllocByID(nil, alloc.ID)
	must.Nil(t, gotAlloc)
}

func TestFSM_NodeWritesUnblockCapacity(t *testing.T) {
	type step struct {
		typ structs.MessageType
		req func(n *structs.Node) interface{}
	}
	register := func(status string) step {
		return step{structs.NodeRegisterRequestType, func(n *structs.Node) interface{} {
			c := n.Copy()
			c.Status = status
			return &structs.NodeRegisterRequest{Node: c}
		}}
	}
	setStatus := func(status string) step {
		return step{structs.NodeUpdateStatusRequestType, func(n *structs.Node) interface{} {
			return &structs.NodeUpdateStatusRequest{NodeID: n.ID, Status: status, UpdatedAt: 5}
		}}
	}
	setElig := func(elig string) step {
		return step{structs.NodeUpdateEligibilityRequestType, func(n *structs.Node) interface{} {
			return &structs.NodeUpdateEligibilityRequest{NodeID: n.ID, Eligibility: elig}
		}}
	}
	drain := step{structs.NodeUpdateDrainRequestType, func(n *structs.Node) interface{} {
		return &structs.NodeUpdateDrainRequest{NodeID: n.ID, DrainStrategy: &structs.DrainStrategy{}}
	}}
	undrain := func(markEligible bool) step {
		return step{structs.NodeUpdateDrainRequestType, func(n *structs.Node) interface{} {
			return &structs.NodeUpdateDrainRequest{NodeID: n.ID, MarkEligible: markEligible}
		}}
	}
	batchUndrain := step{structs.BatchNodeUpdateDrainRequestType, func(n *structs.Node) interface{} {
		return &structs.BatchNodeUpdateDrainRequest{Updates: map[string]*structs.DrainUpdate{n.ID: {MarkEligible: true}}}
	}}

	cases := []struct {
		name  string
		steps []step
		// wantUnblocks lists the indexes (steps start at 10) whose entry
		// must release capacity.
		wantUnblocks []uint64
	}{
		{"ready registration", []step{register(structs.NodeStatusReady)}, []uint64{10}},
		{"initializing registration", []step{register(structs.NodeStatusInit)}, nil},
		{"init to ready", []step{register(structs.NodeStatusInit), setStatus(structs.NodeStatusReady)}, []uint64{11}},
		{"ready to down", []step{register(structs.NodeStatusInit), setStatus(structs.NodeStatusDown)}, nil},
		{"down to ready", []step{register(structs.NodeStatusReady), setStatus(structs.NodeStatusDown),
			setStatus(structs.NodeStatusReady)}, []uint64{10, 12}},
		{"ineligible then eligible", []step{register(structs.NodeStatusReady),
			setElig(structs.NodeSchedulingIneligible), setElig(structs.NodeSchedulingEligible)}, []uint64{10, 12}},
		{"drain then cancel with mark eligible", []step{register(structs.NodeStatusReady), drain,
			undrain(true)}, []uint64{10, 12}},
		{"drain cancelled but kept ineligible", []step{register(structs.NodeStatusReady), drain,
			undrain(false)}, []uint64{10}},
		{"batch drain completion marking eligible", []step{register(structs.NodeStatusReady), drain,
			batchUndrain}, []uint64{10, 12}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, fx := newTestFSM(t)
			node := mock.Node()
			var want, wantNodes []string
			for i, s := range tc.steps {
				mustApply(t, f, uint64(10+i), s.typ, s.req(node))
			}
			for _, idx := range tc.wantUnblocks {
				want = append(want, fmt.Sprintf("%s@%d", node.ComputedClass, idx))
				wantNodes = append(wantNodes, fmt.Sprintf("%s@%d", node.ID, idx))
			}
			must.Eq(t, want, fx.unblocked)
			must.Eq(t, wantNodes, fx.nodes)
		})
	}
}

func TestFSM_NodeStatusWithEvalsIsAtomic(t *testing.T) {
	f, fx := newTestFSM(t)
	node := mock.Node()
	mustApply(t, f, 10, structs.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: node})
	job := mock.Job()
	e := mock.Eval(mock.EvalForJob(job), mock.TriggeredBy(structs.EvalTriggerNodeUpdate))
	e.NodeID = node.ID
	event := structs.NewNodeEvent(structs.NodeEventSubsystemCluster, structs.NodeEventMsgHeartbeatMissed, testEpochTime)
	mustApply(t, f, 11, structs.NodeUpdateStatusRequestType, &structs.NodeUpdateStatusRequest{
		NodeID: node.ID, Status: structs.NodeStatusDown, NodeEvent: event, UpdatedAt: 7,
		Evals: []*structs.Evaluation{e}})

	got, _ := f.State().NodeByID(nil, node.ID)
	must.Eq(t, structs.NodeStatusDown, got.Status)
	must.Eq(t, 11, got.LastMissedHeartbeatIndex)
	must.Eq(t, structs.NodeEventMsgHeartbeatMissed, got.Events[len(got.Events)-1].Message)
	gotEval, _ := f.State().EvalByID(nil, e.ID)
	must.Eq(t, 11, gotEval.NodeModifyIndex)
	must.Eq(t, []string{e.ID}, fx.enqueued)

	// A bad eval takes the status change down with it.
	bad := mock.Eval(mock.EvalForJob(job))
	bad.JobID = ""
	mustFail(t, f, 12, structs.NodeUpdateStatusRequestType, &structs.NodeUpdateStatusRequest{
		NodeID: node.ID, Status: structs.NodeStatusReady, Evals: []*structs.Evaluation{bad}})
	got, _ = f.State().NodeByID(nil, node.ID)
	must.Eq(t, structs.NodeStatusDown, got.Status)
}

func TestFSM_NodeDeregister(t *testing.T) {
	for _, typ := range []structs.MessageType{structs.NodeDeregisterRequestType, structs.NodeBatchDeregisterRequestType} {
		t.Run(typ.String(), func(t *testing.T) {
			f, _ := newTestFSM(t)
			a, b := mock.Node(), mock.Node()
			mustApply(t, f, 10, structs.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: a})
			mustApply(t, f, 11, structs.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: b})
			mustApply(t, f, 12, typ, &structs.NodeDeregisterRequest{NodeIDs: []string{a.ID, b.ID}})
			nodes, _ := f.State().Nodes(nil)
			must.SliceEmpty(t, nodes)
		})
	}
}

// allocFixture registers a node and a job and places one alloc of it.
func allocFixture(t *testing.T, f *FSM) (*structs.Node, *structs.Job, *structs.Allocation) {
	t.Helper()
	node := mock.Node()
	job := mock.Job()
	mustApply(t, f, 10, structs.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: node})
	mustApply(t, f, 11, structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job})
	stored, _ := f.State().JobByID(nil, job.Namespace, job.ID)
	alloc := mock.Alloc(mock.ForJob(stored, 0), mock.OnNode(node))
	mustApply(t, f, 12, structs.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
		AllocUpdateRequest: structs.AllocUpdateRequest{AllocsUpdated: []*structs.Allocation{alloc}, Job: stored}})
	return node, stored, alloc
}

func TestFSM_AllocClientUpdate(t *testing.T) {
	cases := []struct {
		status      string
		wantUnblock bool
	}{
		{structs.AllocClientStatusRunning, false},
		{structs.AllocClientStatusComplete, true},
		{structs.AllocClientStatusFailed, true},
	}
	for _, tc := range cases {
		t.Run(tc.status, func(t *testing.T) {
			f, fx := newTestFSM(t)
			node, job, alloc := allocFixture(t, f)
			fx.unblocked, fx.nodes = nil, nil
			var evals []*structs.Evaluation
			if tc.status == structs.AllocClientStatusFailed {
				evals = append(evals, mock.Eval(mock.EvalForJob(job), mock.TriggeredBy(structs.EvalTriggerRetryFailedAlloc)))
			}
			update := &structs.Allocation{ID: alloc.ID, ClientStatus: tc.status, ModifyTime: 99}
			mustApply(t, f, 13, structs.AllocClientUpdateRequestType, &structs.AllocUpdateRequest{
				Alloc: []*structs.Allocation{update}, Evals: evals})

			got, _ := f.State().AllocByID(nil, alloc.ID)
			must.Eq(t, tc.status, got.ClientStatus)
			for _, e := range evals {
				stored, _ := f.State().EvalByID(nil, e.ID)
				must.NotNil(t, stored)
				must.SliceContains(t, fx.enqueued, e.ID)
			}
			if tc.wantUnblock {
				must.Eq(t, []string{node.ComputedClass + "@13"}, fx.unblocked)
				must.Eq(t, []string{node.ID + "@13"}, fx.nodes)
			} else {
				must.SliceEmpty(t, fx.unblocked)
			}
		})
	}

	t.Run("atomic with its evals", func(t *testing.T) {
		f, _ := newTestFSM(t)
		_, job, alloc := allocFixture(t, f)
		bad := mock.Eval(mock.EvalForJob(job), mock.EvalStatus("nope"))
		update := &structs.Allocation{ID: alloc.ID, ClientStatus: structs.AllocClientStatusFailed}
		mustFail(t, f, 13, structs.AllocClientUpdateRequestType, &structs.AllocUpdateRequest{
			Alloc: []*structs.Allocation{update}, Evals: []*structs.Evaluation{bad}})
		got, _ := f.State().AllocByID(nil, alloc.ID)
		must.Eq(t, structs.AllocClientStatusPending, got.ClientStatus)
	})
}

func TestFSM_AllocDesiredTransitionWithEval(t *testing.T) {
	f, fx := newTestFSM(t)
	_, job, alloc := allocFixture(t, f)
	yes := true
	eval := mock.Eval(mock.EvalForJob(job), mock.TriggeredBy(structs.EvalTriggerAllocStop))
	mustApply(t, f, 13, structs.AllocUpdateDesiredTransitionRequestType, &structs.AllocUpdateDesiredTransitionRequest{
		Allocs: map[string]*structs.DesiredTransition{alloc.ID: {Migrate: &yes}},
		Evals:  []*structs.Evaluation{eval}})
	got, _ := f.State().AllocByID(nil, alloc.ID)
	must.True(t, got.DesiredTransition.ShouldMigrate())
	must.Eq(t, 13, got.AllocModifyIndex)
	must.SliceContains(t, fx.enqueued, eval.ID)
}

// A plan that stops allocs frees their room at once (the scheduler no
// longer counts them): evals blocked on those nodes' classes are released,
// once per node.
func TestFSM_PlanResultsStopsUnblockTheirNodes(t *testing.T) {
	f, fx := newTestFSM(t)
	node, job, alloc := allocFixture(t, f)
	fx.unblocked, fx.nodes = nil, nil // the node's registration
	second := mock.Alloc(mock.ForJob(job, 1), mock.OnNode(node))
	mustApply(t, f, 13, structs.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
		AllocUpdateRequest: structs.AllocUpdateRequest{AllocsUpdated: []*structs.Allocation{second}, Job: job}})
	must.SliceEmpty(t, fx.unblocked, must.Sprint("placements free nothing"))

	mustApply(t, f, 14, structs.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
		AllocUpdateRequest: structs.AllocUpdateRequest{Job: job, AllocsStopped: []*structs.AllocStop{
			{ID: alloc.ID, DesiredDescription: "stopped"}, {ID: second.ID, DesiredDescription: "stopped"},
		}},
	})
	got, _ := f.State().AllocByID(nil, alloc.ID)
	must.Eq(t, structs.AllocDesiredStatusStop, got.DesiredStatus)
	must.Eq(t, []string{node.ComputedClass + "@14"}, fx.unblocked)
	must.Eq(t, []string{node.ID + "@14"}, fx.nodes)
}

func TestFSM_PlanResultsWithPreemptionEvals(t *testing.T) {
	f, fx := newTestFSM(t)
	node, job, alloc := allocFixture(t, f)
	must.SliceEmpty(t, fx.enqueued)
	fx.unblocked, fx.nodes = nil, nil // the node's registration

	other := mock.Alloc(mock.ForJob(job, 1), mock.OnNode(node))
	preemptEval := mock.Eval(mock.EvalForJob(job), mock.TriggeredBy(structs.EvalTriggerPreemption))
	mustApply(t, f, 13, structs.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
		AllocUpdateRequest: structs.AllocUpdateRequest{AllocsUpdated: []*structs.Allocation{other}, Job: job},
		AllocsPreempted:    []*structs.AllocStop{{ID: alloc.ID, PreemptedByAllocation: other.ID}},
		PreemptionEvals:    []*structs.Evaluation{preemptEval},
	})
	got, _ := f.State().AllocByID(nil, alloc.ID)
	must.Eq(t, structs.AllocDesiredStatusEvict, got.DesiredStatus)
	gotOther, _ := f.State().AllocByID(nil, other.ID)
	must.Eq(t, 13, gotOther.CreateIndex)
	must.Eq(t, []string{preemptEval.ID}, fx.enqueued)
	// The preempted alloc's room may fit a blocked eval.
	must.Eq(t, []string{node.ComputedClass + "@13"}, fx.unblocked)
	must.Eq(t, []string{node.ID + "@13"}, fx.nodes)

	// Preempting an alloc that does not exist refuses the whole plan.
	third := mock.Alloc(mock.ForJob(job, 2), mock.OnNode(node))
	mustFail(t, f, 14, structs.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
		AllocUpdateRequest: structs.AllocUpdateRequest{AllocsUpdated: []*structs.Allocation{third}, Job: job},
		AllocsPreempted:    []*structs.AllocStop{{ID: structs.GenerateUUID()}},
	})
	gotThird, _ := f.State().AllocByID(nil, third.ID)
	must.Nil(t, gotThird)
}

func TestFSM_SchedulerConfig(t *testing.T) {
	f, _ := newTestFSM(t)
	cfg := structs.DefaultSchedulerConfiguration()

	must.Eq[interface{}](t, true, applyEntry(t, f, 10, structs.SchedulerConfigRequestType,
		&structs.SchedulerSetConfigRequest{Config: *cfg, CAS: true}))
	// CAS with a stale index is not applied, and that is not an error.
	cfg.RejectJobRegistration = true
	cfg.ModifyIndex = 3
	must.Eq[interface{}](t, false, applyEntry(t, f, 11, structs.SchedulerConfigRequestType,
		&structs.SchedulerSetConfigRequest{Config: *cfg, CAS: true}))
	cfg.ModifyIndex = 10
	must.Eq[interface{}](t, true, applyEntry(t, f, 12, structs.SchedulerConfigRequestType,
		&structs.SchedulerSetConfigRequest{Config: *cfg, CAS: true}))
	_, got, _ := f.State().SchedulerConfig(nil)
	must.True(t, got.RejectJobRegistration)
	must.Eq(t, 12, got.ModifyIndex)

	bad := *cfg
	bad.SchedulerAlgorithm = "random"
	mustFail(t, f, 13, structs.SchedulerConfigRequestType, &structs.SchedulerSetConfigRequest{Config: bad})
}

func TestFSM_ClusterMetadataDeploymentsAndSummaries(t *testing.T) {
	f, fx := newTestFSM(t)
	mustApply(t, f, 10, structs.ClusterMetadataRequestType, &structs.ClusterMetadataRequest{
		Metadata: structs.ClusterMetadata{ClusterID: "c1", CreateTime: 5}})
	meta, _ := f.State().ClusterMetadata(nil)
	must.Eq(t, "c1", meta.ClusterID)
	mustFail(t, f, 11, structs.ClusterMetadataRequestType, &structs.ClusterMetadataRequest{
		Metadata: structs.ClusterMetadata{ClusterID: "c2"}})

	job := mock.Job()
	mustApply(t, f, 12, structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job})
	stored, _ := f.State().JobByID(nil, job.Namespace, job.ID)
	d := structs.NewDeployment(stored, 50, testEpochTime)
	must.NoError(t, f.State().UpsertDeployment(13, d))
	eval := mock.Eval(mock.EvalForJob(job), mock.TriggeredBy(structs.EvalTriggerDeploymentWatcher))
	mustApply(t, f, 14, structs.DeploymentStatusUpdateRequestType, &structs.DeploymentStatusUpdateRequest{
		DeploymentUpdate: &structs.DeploymentStatusUpdate{DeploymentID: d.ID, Status: structs.DeploymentStatusSuccessful},
		Eval:             eval,
	})
	got, _ := f.State().DeploymentByID(nil, d.ID)
	must.Eq(t, structs.DeploymentStatusSuccessful, got.Status)
	must.Eq(t, []string{eval.ID}, fx.enqueued)

	mustApply(t, f, 15, structs.DeploymentDeleteRequestType, &structs.DeploymentDeleteRequest{Deployments: []string{d.ID}})
	got, _ = f.State().DeploymentByID(nil, d.ID)
	must.Nil(t, got)

	mustApply(t, f, 16, structs.JobStabilityRequestType, &structs.JobStabilityRequest{JobID: job.ID, JobVersion: 0,
		Stable: true, WriteRequest: structs.WriteRequest{Namespace: job.Namespace}})
	stored, _ = f.State().JobByID(nil, job.Namespace, job.ID)
	must.True(t, stored.Stable)

	mustApply(t, f, 17, structs.ReconcileJobSummariesRequestType, &structs.GenericRequest{})
	idx, _ := f.State().LatestIndex()
	must.Eq(t, 17, idx)
}

// memSink is a raft.SnapshotSink into memory.
type memSink struct {
	bytes.Buffer
	canceled bool
}

func (s *memSink) ID() string    { return "mem" }
func (s *memSink) Cancel() error { s.canceled = true; return nil }
func (s *memSink) Close() error  { return nil }

func TestFSM_SnapshotRestore(t *testing.T) {
	f, _ := newTestFSM(t)
	_, job, _ := allocFixture(t, f)
	mustApply(t, f, 13, structs.EvalUpdateRequestType, &structs.EvalUpdateRequest{
		Evals: []*structs.Evaluation{mock.Eval(mock.EvalForJob(job))}})
	mustApply(t, f, 14, structs.SchedulerConfigRequestType, &structs.SchedulerSetConfigRequest{
		Config: *structs.DefaultSchedulerConfiguration()})
	mustApply(t, f, 15, structs.ClusterMetadataRequestType, &structs.ClusterMetadataRequest{
		Metadata: structs.ClusterMetadata{ClusterID: "c1"}})
	d := structs.NewDeployment(job, 50, testEpochTime)
	must.NoError(t, f.State().UpsertDeployment(16, d))

	snap, err := f.Snapshot()
	must.NoError(t, err)
	// Writes after the snapshot are not in it.
	mustApply(t, f, 17, structs.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: mock.Node()})
	sink := &memSink{}
	must.NoError(t, snap.Persist(sink))
	snap.Release()
	must.False(t, sink.canceled)

	fresh, _ := newTestFSM(t)
	old := fresh.State()
	must.NoError(t, fresh.Restore(io.NopCloser(bytes.NewReader(sink.Bytes()))))
	select {
	case <-old.AbandonCh():
	default:
		t.Fatal("the replaced store must be abandoned")
	}
	want, err := state.Restore(bytes.NewReader(sink.Bytes()), nil)
	must.NoError(t, err)
	statetest.SameState(t, want, fresh.State())

	nodes, _ := fresh.State().Nodes(nil)
	must.Len(t, 1, nodes, must.Sprint("the node written after the snapshot must be missing"))
	idx, _ := fresh.State().LatestIndex()
	must.Eq(t, 16, idx)

	// A broken snapshot leaves the current store in place.
	cur := fresh.State()
	must.Error(t, fresh.Restore(io.NopCloser(bytes.NewReader([]byte{0x80, 0x42}))))
	must.Eq(t, cur, fresh.State())
}

// A store restored from a snapshot of a live store holds the same objects.
func TestFSM_RestoredEqualsOriginal(t *testing.T) {
	f, _ := newTestFSM(t)
	_, job, alloc := allocFixture(t, f)
	update := &structs.Allocation{ID: alloc.ID, ClientStatus: structs.AllocClientStatusRunning}
	mustApply(t, f, 13, structs.AllocClientUpdateRequestType, &structs.AllocUpdateRequest{Alloc: []*structs.Allocation{update}})
	mustApply(t, f, 14, structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job.Copy(),
		Eval: mock.Eval(mock.EvalForJob(job))})

	snap, err := f.Snapshot()
	must.NoError(t, err)
	sink := &memSink{}
	must.NoError(t, snap.Persist(sink))
	fresh, _ := newTestFSM(t)
	must.NoError(t, fresh.Restore(io.NopCloser(&sink.Buffer)))
	statetest.SameState(t, f.State(), fresh.State())
}

// Alloc health verdicts (16) and canary promotion (15) apply through the
// state store with the eval they carry; a refused entry changes nothing
// and enqueues nothing.
func TestFSM_DeploymentHealthAndPromotion(t *testing.T) {
	f, fx := newTestFSM(t)
	node := mock.Node()
	job := mock.Job(mock.Count(1))
	mustApply(t, f, 10, structs.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: node})
	mustApply(t, f, 11, structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job})
	stored, _ := f.State().JobByID(nil, job.Namespace, job.ID)
	d := structs.NewDeployment(stored, 50, testEpochTime)
	d.TaskGroups["web"] = &structs.DeploymentState{DesiredTotal: 1, DesiredCanaries: 1}
	canary := mock.Alloc(mock.ForJob(stored, 0), mock.OnNode(node))
	canary.DeploymentID = d.ID
	canary.DeploymentStatus = &structs.AllocDeploymentStatus{Canary: true}
	d.TaskGroups["web"].PlacedCanaries = []string{canary.ID}
	mustApply(t, f, 12, structs.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
		AllocUpdateRequest: structs.AllocUpdateRequest{AllocsUpdated: []*structs.Allocation{canary}, Job: stored},
		Deployment:         d,
	})
	fx.enqueued = nil

	promote := &structs.ApplyDeploymentPromoteRequest{
		DeploymentPromoteRequest: structs.DeploymentPromoteRequest{DeploymentID: d.ID, All: true},
		Eval:                     mock.Eval(mock.EvalForJob(stored)),
	}
	err := mustFail(t, f, 13, structs.DeploymentPromoteRequestType, promote)
	must.ErrorContains(t, err, "0/1 healthy allocations")
	must.SliceEmpty(t, fx.enqueued)

	healthEval := mock.Eval(mock.EvalForJob(stored))
	mustApply(t, f, 14, structs.DeploymentAllocHealthRequestType, &structs.ApplyDeploymentAllocHealthRequest{
		DeploymentAllocHealthRequest: structs.DeploymentAllocHealthRequest{DeploymentID: d.ID, HealthyAllocationIDs: []string{canary.ID}},
		Timestamp:                    testEpochTime,
		Eval:                         healthEval,
	})
	got, _ := f.State().AllocByID(nil, canary.ID)
	must.True(t, got.DeploymentStatus.IsHealthy())
	must.Eq(t, []string{healthEval.ID}, fx.enqueued)

	mustApply(t, f, 15, structs.DeploymentPromoteRequestType, promote)
	dep, _ := f.State().DeploymentByID(nil, d.ID)
	must.True(t, dep.TaskGroups["web"].Promoted)
	must.Eq(t, []string{healthEval.ID, promote.Eval.ID}, fx.enqueued)
}

// An entry that cannot be applied (here one no server can decode: a job
// whose driver config nests past the decoder's limit, as a server without
// today's checks could commit) is refused identically on every server:
// the state is unchanged, nothing is enqueued, and the entries after it
// apply as usual. Servers that applied the same log agree.
func TestFSM_EntryThatCannotBeAppliedIsSkippedEverywhere(t *testing.T) {
	deep := mock.Job()
	var v interface{} = "leaf"
	for range 10_000 {
		v = map[string]interface{}{"a": v}
	}
	deep.TaskGroups[0].Tasks[0].Config = map[string]interface{}{"nested": v}
	poison, err := structs.Encode(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: deep, Eval: mock.Eval(mock.EvalForJob(deep))})
	must.NoError(t, err)
	next := mock.Job()
	good, err := structs.Encode(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: next, Eval: mock.Eval(mock.EvalForJob(next))})
	must.NoError(t, err)

	var servers []*FSM
	for range 3 {
		f, fx := newTestFSM(t)
		resp := f.Apply(&raft.Log{Index: 10, Type: raft.LogCommand, Data: poison})
		err, isErr := resp.(error)
		must.True(t, isErr, must.Sprintf("response %v", resp))
		must.StrContains(t, err.Error(), "decoding JobRegister entry")
		idx, _ := f.State().LatestIndex()
		must.Eq(t, 0, idx, must.Sprint("a refused entry must not write"))
		must.SliceEmpty(t, fx.enqueued)

		must.Nil(t, f.Apply(&raft.Log{Index: 11, Type: raft.LogCommand, Data: good}))
		must.Len(t, 1, fx.enqueued)
		servers = append(servers, f)
	}
	for _, f := range servers[1:] {
		statetest.SameState(t, servers[0].State(), f.State())
	}
}
