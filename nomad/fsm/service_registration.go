package fsm

import (
	"github.com/opennomad/nomad/structs"
)

// Service registration entries: a client's registrations written or
// removed, and the removal of every registration of some allocs. The
// state store validates each registration and skips those of allocs
// that are gone or terminal.

func (f *FSM) applyServiceRegistrationUpsert(body []byte, index uint64) interface{} {
	var req structs.ServiceRegistrationUpsertRequest
	if err := decode(body, structs.ServiceRegistrationUpsertRequestType, &req); err != nil {
		return err
	}
	return f.State().UpsertServiceRegistrations(index, req.Services)
}

func (f *FSM) applyServiceRegistrationDeleteByID(body []byte, index uint64) interface{} {
	var req structs.ServiceRegistrationDeleteByIDRequest
	if err := decode(body, structs.ServiceRegistrationDeleteByIDRequestType, &req); err != nil {
		return err
	}
	return f.State().DeleteServiceRegistrationByID(index, req.RequestNamespace(), req.ID)
}

func (f *FSM) applyServiceRegistrationDeleteByAllocIDs(body []byte, index uint64) interface{} {
	var req structs.ServiceRegistrationDeleteByAllocIDsRequest
	if err := decode(body, structs.ServiceRegistrationDeleteByAllocIDsRequestType, &req); err != nil {
		return err
	}
	return f.State().DeleteServiceRegistrationsByAllocIDs(index, req.AllocIDs)
}
