package nomad

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// TestNamespaceEndpoint_DefaultWrittenAtStart: a new cluster's leader
// writes the default namespace before it serves anything, and it cannot
// be deleted.
func TestNamespaceEndpoint_DefaultWrittenAtStart(t *testing.T) {
	s := newTestServer(t, nil)
	var got structs.SingleNamespaceResponse
	must.NoError(t, s.RPC("Namespace.GetNamespace", &structs.NamespaceSpecificRequest{Name: "default"}, &got))
	must.NotNil(t, got.Namespace)
	must.Eq(t, structs.DefaultNamespaceDescription, got.Namespace.Description)
	must.Positive(t, got.Index)

	var wr structs.GenericResponse
	err := s.RPC("Namespace.DeleteNamespaces", &structs.NamespaceDeleteRequest{Namespaces: []string{"default"}}, &wr)
	must.ErrorIs(t, err, structs.ErrInvalid)
	must.ErrorContains(t, err, "can not delete default namespace")
}

// TestNamespaceEndpoint_Lifecycle writes, reads, lists and deletes
// namespaces, and the refusals on the way.
func TestNamespaceEndpoint_Lifecycle(t *testing.T) {
	s := newTestServer(t, nil)
	var wr structs.GenericResponse
	must.NoError(t, s.RPC("Namespace.UpsertNamespaces", &structs.NamespaceUpsertRequest{Namespaces: []*structs.Namespace{
		{Name: "team-a", Description: "A", Meta: map[string]string{"owner": "a"}},
		{Name: "team-b", Capabilities: &structs.NamespaceCapabilities{EnabledTaskDrivers: []string{"exec"}}},
	}}, &wr))
	must.Positive(t, wr.Index)

	invalid := []struct {
		name string
		ns   []*structs.Namespace
		want string
	}{
		{"none", nil, "must specify at least one namespace"},
		{"wildcard", []*structs.Namespace{{Name: "*"}}, `Invalid namespace "*": invalid name "*".`},
		{"quota", []*structs.Namespace{{Name: "q", Quota: "gold"}}, `namespace "q" using non-existent quota "gold"`},
	}
	for _, c := range invalid {
		t.Run(c.name, func(t *testing.T) {
			err := s.RPC("Namespace.UpsertNamespaces", &structs.NamespaceUpsertRequest{Namespaces: c.ns}, &wr)
			must.ErrorIs(t, err, structs.ErrInvalid)
			must.ErrorContains(t, err, c.want)
		})
	}

	var list structs.NamespaceListResponse
	must.NoError(t, s.RPC("Namespace.ListNamespaces", &structs.NamespaceListRequest{}, &list))
	must.Len(t, 3, list.Namespaces)
	must.Eq(t, []string{"default", "team-a", "team-b"}, namespaceNames(list.Namespaces))
	must.NoError(t, s.RPC("Namespace.ListNamespaces", &structs.NamespaceListRequest{
		QueryOptions: structs.QueryOptions{Prefix: "team-b"}}, &list))
	must.Eq(t, []string{"team-b"}, namespaceNames(list.Namespaces))

	var set structs.NamespaceSetResponse
	must.NoError(t, s.RPC("Namespace.GetNamespaces", &structs.NamespaceSetRequest{Namespaces: []string{"team-a", "nope"}}, &set))
	must.MapLen(t, 1, set.Namespaces)
	must.Eq(t, "a", set.Namespaces["team-a"].Meta["owner"])

	// A job in team-a keeps it from being deleted.
	job := mock.Job()
	job.Namespace = "team-a"
	var reg structs.JobRegisterResponse
	must.NoError(t, s.RPC("Job.Register", &structs.JobRegisterRequest{Job: job,
		WriteRequest: structs.WriteRequest{Namespace: "team-a"}}, &reg))
	deletes := []struct {
		names []string
		kind  error
		want  string
	}{
		{nil, structs.ErrInvalid, "must specify at least one namespace to delete"},
		{[]string{"nope"}, structs.ErrNotFound, "namespace not found"},
		{[]string{"team-b", "team-a"}, structs.ErrInvalid, `namespace "team-a" has non-terminal jobs in regions: [global]`},
	}
	for _, c := range deletes {
		err := s.RPC("Namespace.DeleteNamespaces", &structs.NamespaceDeleteRequest{Namespaces: c.names}, &wr)
		must.ErrorIs(t, err, c.kind, must.Sprintf("%v", c.names))
		must.ErrorContains(t, err, c.want)
	}
	must.NoError(t, s.RPC("Namespace.DeleteNamespaces", &structs.NamespaceDeleteRequest{Namespaces: []string{"team-b"}}, &wr))
	var got structs.SingleNamespaceResponse
	must.NoError(t, s.RPC("Namespace.GetNamespace", &structs.NamespaceSpecificRequest{Name: "team-b"}, &got))
	must.Nil(t, got.Namespace)
}

// TestNamespaceEndpoint_JobInMissingNamespace: jobs registered or planned
// into a namespace that does not exist are refused, in Nomad's words.
func TestNamespaceEndpoint_JobInMissingNamespace(t *testing.T) {
	s := newTestServer(t, nil)
	job := mock.Job()
	job.Namespace = "nope"
	wr := structs.WriteRequest{Namespace: "nope"}
	want := `job "` + job.ID + `" is in nonexistent namespace "nope"`

	var reg structs.JobRegisterResponse
	err := s.RPC("Job.Register", &structs.JobRegisterRequest{Job: job.Copy(), WriteRequest: wr}, &reg)
	must.ErrorIs(t, err, structs.ErrInvalid)
	must.ErrorContains(t, err, want)

	var plan structs.JobPlanResponse
	err = s.RPC("Job.Plan", &structs.JobPlanRequest{Job: job.Copy(), WriteRequest: wr}, &plan)
	must.ErrorIs(t, err, structs.ErrInvalid)
	must.ErrorContains(t, err, want)
}

// TestNamespaceEndpoint_ACL: writes need a management token; a token
// reads and lists only the namespaces it may use.
func TestNamespaceEndpoint_ACL(t *testing.T) {
	s, boot := newBootstrappedACLServer(t, nil)
	mgmt := boot.SecretID
	var wr structs.GenericResponse
	must.NoError(t, s.RPC("Namespace.UpsertNamespaces", &structs.NamespaceUpsertRequest{
		Namespaces: []*structs.Namespace{{Name: "web"}, {Name: "db"}}, WriteRequest: asTokenWrite(mgmt)}, &wr))
	must.NoError(t, s.RPC("ACL.UpsertPolicies", &structs.ACLPolicyUpsertRequest{Policies: []*structs.ACLPolicy{
		{Name: "web-read", Rules: `namespace "web" { policy = "read" }`}}, WriteRequest: asTokenWrite(mgmt)}, &wr))
	var created structs.ACLTokenUpsertResponse
	must.NoError(t, s.RPC("ACL.UpsertTokens", &structs.ACLTokenUpsertRequest{Tokens: []*structs.ACLToken{
		{Name: "web", Type: structs.ACLClientToken, Policies: []string{"web-read"}}}, WriteRequest: asTokenWrite(mgmt)}, &created))
	web := created.Tokens[0].SecretID

	lists := []struct {
		name   string
		secret string
		want   []string
		err    error
	}{
		{"management sees all", mgmt, []string{"db", "default", "web"}, nil},
		{"web token sees web", web, []string{"web"}, nil},
		{"anonymous sees none", "", []string{}, nil},
		{"unknown secret", structs.GenerateUUID(), nil, structs.ErrPermissionDenied},
	}
	for _, c := range lists {
		t.Run("list/"+c.name, func(t *testing.T) {
			var list structs.NamespaceListResponse
			err := s.RPC("Namespace.ListNamespaces", &structs.NamespaceListRequest{QueryOptions: asTokenQuery(c.secret)}, &list)
			if c.err != nil {
				must.ErrorIs(t, err, c.err)
				return
			}
			must.NoError(t, err)
			must.Eq(t, c.want, namespaceNames(list.Namespaces))
		})
	}

	gets := []struct {
		name, secret, ns string
		err              error
	}{
		{"management", mgmt, "db", nil},
		{"web token, web", web, "web", nil},
		{"web token, db", web, "db", structs.ErrPermissionDenied},
		{"anonymous", "", "web", structs.ErrPermissionDenied},
	}
	for _, c := range gets {
		t.Run("get/"+c.name, func(t *testing.T) {
			var got structs.SingleNamespaceResponse
			err := s.RPC("Namespace.GetNamespace", &structs.NamespaceSpecificRequest{Name: c.ns, QueryOptions: asTokenQuery(c.secret)}, &got)
			if c.err != nil {
				must.ErrorIs(t, err, c.err)
				return
			}
			must.NoError(t, err)
			must.Eq(t, c.ns, got.Namespace.Name)
		})
	}

	writes := []struct {
		method string
		args   interface{}
	}{
		{"Namespace.UpsertNamespaces", &structs.NamespaceUpsertRequest{Namespaces: []*structs.Namespace{{Name: "x"}}, WriteRequest: asTokenWrite(web)}},
		{"Namespace.DeleteNamespaces", &structs.NamespaceDeleteRequest{Namespaces: []string{"db"}, WriteRequest: asTokenWrite(web)}},
	}
	for _, c := range writes {
		must.ErrorIs(t, s.RPC(c.method, c.args, &wr), structs.ErrPermissionDenied, must.Sprint(c.method))
	}
}

func namespaceNames(list []*structs.Namespace) []string {
	names := make([]string, 0, len(list))
	for _, n := range list {
		names = append(names, n.Name)
	}
	return names
}

// TestNamespaceEndpoint_Capabilities: a job using a task driver its
// namespace does not allow is refused at register and plan; one that
// keeps to the namespace's drivers registers.
func TestNamespaceEndpoint_Capabilities(t *testing.T) {
	s := newTestServer(t, nil)
	var wr structs.GenericResponse
	must.NoError(t, s.RPC("Namespace.UpsertNamespaces", &structs.NamespaceUpsertRequest{Namespaces: []*structs.Namespace{
		{Name: "locked", Capabilities: &structs.NamespaceCapabilities{EnabledTaskDrivers: []string{"exec"}}},
	}}, &wr))
	wreq := structs.WriteRequest{Namespace: "locked"}

	job := mock.Job()
	job.Namespace = "locked"
	job.TaskGroups[0].Tasks[0].Driver = "raw_exec"
	var reg structs.JobRegisterResponse
	err := s.RPC("Job.Register", &structs.JobRegisterRequest{Job: job.Copy(), WriteRequest: wreq}, &reg)
	must.ErrorIs(t, err, structs.ErrInvalid)
	must.ErrorContains(t, err, `used task driver "raw_exec" is not allowed in namespace "locked"`)
	var plan structs.JobPlanResponse
	err = s.RPC("Job.Plan", &structs.JobPlanRequest{Job: job.Copy(), WriteRequest: wreq}, &plan)
	must.ErrorContains(t, err, `used task driver "raw_exec" is not allowed in namespace "locked"`)

	job.TaskGroups[0].Tasks[0].Driver = "exec"
	must.NoError(t, s.RPC("Job.Register", &structs.JobRegisterRequest{Job: job, WriteRequest: wreq}, &reg))
}

// TestLeader_DefaultNamespaceWrittenOnce: the leader writes the default
// namespace only when it is missing; taking office again leaves it as it
// was.
func TestLeader_DefaultNamespaceWrittenOnce(t *testing.T) {
	s := newTestServer(t, nil)
	before, err := s.State().NamespaceByName(nil, structs.DefaultNamespace)
	must.NoError(t, err)
	must.NotNil(t, before)
	must.NoError(t, s.ensureDefaultNamespace())
	after, err := s.State().NamespaceByName(nil, structs.DefaultNamespace)
	must.NoError(t, err)
	must.Eq(t, before.ModifyIndex, after.ModifyIndex)
	must.Eq(t, structs.NewDefaultNamespace().Hash, after.Hash)
}
