package fsm

import (
	"github.com/opennomad/nomad/structs"
)

// Namespace entries: namespaces written or removed. The state store
// refuses an invalid namespace, the removal of the default namespace and
// of one that still has jobs that are not dead.

func (f *FSM) applyNamespaceUpsert(body []byte, index uint64) interface{} {
	var req structs.NamespaceUpsertRequest
	if err := decode(body, structs.NamespaceUpsertRequestType, &req); err != nil {
		return err
	}
	return f.State().UpsertNamespaces(index, req.Namespaces)
}

func (f *FSM) applyNamespaceDelete(body []byte, index uint64) interface{} {
	var req structs.NamespaceDeleteRequest
	if err := decode(body, structs.NamespaceDeleteRequestType, &req); err != nil {
		return err
	}
	return f.State().DeleteNamespaces(index, req.Namespaces)
}
