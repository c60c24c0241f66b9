package nomad

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// With ACLs on, a client node fetches its allocations with its secret ID
// as its token and no ACL token: Alloc.GetAllocs answers a node its own
// allocations and refuses another node's; a token that may read jobs
// reads any; the anonymous token none.
func TestAllocEndpoint_GetAllocsNodeSecretOrReadJob(t *testing.T) {
	s, boot := newBootstrappedACLServer(t, nil)
	reader := aclTestToken(t, s, boot.SecretID, "reader", `namespace "default" { policy = "read" }`, 0)
	n1, n2 := mock.Node(), mock.Node()
	registerNode(t, s, n1)
	registerNode(t, s, n2)
	job := mock.Job()
	var registered structs.JobRegisterResponse
	must.NoError(t, s.RPC("Job.Register", &structs.JobRegisterRequest{Job: job,
		WriteRequest: structs.WriteRequest{Namespace: job.Namespace, AuthToken: boot.SecretID}}, &registered))
	stored, err := s.State().JobByID(nil, job.Namespace, job.ID)
	must.NoError(t, err)
	a1, a2 := mock.Alloc(), mock.Alloc()
	for _, a := range []*structs.Allocation{a1, a2} {
		a.Job, a.JobID, a.Namespace = stored, stored.ID, stored.Namespace
	}
	a1.NodeID, a2.NodeID = n1.ID, n2.ID
	must.NoError(t, s.State().UpsertAllocs(latestIndex(t, s)+1, []*structs.Allocation{a1, a2}))

	get := func(secret string, ids ...string) ([]*structs.Allocation, error) {
		var out structs.AllocsGetResponse
		err := s.RPC("Alloc.GetAllocs", &structs.AllocsGetRequest{AllocIDs: ids,
			QueryOptions: structs.QueryOptions{AuthToken: secret}}, &out)
		return out.Allocs, err
	}
	cases := []struct {
		name   string
		secret string
		ids    []string
		want   int
		denied bool
	}{
		{"a node its own", n1.SecretID, []string{a1.ID}, 1, false},
		{"a node another's", n1.SecretID, []string{a1.ID, a2.ID}, 0, true},
		{"a job reader any", reader, []string{a1.ID, a2.ID}, 2, false},
		{"the anonymous token none", "", []string{a1.ID}, 0, true},
		{"an unknown secret", structs.GenerateUUID(), []string{a1.ID}, 0, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := get(c.secret, c.ids...)
			if c.denied {
				must.True(t, structs.IsKind(err, structs.ErrPermissionDenied), must.Sprint(err))
				return
			}
			must.NoError(t, err)
			must.Len(t, c.want, got)
		})
	}
}
