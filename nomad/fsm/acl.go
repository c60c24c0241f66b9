package fsm

import (
	"github.com/opennomad/nomad/structs"
)

// ACL entries: policies, tokens and roles as the ACL endpoints checked
// them, and the bootstrap token.

func (f *FSM) applyACLPoliciesUpsert(body []byte, index uint64) interface{} {
	var req structs.ACLPolicyUpsertRequest
	if err := decode(body, structs.ACLPoliciesUpsertRequestType, &req); err != nil {
		return err
	}
	return f.State().UpsertACLPolicies(index, req.Policies)
}

func (f *FSM) applyACLPoliciesDelete(body []byte, index uint64) interface{} {
	var req structs.ACLPolicyDeleteRequest
	if err := decode(body, structs.ACLPoliciesDeleteRequestType, &req); err != nil {
		return err
	}
	return f.State().DeleteACLPolicies(index, req.Names)
}

func (f *FSM) applyACLTokensUpsert(body []byte, index uint64) interface{} {
	var req structs.ACLTokenUpsertRequest
	if err := decode(body, structs.ACLTokensUpsertRequestType, &req); err != nil {
		return err
	}
	return f.State().UpsertACLTokens(index, req.Tokens)
}

func (f *FSM) applyACLTokensDelete(body []byte, index uint64) interface{} {
	var req structs.ACLTokenDeleteRequest
	if err := decode(body, structs.ACLTokensDeleteRequestType, &req); err != nil {
		return err
	}
	return f.State().DeleteACLTokens(index, req.AccessorIDs)
}

func (f *FSM) applyACLTokenBootstrap(body []byte, index uint64) interface{} {
	var req structs.ACLTokenBootstrapRequest
	if err := decode(body, structs.ACLTokenBootstrapRequestType, &req); err != nil {
		return err
	}
	return f.State().BootstrapACLToken(index, req.ResetIndex, req.Token)
}

func (f *FSM) applyACLRolesUpsert(body []byte, index uint64) interface{} {
	var req structs.ACLRolesUpsertRequest
	if err := decode(body, structs.ACLRolesUpsertRequestType, &req); err != nil {
		return err
	}
	return f.State().UpsertACLRoles(index, req.Roles)
}

func (f *FSM) applyACLRolesDelete(body []byte, index uint64) interface{} {
	var req structs.ACLRolesDeleteByIDRequest
	if err := decode(body, structs.ACLRolesDeleteRequestType, &req); err != nil {
		return err
	}
	return f.State().DeleteACLRoles(index, req.ACLRoleIDs)
}

func (f *FSM) applyOneTimeTokenUpsert(body []byte, index uint64) interface{} {
	var req structs.OneTimeTokenUpsertRequest
	if err := decode(body, structs.OneTimeTokenUpsertRequestType, &req); err != nil {
		return err
	}
	return f.State().UpsertOneTimeToken(index, req.OneTimeToken)
}

func (f *FSM) applyOneTimeTokenDelete(body []byte, index uint64) interface{} {
	var req structs.OneTimeTokenDeleteRequest
	if err := decode(body, structs.OneTimeTokenDeleteRequestType, &req); err != nil {
		return err
	}
	return f.State().DeleteOneTimeTokens(index, req.OneTimeSecretIDs)
}
