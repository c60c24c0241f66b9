package state

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

func mockServiceRegistration(a *structs.Allocation, name string) *structs.ServiceRegistration {
	return &structs.ServiceRegistration{
		ID:          "_nomad-task-" + a.ID + "-group-web-" + name + "-http",
		ServiceName: name,
		Namespace:   a.Namespace,
		NodeID:      a.NodeID,
		Datacenter:  "dc1",
		JobID:       a.JobID,
		AllocID:     a.ID,
		Tags:        []string{"v1"},
		Address:     "10.0.0.1",
		Port:        8080,
	}
}

// serviceFixture is a store with one node, one job and two allocs on the
// node, each with a registration of service "web".
type serviceFixture struct {
	s      *StateStore
	node   *structs.Node
	job    *structs.Job
	allocs []*structs.Allocation
	regs   []*structs.ServiceRegistration
}

func newServiceFixture(t *testing.T) *serviceFixture {
	t.Helper()
	f := &serviceFixture{s: testStore(t), node: mockNode(), job: mockJob()}
	must.NoError(t, f.s.UpsertNode(10, f.node))
	must.NoError(t, f.s.UpsertJob(11, f.job))
	for i := 0; i < 2; i++ {
		a := mockAlloc(f.job, f.node)
		f.allocs = append(f.allocs, a)
	}
	must.NoError(t, f.s.UpsertAllocs(12, f.allocs))
	for _, a := range f.allocs {
		f.regs = append(f.regs, mockServiceRegistration(a, "web"))
	}
	must.NoError(t, f.s.UpsertServiceRegistrations(13, f.regs))
	return f
}

func TestServiceRegistrations_UpsertAndRead(t *testing.T) {
	f := newServiceFixture(t)
	s := f.s

	byName, err := s.ServiceRegistrationsByName(nil, f.job.Namespace, "web")
	must.NoError(t, err)
	must.Len(t, 2, byName)
	must.Eq(t, uint64(13), byName[0].CreateIndex)

	other, err := s.ServiceRegistrationsByName(nil, "prod", "web")
	must.NoError(t, err)
	must.Len(t, 0, other)

	byAlloc, err := s.ServiceRegistrationsByAllocID(nil, f.allocs[0].ID)
	must.NoError(t, err)
	must.Len(t, 1, byAlloc)
	byNode, err := s.ServiceRegistrationsByNodeID(nil, f.node.ID)
	must.NoError(t, err)
	must.Len(t, 2, byNode)
	byJob, err := s.ServiceRegistrationsByJobID(nil, f.job.Namespace, f.job.ID)
	must.NoError(t, err)
	must.Len(t, 2, byJob)
	all, err := s.ServiceRegistrations(nil, "*")
	must.NoError(t, err)
	must.Len(t, 2, all)

	// The same registration again changes nothing but the table index;
	// a changed one keeps its CreateIndex.
	must.NoError(t, s.UpsertServiceRegistrations(14, []*structs.ServiceRegistration{f.regs[0]}))
	got, err := s.ServiceRegistrationByID(nil, f.job.Namespace, f.regs[0].ID)
	must.NoError(t, err)
	must.Eq(t, uint64(13), got.ModifyIndex)
	idx, _ := s.Index(TableServiceRegistrations)
	must.Eq(t, uint64(14), idx)

	changed := f.regs[0].Copy()
	changed.Port = 9090
	must.NoError(t, s.UpsertServiceRegistrations(15, []*structs.ServiceRegistration{changed}))
	got, err = s.ServiceRegistrationByID(nil, f.job.Namespace, f.regs[0].ID)
	must.NoError(t, err)
	must.Eq(t, 9090, got.Port)
	must.Eq(t, uint64(13), got.CreateIndex)
	must.Eq(t, uint64(15), got.ModifyIndex)
}

func TestServiceRegistrations_UpsertRefusals(t *testing.T) {
	f := newServiceFixture(t)
	cases := []struct {
		name string
		edit func(r *structs.ServiceRegistration)
	}{
		{"wildcard address", func(r *structs.ServiceRegistration) { r.Address = "0.0.0.0" }},
		{"no address", func(r *structs.ServiceRegistration) { r.Address = "" }},
		{"no service name", func(r *structs.ServiceRegistration) { r.ServiceName = "" }},
		{"bad port", func(r *structs.ServiceRegistration) { r.Port = 70000 }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := mockServiceRegistration(f.allocs[0], "api")
			tc.edit(r)
			err := f.s.UpsertServiceRegistrations(20, []*structs.ServiceRegistration{r})
			must.ErrorIs(t, err, structs.ErrInvalid)
			got, _ := f.s.ServiceRegistrationsByName(nil, f.job.Namespace, "api")
			must.Len(t, 0, got)
		})
	}

	// An alloc that is gone or terminal gets no registration.
	ghost := mockServiceRegistration(mockAlloc(f.job, f.node), "ghost")
	must.NoError(t, f.s.UpsertServiceRegistrations(21, []*structs.ServiceRegistration{ghost}))
	got, _ := f.s.ServiceRegistrationsByName(nil, f.job.Namespace, "ghost")
	must.Len(t, 0, got)
}

func TestServiceRegistrations_Delete(t *testing.T) {
	f := newServiceFixture(t)
	ns := f.job.Namespace

	err := f.s.DeleteServiceRegistrationByID(20, ns, "nope")
	must.ErrorIs(t, err, structs.ErrNotFound)

	must.NoError(t, f.s.DeleteServiceRegistrationByID(21, ns, f.regs[0].ID))
	left, _ := f.s.ServiceRegistrationsByName(nil, ns, "web")
	must.Len(t, 1, left)

	must.NoError(t, f.s.DeleteServiceRegistrationsByAllocIDs(22, []string{f.allocs[1].ID, "unknown"}))
	left, _ = f.s.ServiceRegistrationsByName(nil, ns, "web")
	must.Len(t, 0, left)
}

// The servers drop an alloc's registrations in the write that makes it
// terminal, and a node's when it goes down or is removed.
func TestServiceRegistrations_Cleanup(t *testing.T) {
	cases := []struct {
		name  string
		write func(f *serviceFixture) error
		left  int
	}{
		{"client reports complete", func(f *serviceFixture) error {
			return f.s.UpdateAllocsFromClient(20, []*structs.Allocation{{
				ID: f.allocs[0].ID, ClientStatus: structs.AllocClientStatusComplete}})
		}, 1},
		{"client reports running", func(f *serviceFixture) error {
			return f.s.UpdateAllocsFromClient(20, []*structs.Allocation{{
				ID: f.allocs[0].ID, ClientStatus: structs.AllocClientStatusRunning}})
		}, 2},
		{"server marks lost", func(f *serviceFixture) error {
			a := f.allocs[0].Copy()
			a.DesiredStatus, a.ClientStatus = structs.AllocDesiredStatusStop, structs.AllocClientStatusLost
			return f.s.UpsertAllocs(20, []*structs.Allocation{a})
		}, 1},
		{"alloc collected", func(f *serviceFixture) error {
			return f.s.WithWriteTxn(20, func(tx *Txn) error { return tx.DeleteEvals(nil, []string{f.allocs[1].ID}) })
		}, 1},
		{"node down", func(f *serviceFixture) error {
			return f.s.WithWriteTxn(20, func(tx *Txn) error {
				return tx.UpdateNodeStatus(f.node.ID, structs.NodeStatusDown, 1, nil)
			})
		}, 0},
		{"node disconnected", func(f *serviceFixture) error {
			return f.s.WithWriteTxn(20, func(tx *Txn) error {
				return tx.UpdateNodeStatus(f.node.ID, structs.NodeStatusDisconnected, 1, nil)
			})
		}, 2},
		{"node removed", func(f *serviceFixture) error {
			return f.s.WithWriteTxn(20, func(tx *Txn) error { return tx.DeleteNodes([]string{f.node.ID}) })
		}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newServiceFixture(t)
			must.NoError(t, tc.write(f))
			left, err := f.s.ServiceRegistrations(nil, "*")
			must.NoError(t, err)
			must.Len(t, tc.left, left)
		})
	}
}

// Registrations and removals are published on the Service topic, keyed by
// ID and filterable by job and service name; an unchanged registration
// publishes nothing.
func TestServiceRegistrations_Events(t *testing.T) {
	pub := &recordingPublisher{}
	s, err := NewStateStore(&Config{Publisher: pub})
	must.NoError(t, err)
	node, job := mockNode(), mockJob()
	must.NoError(t, s.UpsertNode(10, node))
	must.NoError(t, s.UpsertJob(11, job))
	a := mockAlloc(job, node)
	must.NoError(t, s.UpsertAllocs(12, []*structs.Allocation{a}))
	pub.take()

	r := mockServiceRegistration(a, "web")
	must.NoError(t, s.UpsertServiceRegistrations(13, []*structs.ServiceRegistration{r}))
	b := pub.take()
	must.Len(t, 1, b)
	must.Eq(t, []eventKey{{structs.TopicService, structs.TypeServiceRegistration, r.ID}}, keys(b[0]))
	ev := b[0].Events[0]
	must.Eq(t, job.Namespace, ev.Namespace)
	must.Eq(t, []string{job.ID, "web"}, ev.FilterKeys)
	must.Eq(t, 8080, ev.Payload.(*structs.ServiceRegistrationStreamEvent).Service.Port)

	must.NoError(t, s.UpsertServiceRegistrations(14, []*structs.ServiceRegistration{r}))
	must.Len(t, 0, pub.take())

	must.NoError(t, s.UpdateAllocsFromClient(15, []*structs.Allocation{{ID: a.ID, ClientStatus: structs.AllocClientStatusFailed}}))
	var got []eventKey
	for _, batch := range pub.take() {
		for _, k := range keys(batch) {
			if k.Topic == structs.TopicService {
				got = append(got, k)
			}
		}
	}
	must.Eq(t, []eventKey{{structs.TopicService, structs.TypeServiceDeregistration, r.ID}}, got)
}
