package aclreplication

import (
	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

func policies(cfg *Config) kind {
	return spec[structs.ACLPolicyListStub, structs.ACLPolicy]{
		name: "policies",
		list: func(q structs.QueryOptions) ([]*structs.ACLPolicyListStub, uint64, error) {
			var reply structs.ACLPolicyListResponse
			err := cfg.RPC("ACL.ListPolicies", &structs.ACLPolicyListRequest{QueryOptions: q}, &reply)
			return reply.Policies, reply.Index, err
		},
		listed: func(p *structs.ACLPolicyListStub) (string, []byte, bool) { return p.Name, p.Hash, true },
		local: func(store *state.StateStore) ([]*structs.ACLPolicy, error) {
			return store.ACLPolicies(nil, "")
		},
		stored: func(p *structs.ACLPolicy) (string, []byte, bool) { return p.Name, p.Hash, true },
		// Policies are the one kind read in a single batch.
		get: func(q structs.QueryOptions, keys []string) ([]*structs.ACLPolicy, error) {
			var reply structs.ACLPolicySetResponse
			if err := cfg.RPC("ACL.GetPolicies", &structs.ACLPolicySetRequest{Names: keys, QueryOptions: q}, &reply); err != nil {
				return nil, err
			}
			return oneByOne(keys, func(name string) (*structs.ACLPolicy, error) { return reply.Policies[name], nil })
		},
		upsert: func(objs []*structs.ACLPolicy) (structs.MessageType, interface{}) {
			return structs.ACLPoliciesUpsertRequestType, &structs.ACLPolicyUpsertRequest{Policies: objs}
		},
		remove: func(keys []string) (structs.MessageType, interface{}) {
			return structs.ACLPoliciesDeleteRequestType, &structs.ACLPolicyDeleteRequest{Names: keys}
		},
	}.kind()
}

func roles(cfg *Config) kind {
	return spec[structs.ACLRoleListStub, structs.ACLRole]{
		name: "roles",
		list: func(q structs.QueryOptions) ([]*structs.ACLRoleListStub, uint64, error) {
			var reply structs.ACLRolesListResponse
			err := cfg.RPC("ACL.ListRoles", &structs.ACLRolesListRequest{QueryOptions: q}, &reply)
			return reply.ACLRoles, reply.Index, err
		},
		listed: func(r *structs.ACLRoleListStub) (string, []byte, bool) { return r.ID, r.Hash, true },
		local: func(store *state.StateStore) ([]*structs.ACLRole, error) {
			return store.ACLRoles(nil, "")
		},
		stored: func(r *structs.ACLRole) (string, []byte, bool) { return r.ID, r.Hash, true },
		get: func(q structs.QueryOptions, keys []string) ([]*structs.ACLRole, error) {
			return oneByOne(keys, func(id string) (*structs.ACLRole, error) {
				var reply structs.ACLRoleByIDResponse
				err := cfg.RPC("ACL.GetRole", &structs.ACLRoleByIDRequest{RoleID: id, QueryOptions: q}, &reply)
				return reply.ACLRole, err
			})
		},
		upsert: func(objs []*structs.ACLRole) (structs.MessageType, interface{}) {
			return structs.ACLRolesUpsertRequestType, &structs.ACLRolesUpsertRequest{Roles: objs}
		},
		remove: func(keys []string) (structs.MessageType, interface{}) {
			return structs.ACLRolesDeleteRequestType, &structs.ACLRolesDeleteByIDRequest{ACLRoleIDs: keys}
		},
	}.kind()
}

func authMethods(cfg *Config) kind {
	return spec[structs.ACLAuthMethodListStub, structs.ACLAuthMethod]{
		name: "auth_methods",
		list: func(q structs.QueryOptions) ([]*structs.ACLAuthMethodListStub, uint64, error) {
			var reply structs.ACLAuthMethodsListResponse
			err := cfg.RPC("ACL.ListAuthMethods", &structs.ACLAuthMethodsListRequest{QueryOptions: q}, &reply)
			return reply.AuthMethods, reply.Index, err
		},
		listed: func(m *structs.ACLAuthMethodListStub) (string, []byte, bool) { return m.Name, m.Hash, true },
		local: func(store *state.StateStore) ([]*structs.ACLAuthMethod, error) {
			return store.ACLAuthMethods(nil)
		},
		stored: func(m *structs.ACLAuthMethod) (string, []byte, bool) { return m.Name, m.Hash, true },
		get: func(q structs.QueryOptions, keys []string) ([]*structs.ACLAuthMethod, error) {
			return oneByOne(keys, func(name string) (*structs.ACLAuthMethod, error) {
				var reply structs.ACLAuthMethodGetResponse
				err := cfg.RPC("ACL.GetAuthMethod", &structs.ACLAuthMethodGetRequest{MethodName: name, QueryOptions: q}, &reply)
				return reply.AuthMethod, err
			})
		},
		upsert: func(objs []*structs.ACLAuthMethod) (structs.MessageType, interface{}) {
			return structs.ACLAuthMethodsUpsertRequestType, &structs.ACLAuthMethodsUpsertRequest{AuthMethods: objs}
		},
		remove: func(keys []string) (structs.MessageType, interface{}) {
			return structs.ACLAuthMethodsDeleteRequestType, &structs.ACLAuthMethodsDeleteRequest{Names: keys}
		},
	}.kind()
}

func bindingRules(cfg *Config) kind {
	return spec[structs.ACLBindingRuleListStub, structs.ACLBindingRule]{
		name: "binding_rules",
		list: func(q structs.QueryOptions) ([]*structs.ACLBindingRuleListStub, uint64, error) {
			var reply structs.ACLBindingRulesListResponse
			err := cfg.RPC("ACL.ListBindingRules", &structs.ACLBindingRulesListRequest{QueryOptions: q}, &reply)
			return reply.ACLBindingRules, reply.Index, err
		},
		listed: func(r *structs.ACLBindingRuleListStub) (string, []byte, bool) { return r.ID, r.Hash, true },
		local: func(store *state.StateStore) ([]*structs.ACLBindingRule, error) {
			return store.ACLBindingRules(nil, "")
		},
		stored: func(r *structs.ACLBindingRule) (string, []byte, bool) { return r.ID, r.Hash, true },
		get: func(q structs.QueryOptions, keys []string) ([]*structs.ACLBindingRule, error) {
			return oneByOne(keys, func(id string) (*structs.ACLBindingRule, error) {
				var reply structs.ACLBindingRuleResponse
				err := cfg.RPC("ACL.GetBindingRule", &structs.ACLBindingRuleRequest{ACLBindingRuleID: id, QueryOptions: q}, &reply)
				return reply.ACLBindingRule, err
			})
		},
		upsert: func(objs []*structs.ACLBindingRule) (structs.MessageType, interface{}) {
			return structs.ACLBindingRulesUpsertRequestType, &structs.ACLBindingRulesUpsertRequest{ACLBindingRules: objs}
		},
		remove: func(keys []string) (structs.MessageType, interface{}) {
			return structs.ACLBindingRulesDeleteRequestType, &structs.ACLBindingRulesDeleteRequest{ACLBindingRuleIDs: keys}
		},
	}.kind()
}

// globalTokens copies the global tokens only; local tokens are each
// region's own.
func globalTokens(cfg *Config) kind {
	return spec[structs.ACLTokenListStub, structs.ACLToken]{
		name: "global_tokens",
		list: func(q structs.QueryOptions) ([]*structs.ACLTokenListStub, uint64, error) {
			var reply structs.ACLTokenListResponse
			err := cfg.RPC("ACL.ListTokens", &structs.ACLTokenListRequest{GlobalOnly: true, QueryOptions: q}, &reply)
			return reply.Tokens, reply.Index, err
		},
		listed: func(t *structs.ACLTokenListStub) (string, []byte, bool) { return t.AccessorID, t.Hash, t.Global },
		local: func(store *state.StateStore) ([]*structs.ACLToken, error) {
			return store.ACLTokens(nil, "")
		},
		stored: func(t *structs.ACLToken) (string, []byte, bool) { return t.AccessorID, t.Hash, t.Global },
		get: func(q structs.QueryOptions, keys []string) ([]*structs.ACLToken, error) {
			return oneByOne(keys, func(id string) (*structs.ACLToken, error) {
				var reply structs.SingleACLTokenResponse
				if err := cfg.RPC("ACL.GetToken", &structs.ACLTokenSpecificRequest{AccessorID: id, QueryOptions: q}, &reply); err != nil {
					return nil, err
				}
				if t := reply.Token; t != nil && t.Global {
					return storedToken(t), nil
				}
				return nil, nil
			})
		},
		upsert: func(objs []*structs.ACLToken) (structs.MessageType, interface{}) {
			return structs.ACLTokensUpsertRequestType, &structs.ACLTokenUpsertRequest{Tokens: objs}
		},
		remove: func(keys []string) (structs.MessageType, interface{}) {
			return structs.ACLTokensDeleteRequestType, &structs.ACLTokenDeleteRequest{AccessorIDs: keys}
		},
	}.kind()
}

// storedToken is a token as read (its role links carry the roles' names)
// made as the state keeps it: role links by ID only, the names being
// filled in again on every read.
func storedToken(t *structs.ACLToken) *structs.ACLToken {
	t = t.Copy()
	for i, link := range t.Roles {
		if link != nil && link.ID != "" {
			t.Roles[i] = &structs.ACLTokenRoleLink{ID: link.ID}
		}
	}
	return t
}
