package fsm

import (
	"github.com/opennomad/nomad/structs"
)

// Variable entries: one write to a variable, its items sealed. The
// state store judges it (check-and-set, locks); a refusal is answered as
// a conflict in the *structs.VarApplyStateResponse, not as an error.

func (f *FSM) applyVariable(body []byte, index uint64) interface{} {
	var req structs.VarApplyStateRequest
	if err := decode(body, structs.VarApplyStateRequestType, &req); err != nil {
		return err
	}
	resp, err := f.State().VarApply(index, req.Op, req.Var)
	if err != nil {
		return err
	}
	return resp
}
