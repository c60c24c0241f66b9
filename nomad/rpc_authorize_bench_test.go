package nomad

import (
	"testing"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// BenchmarkRPC_ACL is the cost ACLs add to a request: Job.GetJob (an
// in-memory read, no Raft) through the RPC registry, with ACLs off, with
// a management token, and with a client token whose policy grants
// read-job in the namespace. The difference between the cases is the
// authorization step (token resolution is cached until an ACL object
// changes).
func BenchmarkRPC_ACL(b *testing.B) {
	cases := []struct {
		name  string
		acl   bool
		token func(s *Server, mgmt string) string
	}{
		{"acls-off", false, nil},
		{"management", true, func(_ *Server, mgmt string) string { return mgmt }},
		{"client-token", true, func(s *Server, mgmt string) string {
			return aclTestTokenTB(b, s, mgmt, "reader", `namespace "default" { policy = "read" }`)
		}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			s := newTestServer(b, func(cfg *Config) { cfg.ACLEnabled = c.acl })
			token, mgmt := "", ""
			if c.acl {
				var boot structs.ACLTokenUpsertResponse
				if err := s.RPC("ACL.Bootstrap", &structs.ACLTokenBootstrapRequest{}, &boot); err != nil {
					b.Fatal(err)
				}
				mgmt = boot.Tokens[0].SecretID
				token = c.token(s, mgmt)
			}
			job := mock.Job()
			var reg structs.JobRegisterResponse
			if err := s.RPC("Job.Register", &structs.JobRegisterRequest{Job: job,
				WriteRequest: structs.WriteRequest{Namespace: job.Namespace, AuthToken: mgmt}}, &reg); err != nil {
				b.Fatal(err)
			}
			req := &structs.JobSpecificRequest{JobID: job.ID, QueryOptions: structs.QueryOptions{Namespace: job.Namespace, AuthToken: token}}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				var out structs.SingleJobResponse
				if err := s.RPC("Job.GetJob", req, &out); err != nil || out.Job == nil {
					b.Fatalf("GetJob: %v", err)
				}
			}
		})
	}
}

// aclTestTokenTB is aclTestToken for benchmarks: a client token of one
// new policy.
func aclTestTokenTB(tb testing.TB, s *Server, mgmt, name, rules string) string {
	tb.Helper()
	var wr structs.GenericResponse
	if err := s.RPC("ACL.UpsertPolicies", &structs.ACLPolicyUpsertRequest{
		Policies: []*structs.ACLPolicy{{Name: name, Rules: rules}}, WriteRequest: asTokenWrite(mgmt)}, &wr); err != nil {
		tb.Fatal(err)
	}
	var created structs.ACLTokenUpsertResponse
	if err := s.RPC("ACL.UpsertTokens", &structs.ACLTokenUpsertRequest{Tokens: []*structs.ACLToken{
		{Name: name, Type: structs.ACLClientToken, Policies: []string{name}}}, WriteRequest: asTokenWrite(mgmt)}, &created); err != nil {
		tb.Fatal(err)
	}
	return created.Tokens[0].SecretID
}
