package nomad

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

func TestScalingEndpoint_PoliciesLiveInTheirGroups(t *testing.T) {
	s := newTestServer(t, nil)
	var list structs.ScalingPolicyListResponse
	must.NoError(t, s.RPC("Scaling.ListPolicies", &structs.ScalingPolicyListRequest{}, &list))
	must.SliceEmpty(t, list.Policies)

	job := mock.Job()
	tg := job.TaskGroups[0]
	tg.Scaling = &structs.ScalingPolicy{Type: structs.ScalingPolicyTypeHorizontal, Min: int64(tg.Count),
		Max: 10, Enabled: true, Policy: map[string]interface{}{"k": "v"}}
	registerJob(t, s, job)

	must.NoError(t, s.RPC("Scaling.ListPolicies", &structs.ScalingPolicyListRequest{}, &list))
	must.Len(t, 1, list.Policies)
	stub := list.Policies[0]
	must.UUIDv4(t, stub.ID)
	must.Eq(t, map[string]string{"Namespace": job.Namespace, "Job": job.ID, "Group": tg.Name}, stub.Target)
	must.Positive(t, stub.CreateIndex)

	var one structs.SingleScalingPolicyResponse
	must.NoError(t, s.RPC("Scaling.GetPolicy", &structs.ScalingPolicySpecificRequest{ID: stub.ID}, &one))
	must.Eq(t, int64(10), one.Policy.Max)
	must.Eq(t, map[string]interface{}{"k": "v"}, one.Policy.Policy)

	// A new version keeps the policy's ID and creation index.
	update := job.Copy()
	update.TaskGroups[0].Scaling.Max = 20
	update.TaskGroups[0].Scaling.ID = ""
	registerJob(t, s, update)
	must.NoError(t, s.RPC("Scaling.GetPolicy", &structs.ScalingPolicySpecificRequest{ID: stub.ID}, &one))
	must.Eq(t, int64(20), one.Policy.Max)
	must.Eq(t, stub.CreateIndex, one.Policy.CreateIndex)

	must.NoError(t, s.RPC("Scaling.GetPolicy", &structs.ScalingPolicySpecificRequest{ID: "nope"}, &one))
	must.Nil(t, one.Policy)

	// Bounds are checked against the count.
	bad := mock.Job()
	bad.TaskGroups[0].Scaling = &structs.ScalingPolicy{Type: structs.ScalingPolicyTypeHorizontal, Min: 5, Max: 2}
	var reply structs.JobRegisterResponse
	err := s.RPC("Job.Register", &structs.JobRegisterRequest{Job: bad}, &reply)
	must.ErrorContains(t, err, "maximum count must not be less than minimum count")
}
