package fsm

import "github.com/opennomad/nomad/structs"

func (f *FSM) applyACLAuthMethodsUpsert(body []byte, index uint64) interface{} {
	var req structs.ACLAuthMethodsUpsertRequest
	if err := decode(body, structs.ACLAuthMethodsUpsertRequestType, &req); err != nil {
		return err
	}
	return f.State().UpsertACLAuthMethods(index, req.AuthMethods)
}

func (f *FSM) applyACLAuthMethodsDelete(body []byte, index uint64) interface{} {
	var req structs.ACLAuthMethodsDeleteRequest
	if err := decode(body, structs.ACLAuthMethodsDeleteRequestType, &req); err != nil {
		return err
	}
	return f.State().DeleteACLAuthMethods(index, req.Names)
}

func (f *FSM) applyACLBindingRulesUpsert(body []byte, index uint64) interface{} {
	var req structs.ACLBindingRulesUpsertRequest
	if err := decode(body, structs.ACLBindingRulesUpsertRequestType, &req); err != nil {
		return err
	}
	return f.State().UpsertACLBindingRules(index, req.ACLBindingRules)
}

func (f *FSM) applyACLBindingRulesDelete(body []byte, index uint64) interface{} {
	var req structs.ACLBindingRulesDeleteRequest
	if err := decode(body, structs.ACLBindingRulesDeleteRequestType, &req); err != nil {
		return err
	}
	return f.State().DeleteACLBindingRules(index, req.ACLBindingRuleIDs)
}
