package nomad

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// TestJobEndpoint_HostVolumeACL: registering a job that mounts a host
// volume needs mount-readwrite on it, or either mount capability when the
// volume is only read.
func TestJobEndpoint_HostVolumeACL(t *testing.T) {
	s, boot := newBootstrappedACLServer(t, nil)
	mgmt := boot.SecretID
	var wr structs.GenericResponse
	token := func(name, rules string) string {
		must.NoError(t, s.RPC("ACL.UpsertPolicies", &structs.ACLPolicyUpsertRequest{Policies: []*structs.ACLPolicy{
			{Name: name, Rules: rules}}, WriteRequest: asTokenWrite(mgmt)}, &wr))
		var created structs.ACLTokenUpsertResponse
		must.NoError(t, s.RPC("ACL.UpsertTokens", &structs.ACLTokenUpsertRequest{Tokens: []*structs.ACLToken{
			{Name: name, Type: structs.ACLClientToken, Policies: []string{name}}}, WriteRequest: asTokenWrite(mgmt)}, &created))
		return created.Tokens[0].SecretID
	}
	const submit = `namespace "default" { policy = "write" }` + "\n"
	reader := token("reader", submit+`host_volume "pg" { policy = "read" }`)
	writer := token("writer", submit+`host_volume "pg*" { capabilities = ["mount-readwrite"] }`)
	none := token("none", submit)

	job := func(readOnly bool) *structs.Job {
		j := mock.Job()
		j.TaskGroups[0].Volumes = map[string]*structs.VolumeRequest{"data": {
			Name: "data", Type: structs.VolumeTypeHost, Source: "pg", ReadOnly: readOnly}}
		j.TaskGroups[0].Tasks[0].VolumeMounts = []*structs.VolumeMount{{Volume: "data", Destination: "/data"}}
		return j
	}
	cases := []struct {
		name     string
		secret   string
		readOnly bool
		ok       bool
	}{
		{"read-only mount with mount-readonly", reader, true, true},
		{"read-write mount with only mount-readonly", reader, false, false},
		{"read-write mount with mount-readwrite (glob)", writer, false, true},
		{"read-only mount with mount-readwrite", writer, true, true},
		{"no host_volume rule", none, true, false},
		{"management", mgmt, false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var resp structs.JobRegisterResponse
			err := s.RPC("Job.Register", &structs.JobRegisterRequest{Job: job(c.readOnly),
				WriteRequest: structs.WriteRequest{Region: "global", Namespace: "default", AuthToken: c.secret}}, &resp)
			if c.ok {
				must.NoError(t, err)
			} else {
				must.ErrorIs(t, err, structs.ErrPermissionDenied)
			}
		})
	}
}
