package nomad

import (
	"context"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// serviceEndpointFixture registers two nodes, a job in the default
// namespace and one in "team", and one alloc of each job on each node.
type serviceEndpointFixture struct {
	s      *Server
	boot   string
	n1, n2 *structs.Node
	allocs map[string]*structs.Allocation // by "<namespace>/<node name>"
}

func newServiceEndpointFixture(t *testing.T) *serviceEndpointFixture {
	t.Helper()
	s, boot := newBootstrappedACLServer(t, nil)
	f := &serviceEndpointFixture{s: s, boot: boot.SecretID, n1: mock.Node(), n2: mock.Node(),
		allocs: map[string]*structs.Allocation{}}
	f.n1.Name, f.n2.Name = "n1", "n2"
	registerNode(t, s, f.n1)
	registerNode(t, s, f.n2)
	var wr structs.GenericResponse
	must.NoError(t, s.RPC("Namespace.UpsertNamespaces", &structs.NamespaceUpsertRequest{
		Namespaces:   []*structs.Namespace{{Name: "team"}},
		WriteRequest: structs.WriteRequest{AuthToken: f.boot}}, &wr))
	var allocs []*structs.Allocation
	for _, ns := range []string{"default", "team"} {
		job := mock.Job()
		job.Namespace = ns
		var registered structs.JobRegisterResponse
		must.NoError(t, s.RPC("Job.Register", &structs.JobRegisterRequest{Job: job,
			WriteRequest: structs.WriteRequest{Namespace: ns, AuthToken: f.boot}}, &registered))
		stored, err := s.State().JobByID(nil, ns, job.ID)
		must.NoError(t, err)
		for _, n := range []*structs.Node{f.n1, f.n2} {
			a := mock.Alloc()
			a.Job, a.JobID, a.Namespace, a.NodeID = stored, stored.ID, ns, n.ID
			allocs = append(allocs, a)
			f.allocs[ns+"/"+n.Name] = a
		}
	}
	must.NoError(t, s.State().UpsertAllocs(latestIndex(t, s)+1, allocs))
	return f
}

func (f *serviceEndpointFixture) reg(a *structs.Allocation, name string, port int, tags ...string) *structs.ServiceRegistration {
	return &structs.ServiceRegistration{ID: "_nomad-task-" + a.ID + "-group-web-" + name + "-http",
		ServiceName: name, Namespace: a.Namespace, NodeID: a.NodeID, Datacenter: "dc1", JobID: a.JobID,
		AllocID: a.ID, Tags: tags, Address: "10.0.0.1", Port: port}
}

func (f *serviceEndpointFixture) upsert(secret string, regs ...*structs.ServiceRegistration) error {
	var wr structs.GenericResponse
	return f.s.RPC("ServiceRegistration.Upsert", &structs.ServiceRegistrationUpsertRequest{Services: regs,
		WriteRequest: structs.WriteRequest{AuthToken: secret}}, &wr)
}

func TestServiceRegistrationEndpoint_UpsertNeedsTheOwningNode(t *testing.T) {
	f := newServiceEndpointFixture(t)
	own := f.reg(f.allocs["default/n1"], "web", 8080)
	wildcard := f.reg(f.allocs["default/n1"], "web", 8081)
	wildcard.Address = "0.0.0.0"
	stolen := f.reg(f.allocs["default/n1"], "web", 8082)
	stolen.NodeID = f.n2.ID
	otherJob := f.reg(f.allocs["default/n1"], "web", 8083)
	otherJob.JobID = "other"
	cases := []struct {
		name   string
		secret string
		regs   []*structs.ServiceRegistration
		kind   error
	}{
		{"the node its own", f.n1.SecretID, []*structs.ServiceRegistration{own}, nil},
		{"a node another's", f.n2.SecretID, []*structs.ServiceRegistration{own}, structs.ErrPermissionDenied},
		{"a management token", f.boot, []*structs.ServiceRegistration{own}, structs.ErrPermissionDenied},
		{"anonymous", "", []*structs.ServiceRegistration{own}, structs.ErrPermissionDenied},
		{"none", f.n1.SecretID, nil, structs.ErrInvalid},
		{"wildcard address", f.n1.SecretID, []*structs.ServiceRegistration{wildcard}, structs.ErrInvalid},
		{"a node another node's alloc as its own", f.n2.SecretID, []*structs.ServiceRegistration{stolen}, structs.ErrPermissionDenied},
		{"another job", f.n1.SecretID, []*structs.ServiceRegistration{otherJob}, structs.ErrInvalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := f.upsert(c.secret, c.regs...)
			if c.kind == nil {
				must.NoError(t, err)
				return
			}
			must.True(t, structs.IsKind(err, c.kind), must.Sprint(err))
		})
	}
	err := f.upsert(f.n1.SecretID, wildcard)
	must.ErrorContains(t, err, "invalid service registration address")
}

func TestServiceRegistrationEndpoint_ReadsAndDeletes(t *testing.T) {
	f := newServiceEndpointFixture(t)
	reader := aclTestToken(t, f.s, f.boot, "reader", `namespace "default" { policy = "read" }`, 0)
	writer := aclTestToken(t, f.s, f.boot, "writer", `namespace "default" { policy = "write" }`, 0)
	must.NoError(t, f.upsert(f.n1.SecretID,
		f.reg(f.allocs["default/n1"], "web", 8080, "b", "a"),
		f.reg(f.allocs["default/n1"], "db", 5432),
		f.reg(f.allocs["team/n1"], "web", 9090, "t")))
	must.NoError(t, f.upsert(f.n2.SecretID, f.reg(f.allocs["default/n2"], "web", 8080, "c", "a")))

	list := func(secret, ns string) ([]*structs.ServiceRegistrationListStub, error) {
		var out structs.ServiceRegistrationListResponse
		err := f.s.RPC("ServiceRegistration.List", &structs.ServiceRegistrationListRequest{
			QueryOptions: structs.QueryOptions{Namespace: ns, AuthToken: secret}}, &out)
		return out.Services, err
	}
	got, err := list(reader, "default")
	must.NoError(t, err)
	must.Len(t, 1, got)
	must.Eq(t, "default", got[0].Namespace)
	must.Eq(t, []*structs.ServiceRegistrationStub{
		{ServiceName: "db", Tags: []string{}}, {ServiceName: "web", Tags: []string{"a", "b", "c"}}}, got[0].Services)

	// "*" keeps the namespaces the token may read.
	got, err = list(reader, "*")
	must.NoError(t, err)
	must.Len(t, 1, got)
	got, err = list(f.boot, "*")
	must.NoError(t, err)
	must.Len(t, 2, got)
	must.Eq(t, "team", got[1].Namespace)
	_, err = list(reader, "team")
	must.True(t, structs.IsKind(err, structs.ErrPermissionDenied), must.Sprint(err))
	got, err = list(f.boot, "nowhere")
	must.NoError(t, err)
	must.Len(t, 0, got)

	get := func(secret, name, choose string) ([]*structs.ServiceRegistration, error) {
		var out structs.ServiceRegistrationByNameResponse
		err := f.s.RPC("ServiceRegistration.GetService", &structs.ServiceRegistrationByNameRequest{
			ServiceName: name, Choose: choose,
			QueryOptions: structs.QueryOptions{Namespace: "default", AuthToken: secret}}, &out)
		return out.Services, err
	}
	regs, err := get(reader, "web", "")
	must.NoError(t, err)
	must.Len(t, 2, regs)
	regs, err = get(reader, "nope", "")
	must.NoError(t, err)
	must.Len(t, 0, regs)
	one, err := get(reader, "web", "1|client-a")
	must.NoError(t, err)
	must.Len(t, 1, one)
	again, err := get(reader, "web", "1|client-a")
	must.NoError(t, err)
	must.Eq(t, one[0].ID, again[0].ID)
	_, err = get(reader, "web", "x|y")
	must.True(t, structs.IsKind(err, structs.ErrInvalid), must.Sprint(err))
	must.ErrorContains(t, err, "Parameter for choose must be in form '<number>|<key>'")
	_, err = get("", "web", "")
	must.True(t, structs.IsKind(err, structs.ErrPermissionDenied), must.Sprint(err))

	del := func(secret, ns, id string) error {
		var wr structs.GenericResponse
		return f.s.RPC("ServiceRegistration.DeleteByID", &structs.ServiceRegistrationDeleteByIDRequest{ID: id,
			WriteRequest: structs.WriteRequest{Namespace: ns, AuthToken: secret}}, &wr)
	}
	webN1 := f.reg(f.allocs["default/n1"], "web", 8080).ID
	webN2 := f.reg(f.allocs["default/n2"], "web", 8080).ID
	for _, c := range []struct {
		name, secret, id string
		kind             error
	}{
		{"a reader", reader, webN1, structs.ErrPermissionDenied},
		{"another node", f.n2.SecretID, webN1, structs.ErrPermissionDenied},
		{"no id", writer, "", structs.ErrInvalid},
		{"unknown", writer, "nope", structs.ErrNotFound},
		{"the owning node", f.n1.SecretID, webN1, nil},
		{"a writer", writer, webN2, nil},
	} {
		t.Run("delete by "+c.name, func(t *testing.T) {
			err := del(c.secret, "default", c.id)
			if c.kind == nil {
				must.NoError(t, err)
				return
			}
			must.True(t, structs.IsKind(err, c.kind), must.Sprint(err))
		})
	}
	regs, err = get(reader, "web", "")
	must.NoError(t, err)
	must.Len(t, 0, regs)
}

// A blocking GetService wakes when a registration of the name is written.
func TestServiceRegistrationEndpoint_GetServiceBlocks(t *testing.T) {
	f := newServiceEndpointFixture(t)
	var first structs.ServiceRegistrationByNameResponse
	must.NoError(t, f.s.RPC("ServiceRegistration.GetService", &structs.ServiceRegistrationByNameRequest{
		ServiceName: "web", QueryOptions: structs.QueryOptions{AuthToken: f.boot}}, &first))
	must.Positive(t, first.Index)

	done := make(chan structs.ServiceRegistrationByNameResponse, 1)
	min := first.Index
	go func() {
		var out structs.ServiceRegistrationByNameResponse
		_ = f.s.RPC("ServiceRegistration.GetService", &structs.ServiceRegistrationByNameRequest{ServiceName: "web",
			QueryOptions: structs.QueryOptions{AuthToken: f.boot, MinQueryIndex: min,
				MaxQueryTime: 10 * time.Second}}, &out)
		done <- out
	}()
	must.NoError(t, f.upsert(f.n1.SecretID, f.reg(f.allocs["default/n1"], "web", 8080)))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	select {
	case out := <-done:
		must.Len(t, 1, out.Services)
	case <-ctx.Done():
		t.Fatal("blocking query did not wake")
	}
}

// The registrations of a job or an allocation: nil for one that does not
// exist, and an allocation is judged in its own namespace.
func TestServiceRegistrationEndpoint_ByJobAndAlloc(t *testing.T) {
	f := newServiceEndpointFixture(t)
	reader := aclTestToken(t, f.s, f.boot, "reader", `namespace "default" { policy = "read" }`, 0)
	webDefault := f.reg(f.allocs["default/n1"], "web", 8080)
	webTeam := f.reg(f.allocs["team/n1"], "web", 9090)
	must.NoError(t, f.upsert(f.n1.SecretID, webDefault, webTeam))

	byJob := func(secret, ns, job string) (*structs.ServiceRegistrationsResponse, error) {
		var out structs.ServiceRegistrationsResponse
		err := f.s.RPC("ServiceRegistration.ListByJob", &structs.ServiceRegistrationsByJobRequest{JobID: job,
			QueryOptions: structs.QueryOptions{Namespace: ns, AuthToken: secret}}, &out)
		return &out, err
	}
	out, err := byJob(reader, "default", webDefault.JobID)
	must.NoError(t, err)
	must.Len(t, 1, out.Services)
	must.Eq(t, webDefault.ID, out.Services[0].ID)
	out, err = byJob(reader, "default", "nope")
	must.NoError(t, err)
	must.Nil(t, out.Services)
	_, err = byJob(reader, "team", webTeam.JobID)
	must.True(t, structs.IsKind(err, structs.ErrPermissionDenied), must.Sprint(err))

	byAlloc := func(secret, id string) (*structs.ServiceRegistrationsResponse, error) {
		var out structs.ServiceRegistrationsResponse
		err := f.s.RPC("ServiceRegistration.ListByAlloc", &structs.ServiceRegistrationsByAllocRequest{AllocID: id,
			QueryOptions: structs.QueryOptions{AuthToken: secret}}, &out)
		return &out, err
	}
	out, err = byAlloc(reader, webDefault.AllocID)
	must.NoError(t, err)
	must.Len(t, 1, out.Services)
	out, err = byAlloc(reader, structs.GenerateUUID())
	must.NoError(t, err)
	must.Nil(t, out.Services)
	// The request's namespace is default, the allocation's team.
	_, err = byAlloc(reader, webTeam.AllocID)
	must.True(t, structs.IsKind(err, structs.ErrPermissionDenied), must.Sprint(err))
	out, err = byAlloc(f.boot, webTeam.AllocID)
	must.NoError(t, err)
	must.Len(t, 1, out.Services)
	// An alloc without registrations answers an empty list.
	out, err = byAlloc(f.boot, f.allocs["default/n2"].ID)
	must.NoError(t, err)
	must.NotNil(t, out.Services)
	must.Len(t, 0, out.Services)
}

// A node removes every registration of its own allocs in one call, and
// none of another node's.
func TestServiceRegistrationEndpoint_DeleteByAllocIDs(t *testing.T) {
	f := newServiceEndpointFixture(t)
	a1, a2 := f.allocs["default/n1"], f.allocs["default/n2"]
	must.NoError(t, f.upsert(f.n1.SecretID, f.reg(a1, "web", 8080), f.reg(a1, "db", 5432)))
	must.NoError(t, f.upsert(f.n2.SecretID, f.reg(a2, "web", 8080)))

	del := func(secret string, ids ...string) error {
		var wr structs.GenericResponse
		return f.s.RPC("ServiceRegistration.DeleteByAllocIDs", &structs.ServiceRegistrationDeleteByAllocIDsRequest{
			AllocIDs: ids, WriteRequest: structs.WriteRequest{AuthToken: secret}}, &wr)
	}
	for _, c := range []struct {
		name   string
		secret string
		ids    []string
		kind   error
	}{
		{"none", f.n1.SecretID, nil, structs.ErrInvalid},
		{"another node's", f.n1.SecretID, []string{a1.ID, a2.ID}, structs.ErrPermissionDenied},
		{"a management token", f.boot, []string{a1.ID}, structs.ErrPermissionDenied},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := del(c.secret, c.ids...)
			must.True(t, structs.IsKind(err, c.kind), must.Sprint(err))
		})
	}
	all, err := f.s.State().ServiceRegistrations(nil, "*")
	must.NoError(t, err)
	must.Len(t, 3, all)

	must.NoError(t, del(f.n1.SecretID, a1.ID))
	all, err = f.s.State().ServiceRegistrations(nil, "*")
	must.NoError(t, err)
	must.Len(t, 1, all)
	must.Eq(t, a2.ID, all[0].AllocID)
}
