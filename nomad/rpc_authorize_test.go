package nomad

import (
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// aclTestToken creates a client token holding a policy with rules and
// returns its secret.
func aclTestToken(t *testing.T, s *Server, mgmt, name, rules string, ttl time.Duration) string {
	t.Helper()
	var wr structs.GenericResponse
	must.NoError(t, s.RPC("ACL.UpsertPolicies", &structs.ACLPolicyUpsertRequest{
		Policies: []*structs.ACLPolicy{{Name: name, Rules: rules}}, WriteRequest: asTokenWrite(mgmt)}, &wr))
	var created structs.ACLTokenUpsertResponse
	must.NoError(t, s.RPC("ACL.UpsertTokens", &structs.ACLTokenUpsertRequest{Tokens: []*structs.ACLToken{
		{Name: name, Type: structs.ACLClientToken, Policies: []string{name}, ExpirationTTL: ttl}},
		WriteRequest: asTokenWrite(mgmt)}, &created))
	return created.Tokens[0].SecretID
}

// TestAuthorize_RulesOnRequests sends requests through the registry with
// tokens of several powers and checks each rule's verdict: the step runs
// before the method, refuses with "Permission denied", and lets the
// method run when the rule passes.
func TestAuthorize_RulesOnRequests(t *testing.T) {
	s, boot := newBootstrappedACLServer(t, nil)
	mgmt := boot.SecretID
	reader := aclTestToken(t, s, mgmt, "reader", `namespace "default" { policy = "read" }
node { policy = "read" }`, 0)
	submitter := aclTestToken(t, s, mgmt, "submitter", `namespace "default" { capabilities = ["submit-job"] }`, 0)
	job := mock.Job()
	var registered structs.JobRegisterResponse
	must.NoError(t, s.RPC("Job.Register", &structs.JobRegisterRequest{Job: job,
		WriteRequest: structs.WriteRequest{Namespace: job.Namespace, AuthToken: mgmt}}, &registered))

	register := func(secret string) error {
		var out structs.JobRegisterResponse
		return s.RPC("Job.Register", &structs.JobRegisterRequest{Job: mock.Job(),
			WriteRequest: structs.WriteRequest{Namespace: "default", AuthToken: secret}}, &out)
	}
	getJob := func(secret string) error {
		var out structs.SingleJobResponse
		return s.RPC("Job.GetJob", &structs.JobSpecificRequest{JobID: job.ID,
			QueryOptions: structs.QueryOptions{Namespace: "default", AuthToken: secret}}, &out)
	}
	listNodes := func(secret string) error {
		var out structs.NodeListResponse
		return s.RPC("Node.List", &structs.NodeListRequest{QueryOptions: asTokenQuery(secret)}, &out)
	}
	schedConfig := func(secret string) error {
		var out structs.SchedulerConfigurationResponse
		return s.RPC("Operator.SchedulerGetConfiguration", &structs.GenericRequest{QueryOptions: asTokenQuery(secret)}, &out)
	}
	leader := func(secret string) error {
		var out string
		return s.RPC("Status.Leader", &structs.GenericRequest{QueryOptions: asTokenQuery(secret)}, &out)
	}
	unknown := structs.GenerateUUID()
	cases := []struct {
		name   string
		call   func(string) error
		secret string
		want   error
	}{
		{"register, no token", register, "", structs.ErrPermissionDenied},
		{"register, unknown token", register, unknown, structs.ErrPermissionDenied},
		{"register, read-only", register, reader, structs.ErrPermissionDenied},
		{"register, submit-job", register, submitter, nil},
		{"register, management", register, mgmt, nil},
		{"read job, no token", getJob, "", structs.ErrPermissionDenied},
		{"read job, read-only", getJob, reader, nil},
		{"read job, submit-job only", getJob, submitter, structs.ErrPermissionDenied},
		{"list nodes, read-only", listNodes, reader, nil},
		{"list nodes, submit-job only", listNodes, submitter, structs.ErrPermissionDenied},
		{"scheduler config, read-only", schedConfig, reader, structs.ErrPermissionDenied},
		{"scheduler config, management", schedConfig, mgmt, nil},
		{"leader, no token", leader, "", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call(tc.secret)
			if tc.want == nil {
				must.NoError(t, err)
				return
			}
			must.ErrorIs(t, err, tc.want)
			must.Eq(t, 403, structs.HTTPStatus(structs.KindOf(err)))
			if tc.secret != "" {
				must.StrNotContains(t, err.Error(), tc.secret)
			}
		})
	}
}
