package fsm

import (
	"github.com/opennomad/nomad/structs"
)

// Node pool entries: pools written or removed. The state store refuses
// an invalid pool, a change to a built-in one, and the removal of a
// built-in pool or of one that still has nodes or live jobs.

func (f *FSM) applyNodePoolUpsert(body []byte, index uint64) interface{} {
	var req structs.NodePoolUpsertRequest
	if err := decode(body, structs.NodePoolUpsertRequestType, &req); err != nil {
		return err
	}
	return f.State().UpsertNodePools(index, req.NodePools)
}

func (f *FSM) applyNodePoolDelete(body []byte, index uint64) interface{} {
	var req structs.NodePoolDeleteRequest
	if err := decode(body, structs.NodePoolDeleteRequestType, &req); err != nil {
		return err
	}
	return f.State().DeleteNodePools(index, req.Names)
}
