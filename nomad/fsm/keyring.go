package fsm

import (
	"github.com/opennomad/nomad/structs"
)

// Keyring entries: root keys added, demoted or removed as the leader
// decided (package nomad/keyring).

func (f *FSM) applyRootKeyUpsert(body []byte, index uint64) interface{} {
	var req structs.RootKeyUpsertRequest
	if err := decode(body, structs.RootKeyUpsertRequestType, &req); err != nil {
		return err
	}
	return f.State().UpsertRootKeys(index, req.Keys)
}

func (f *FSM) applyRootKeyDelete(body []byte, index uint64) interface{} {
	var req structs.RootKeyDeleteRequest
	if err := decode(body, structs.RootKeyDeleteRequestType, &req); err != nil {
		return err
	}
	return f.State().DeleteRootKey(index, req.KeyID)
}
