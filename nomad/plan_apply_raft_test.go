package nomad

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// The server's PlanRaft: a committed entry answers its index once the
// local store has it; an entry the FSM refuses answers the FSM's error; a
// server that does not lead answers structs.ErrNoLeader.
func TestServerPlanRaft(t *testing.T) {
	servers := newTestCluster(t, 3)
	leader := leaderOf(t, servers)
	node := mock.Node()
	registerNode(t, leader, node)
	job := mock.Job()
	registerJob(t, leader, job)
	stored, err := leader.State().JobByID(nil, job.Namespace, job.ID)
	must.NoError(t, err)

	alloc := mock.Alloc(mock.ForJob(stored, 0), mock.OnNode(node))
	req := &structs.ApplyPlanResultsRequest{
		AllocUpdateRequest: structs.AllocUpdateRequest{AllocsUpdated: []*structs.Allocation{alloc}, Job: stored},
	}
	index, err := (&serverPlanRaft{s: leader}).ApplyPlanResults(req).Wait()
	must.NoError(t, err)
	got, err := leader.State().AllocByID(nil, alloc.ID)
	must.NoError(t, err)
	must.NotNil(t, got, must.Sprint("applied locally when Wait returns"))
	must.Eq(t, index, got.CreateIndex)

	refused := &structs.ApplyPlanResultsRequest{
		AllocUpdateRequest: structs.AllocUpdateRequest{Job: stored},
		AllocsPreempted:    []*structs.AllocStop{{ID: structs.GenerateUUID()}},
	}
	_, err = (&serverPlanRaft{s: leader}).ApplyPlanResults(refused).Wait()
	must.Error(t, err)
	must.ErrorIs(t, err, structs.ErrUnknownAlloc)

	for _, s := range servers {
		if s == leader {
			continue
		}
		_, err := (&serverPlanRaft{s: s}).ApplyPlanResults(req).Wait()
		must.ErrorIs(t, err, structs.ErrNoLeader)
	}
}
