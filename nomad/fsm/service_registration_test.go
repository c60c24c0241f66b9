package fsm

import (
	"bytes"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// TestFSM_ServiceRegistrations applies registrations through Raft
// entries: written, a refused wildcard address (state unchanged), one
// removed by ID, the rest by alloc, the alloc's terminal client update
// dropping what was registered again; then through a snapshot and back.
func TestFSM_ServiceRegistrations(t *testing.T) {
	f, _ := newTestFSM(t)
	node, job, alloc := allocFixture(t, f)
	reg := func(name string) *structs.ServiceRegistration {
		return &structs.ServiceRegistration{ID: "_nomad-task-" + alloc.ID + "-web-" + name + "-http",
			ServiceName: name, Namespace: job.Namespace, NodeID: node.ID, Datacenter: node.Datacenter,
			JobID: job.ID, AllocID: alloc.ID, Tags: []string{"a"}, Address: "10.1.2.3", Port: 20000}
	}
	mustApply(t, f, 20, structs.ServiceRegistrationUpsertRequestType, &structs.ServiceRegistrationUpsertRequest{
		Services: []*structs.ServiceRegistration{reg("web"), reg("api")}})

	bad := reg("bad")
	bad.Address = "::"
	err := mustFail(t, f, 21, structs.ServiceRegistrationUpsertRequestType, &structs.ServiceRegistrationUpsertRequest{
		Services: []*structs.ServiceRegistration{reg("other"), bad}})
	must.ErrorIs(t, err, structs.ErrInvalid)
	all, _ := f.State().ServiceRegistrations(nil, "*")
	must.Len(t, 2, all)

	var buf bytes.Buffer
	must.NoError(t, f.State().Snapshot().Persist(&buf))
	restored, err := state.Restore(&buf, nil)
	must.NoError(t, err)
	back, err := restored.ServiceRegistrations(nil, "*")
	must.NoError(t, err)
	must.Eq(t, all, back)

	req := &structs.ServiceRegistrationDeleteByIDRequest{ID: reg("web").ID}
	req.Namespace = job.Namespace
	mustApply(t, f, 22, structs.ServiceRegistrationDeleteByIDRequestType, req)
	err = mustFail(t, f, 23, structs.ServiceRegistrationDeleteByIDRequestType, req)
	must.ErrorIs(t, err, structs.ErrNotFound)

	mustApply(t, f, 24, structs.ServiceRegistrationDeleteByAllocIDsRequestType,
		&structs.ServiceRegistrationDeleteByAllocIDsRequest{AllocIDs: []string{alloc.ID}})
	all, _ = f.State().ServiceRegistrations(nil, "*")
	must.Len(t, 0, all)

	mustApply(t, f, 25, structs.ServiceRegistrationUpsertRequestType, &structs.ServiceRegistrationUpsertRequest{
		Services: []*structs.ServiceRegistration{reg("web")}})
	mustApply(t, f, 26, structs.AllocClientUpdateRequestType, &structs.AllocUpdateRequest{
		Alloc: []*structs.Allocation{{ID: alloc.ID, ClientStatus: structs.AllocClientStatusComplete}}})
	all, _ = f.State().ServiceRegistrations(nil, "*")
	must.Len(t, 0, all)
}
