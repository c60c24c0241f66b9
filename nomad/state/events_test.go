package state

import (
	"sync"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

// recordingPublisher keeps what the store publishes.
type recordingPublisher struct {
	mu      sync.Mutex
	batches []*structs.Events
}

func (p *recordingPublisher) Publish(e *structs.Events) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.batches = append(p.batches, e)
}

func (p *recordingPublisher) take() []*structs.Events {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.batches
	p.batches = nil
	return out
}

type eventKey struct {
	Topic structs.Topic
	Type  string
	Key   string
}

func keys(b *structs.Events) []eventKey {
	var out []eventKey
	for _, e := range b.Events {
		out = append(out, eventKey{e.Topic, e.Type, e.Key})
	}
	return out
}

func TestEvents_Published(t *testing.T) {
	pub := &recordingPublisher{}
	s, err := NewStateStore(&Config{Publisher: pub})
	must.NoError(t, err)

	node := mockNode()
	must.NoError(t, s.UpsertNode(1, node))
	b := pub.take()
	must.Len(t, 1, b)
	must.Eq(t, 1, b[0].Index)
	// The registration created the node's pool, in the same batch.
	must.Eq(t, []eventKey{{structs.TopicNodePool, structs.TypeNodePoolUpserted, "default"},
		{structs.TopicNode, structs.TypeNodeRegistration, node.ID}}, keys(b[0]))
	ev := b[0].Events[1]
	must.Eq(t, 1, ev.Index)
	must.Eq(t, "", ev.Payload.(*structs.NodeStreamEvent).Node.SecretID) // never leaked

	// A job registration with its eval: one batch, one index.
	job := mockJob()
	eval := mockEval(job)
	must.NoError(t, s.WithWriteTxn(2, func(tx *Txn) error {
		if err := tx.UpsertJob(job); err != nil {
			return err
		}
		return tx.UpsertEvals([]*structs.Evaluation{eval})
	}))
	b = pub.take()
	must.Len(t, 1, b)
	must.Eq(t, []eventKey{
		{structs.TopicJob, structs.TypeJobRegistered, job.ID},
		{structs.TopicEvaluation, structs.TypeEvalUpdated, eval.ID},
	}, keys(b[0]))
	must.Eq(t, []string{job.ID}, b[0].Events[1].FilterKeys)
	must.Eq(t, job.Namespace, b[0].Events[0].Namespace)

	// A plan result: alloc and the job's status change, typed PlanResult;
	// the alloc payload is the stored alloc (the agent leaves its job out
	// of the stream).
	stored, _ := s.JobByID(nil, job.Namespace, job.ID)
	a := mockAlloc(stored, node)
	must.NoError(t, s.UpsertPlanResults(3, &structs.ApplyPlanResultsRequest{
		AllocUpdateRequest: structs.AllocUpdateRequest{AllocsUpdated: []*structs.Allocation{a}, Job: stored},
	}))
	b = pub.take()
	must.Len(t, 1, b)
	must.Eq(t, []eventKey{
		{structs.TopicAllocation, structs.TypePlanResult, a.ID},
		{structs.TopicJob, structs.TypePlanResult, job.ID},
	}, keys(b[0]))
	storedAlloc, _ := s.AllocByID(nil, a.ID)
	must.NotNil(t, storedAlloc.Job)
	must.True(t, b[0].Events[0].Payload.(*structs.AllocationEvent).Allocation == storedAlloc)

	// Client update, desired transition, drain, eligibility, status,
	// deployment, deregistration.
	must.NoError(t, s.UpdateAllocsFromClient(4, []*structs.Allocation{{ID: a.ID, ClientStatus: structs.AllocClientStatusRunning}}))
	yes := true
	must.NoError(t, s.UpdateAllocsDesiredTransitions(5, map[string]*structs.DesiredTransition{a.ID: {Migrate: &yes}}, nil))
	must.NoError(t, s.UpdateNodeDrain(6, node.ID, &structs.DrainStrategy{}, false, 1, nil, nil))
	must.NoError(t, s.UpdateNodeDrain(7, node.ID, nil, true, 1, nil, nil))
	must.NoError(t, s.UpdateNodeEligibility(8, node.ID, structs.NodeSchedulingIneligible, 1, nil))
	must.NoError(t, s.UpdateNodeStatus(9, node.ID, structs.NodeStatusDown, 1, nil))
	d := mockDeployment(stored)
	must.NoError(t, s.UpsertDeployment(10, d))
	must.NoError(t, s.DeleteJob(11, job.Namespace, job.ID))
	must.NoError(t, s.DeleteNodes(12, []string{node.ID}))
	var got []eventKey
	for _, batch := range pub.take() {
		got = append(got, keys(batch)...)
	}
	must.Eq(t, []eventKey{
		{structs.TopicAllocation, structs.TypeAllocationUpdated, a.ID},
		{structs.TopicAllocation, structs.TypeAllocationUpdateDesiredStatus, a.ID},
		{structs.TopicNode, structs.TypeNodeDrain, node.ID},
		{structs.TopicNode, structs.TypeNodeDrain, node.ID},
		{structs.TopicNode, structs.TypeNodeEligibilityUpdate, node.ID},
		{structs.TopicNode, structs.TypeNodeEvent, node.ID},
		{structs.TopicDeployment, structs.TypeDeploymentUpdate, d.ID},
		{structs.TopicJob, structs.TypeJobDeregistered, job.ID},
		{structs.TopicNode, structs.TypeNodeDeregistration, node.ID},
	}, got)
}

func TestEvents_NoneForFailedOrEmptyTxn(t *testing.T) {
	pub := &recordingPublisher{}
	s, err := NewStateStore(&Config{Publisher: pub})
	must.NoError(t, err)
	node := mockNode()
	err = s.WithWriteTxn(1, func(tx *Txn) error {
		if err := tx.UpsertNode(node); err != nil {
			return err
		}
		return tx.UpdateNodeStatus("missing", structs.NodeStatusDown, 0, nil)
	})
	must.Error(t, err)
	must.Len(t, 0, pub.take())

	must.NoError(t, s.UpdateAllocsFromClient(2, []*structs.Allocation{{ID: "unknown", ClientStatus: structs.AllocClientStatusRunning}}))
	must.Len(t, 0, pub.take())

	// Writes to a snapshot never publish.
	snap := s.Snapshot()
	must.NoError(t, snap.UpsertNode(3, mockNode()))
	must.Len(t, 0, pub.take())
}
