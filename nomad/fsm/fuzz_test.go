package fsm

import (
	"testing"

	"github.com/hashicorp/raft"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// fuzzEntryRequests is the request each message type's entry carries, as
// written by the servers; FuzzApplyEntry starts from one of each.
func fuzzEntryRequests(node *structs.Node, job *structs.Job, alloc *structs.Allocation) map[structs.MessageType]interface{} {
	eval := mock.Eval(mock.EvalForJob(job))
	return map[structs.MessageType]interface{}{
		structs.NodeRegisterRequestType:   &structs.NodeRegisterRequest{Node: mock.Node()},
		structs.NodeDeregisterRequestType: &structs.NodeDeregisterRequest{NodeIDs: []string{node.ID}},
		structs.NodeBatchDeregisterRequestType: &structs.NodeDeregisterRequest{
			NodeIDs: []string{node.ID, "missing"}},
		structs.NodeUpdateStatusRequestType: &structs.NodeUpdateStatusRequest{NodeID: node.ID, Status: structs.NodeStatusDown,
			Evals: []*structs.Evaluation{eval}},
		structs.NodeUpdateDrainRequestType:              &structs.NodeUpdateDrainRequest{NodeID: node.ID},
		structs.BatchNodeUpdateDrainRequestType:         &structs.BatchNodeUpdateDrainRequest{},
		structs.NodeUpdateEligibilityRequestType:        &structs.NodeUpdateEligibilityRequest{NodeID: node.ID, Eligibility: structs.NodeSchedulingIneligible},
		structs.JobRegisterRequestType:                  &structs.JobRegisterRequest{Job: mock.Job(), Eval: eval},
		structs.JobDeregisterRequestType:                &structs.JobDeregisterRequest{JobID: job.ID, Purge: true},
		structs.JobBatchDeregisterRequestType:           &structs.JobBatchDeregisterRequest{},
		structs.JobStabilityRequestType:                 &structs.JobStabilityRequest{JobID: job.ID, Stable: true},
		structs.EvalUpdateRequestType:                   &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{eval}},
		structs.EvalDeleteRequestType:                   &structs.EvalDeleteRequest{Evals: []string{eval.ID}, Allocs: []string{alloc.ID}},
		structs.AllocUpdateRequestType:                  &structs.AllocUpdateRequest{},
		structs.AllocClientUpdateRequestType:            &structs.AllocUpdateRequest{Alloc: []*structs.Allocation{{ID: alloc.ID, NodeID: node.ID, ClientStatus: structs.AllocClientStatusRunning}}},
		structs.AllocUpdateDesiredTransitionRequestType: &structs.AllocUpdateDesiredTransitionRequest{},
		structs.ApplyPlanResultsRequestType: &structs.ApplyPlanResultsRequest{AllocUpdateRequest: structs.AllocUpdateRequest{
			AllocsUpdated: []*structs.Allocation{mock.Alloc(mock.ForJob(job, 1), mock.OnNode(node))}, Job: job}},
		structs.ReconcileJobSummariesRequestType:  &structs.GenericRequest{},
		structs.DeploymentStatusUpdateRequestType: &structs.DeploymentStatusUpdateRequest{},
		structs.DeploymentPromoteRequestType:      &structs.ApplyDeploymentPromoteRequest{},
		structs.DeploymentAllocHealthRequestType:  &structs.ApplyDeploymentAllocHealthRequest{},
		structs.DeploymentAllocHealthBatchRequestType: &structs.DeploymentAllocHealthBatchRequest{
			Requests: []*structs.ApplyDeploymentAllocHealthRequest{{}}},
		structs.DeploymentDeleteRequestType: &structs.DeploymentDeleteRequest{},
		structs.SchedulerConfigRequestType:  &structs.SchedulerSetConfigRequest{},
		structs.AutopilotRequestType:        &structs.AutopilotSetConfigRequest{Config: *structs.DefaultAutopilotConfig()},
		structs.ClusterMetadataRequestType:  &structs.ClusterMetadataRequest{},
		structs.RootKeyUpsertRequestType:    &structs.RootKeyUpsertRequest{},
		structs.RootKeyDeleteRequestType:    &structs.RootKeyDeleteRequest{},
		structs.ACLPoliciesUpsertRequestType: &structs.ACLPolicyUpsertRequest{Policies: []*structs.ACLPolicy{
			{Name: "read", Rules: `namespace "default" { policy = "read" }`}}},
		structs.ACLPoliciesDeleteRequestType:     &structs.ACLPolicyDeleteRequest{},
		structs.ACLTokensUpsertRequestType:       &structs.ACLTokenUpsertRequest{},
		structs.ACLTokensDeleteRequestType:       &structs.ACLTokenDeleteRequest{},
		structs.ACLTokenBootstrapRequestType:     &structs.ACLTokenBootstrapRequest{},
		structs.ACLRolesUpsertRequestType:        &structs.ACLRolesUpsertRequest{},
		structs.ACLRolesDeleteRequestType:        &structs.ACLRolesDeleteByIDRequest{},
		structs.ACLAuthMethodsUpsertRequestType:  &structs.ACLAuthMethodsUpsertRequest{},
		structs.ACLAuthMethodsDeleteRequestType:  &structs.ACLAuthMethodsDeleteRequest{},
		structs.ACLBindingRulesUpsertRequestType: &structs.ACLBindingRulesUpsertRequest{},
		structs.ACLBindingRulesDeleteRequestType: &structs.ACLBindingRulesDeleteRequest{},
		structs.OneTimeTokenUpsertRequestType:    &structs.OneTimeTokenUpsertRequest{},
		structs.OneTimeTokenDeleteRequestType:    &structs.OneTimeTokenDeleteRequest{},
		structs.NamespaceUpsertRequestType:       &structs.NamespaceUpsertRequest{Namespaces: []*structs.Namespace{{Name: "team"}}},
		structs.NamespaceDeleteRequestType:       &structs.NamespaceDeleteRequest{},
		structs.NodePoolUpsertRequestType:        &structs.NodePoolUpsertRequest{NodePools: []*structs.NodePool{{Name: "gpu"}}},
		structs.NodePoolDeleteRequestType:        &structs.NodePoolDeleteRequest{},
		structs.VarApplyStateRequestType:         &structs.VarApplyStateRequest{},
		structs.ScalingEventRegisterRequestType:  &structs.ScalingEventRequest{},
		structs.JobVersionTagRequestType:         &structs.JobApplyTagRequest{},
		structs.ServiceRegistrationUpsertRequestType: &structs.ServiceRegistrationUpsertRequest{
			Services: []*structs.ServiceRegistration{{ID: "svc-1", ServiceName: "web", Namespace: alloc.Namespace,
				NodeID: node.ID, JobID: alloc.JobID, AllocID: alloc.ID, Address: "10.0.0.1", Port: 80}}},
		structs.ServiceRegistrationDeleteByIDRequestType:       &structs.ServiceRegistrationDeleteByIDRequest{ID: "svc-1"},
		structs.ServiceRegistrationDeleteByAllocIDsRequestType: &structs.ServiceRegistrationDeleteByAllocIDsRequest{AllocIDs: []string{alloc.ID}},
		structs.HostVolumeApplyRequestType: &structs.HostVolumeApplyRequest{Op: structs.HostVolumeOpUpsert,
			Volumes: []*structs.HostVolume{{ID: "hv-1", Name: "data", NodeID: node.ID}}},
	}
}

// FuzzApplyEntry applies one log entry (type byte and msgpack body) to a
// fresh FSM holding a node, a job and an allocation, as Raft would after
// them. Apply must not panic, whatever the entry; an entry it refuses
// must leave the state as it was (the FSM's contract: a bad entry is
// skipped alike on every server), and the entries after it apply as
// usual.
func FuzzApplyEntry(f *testing.F) {
	node, job, alloc := fuzzFixture()
	for typ, req := range fuzzEntryRequests(node, job, alloc) {
		entry, err := structs.Encode(typ, req)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(entry)
	}
	f.Fuzz(func(t *testing.T, entry []byte) {
		_ = structs.CheckEntry(entry)
		fsm, err := New(Config{EvalBroker: &fsmEffects{}, BlockedEvals: &fsmEffects{}})
		if err != nil {
			t.Fatal(err)
		}
		node, job, alloc := fuzzFixture()
		for i, req := range []struct {
			typ structs.MessageType
			req interface{}
		}{
			{structs.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: node}},
			{structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job}},
			{structs.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
				AllocUpdateRequest: structs.AllocUpdateRequest{AllocsUpdated: []*structs.Allocation{alloc}, Job: job}}},
		} {
			buf, err := structs.Encode(req.typ, req.req)
			if err != nil {
				t.Fatal(err)
			}
			if resp, ok := fsm.Apply(&raft.Log{Index: uint64(10 + i), Type: raft.LogCommand, Data: buf}).(error); ok {
				t.Fatalf("fixture entry %d: %v", i, resp)
			}
		}
		before, err := fsm.State().LatestIndex()
		if err != nil {
			t.Fatal(err)
		}
		resp := fsm.Apply(&raft.Log{Index: 20, Type: raft.LogCommand, Data: entry})
		if _, refused := resp.(error); refused {
			if after, _ := fsm.State().LatestIndex(); after != before {
				t.Fatalf("a refused entry moved the state from index %d to %d", before, after)
			}
		}
		// The next entry applies whatever happened to this one.
		next, err := structs.Encode(structs.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: mock.Node()})
		if err != nil {
			t.Fatal(err)
		}
		if err, ok := fsm.Apply(&raft.Log{Index: 21, Type: raft.LogCommand, Data: next}).(error); ok {
			t.Fatalf("the entry after a fuzzed one failed: %v", err)
		}
	})
}

// fuzzFixture is the state every fuzzed entry is applied to: a node, a
// job, and an allocation of it on the node. The job is as the state
// store holds it after registration.
func fuzzFixture() (*structs.Node, *structs.Job, *structs.Allocation) {
	node := mock.Node(mock.NodeID("00000000-0000-0000-0000-000000000001"))
	job := mock.Job(mock.JobID("fuzz"))
	alloc := mock.Alloc(mock.ForJob(job, 0), mock.OnNode(node))
	alloc.ID = "00000000-0000-0000-0000-0000000000a1"
	return node, job, alloc
}

// Every message type the FSM applies has a seed in FuzzApplyEntry.
func TestFuzzApplyEntrySeedsEveryType(t *testing.T) {
	node, job, alloc := fuzzFixture()
	reqs := fuzzEntryRequests(node, job, alloc)
	for typ := range appliers {
		if _, ok := reqs[typ]; !ok {
			t.Errorf("no FuzzApplyEntry seed for %s", typ)
		}
	}
}

// A job entry holding a nil task group or task (found by FuzzApplyEntry:
// the job summary walked the groups and panicked) is refused and
// skipped, and the state is left as it was.
func TestFSM_JobRegisterWithNilPartsIsSkipped(t *testing.T) {
	for name, job := range map[string]*structs.Job{
		"nil group": {ID: "x", Namespace: "default", TaskGroups: []*structs.TaskGroup{nil}},
		"nil task":  {ID: "x", Namespace: "default", TaskGroups: []*structs.TaskGroup{{Name: "g", Tasks: []*structs.Task{nil}}}},
	} {
		t.Run(name, func(t *testing.T) {
			f, _ := newTestFSM(t)
			err := mustFail(t, f, 5, structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job})
			must.ErrorIs(t, err, structs.ErrInvalid)
			mustApply(t, f, 6, structs.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: mock.Node()})
		})
	}
}
