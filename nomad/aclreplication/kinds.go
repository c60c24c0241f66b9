package aclreplication

import (
	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// kind is one kind of shared ACL object: how to list it in the
// authoritative region and here (key → hash), read it in full there, and
// write or delete it here.
type kind struct {
	name string
	// list answers the authoritative list once its index passes
	// q.MinQueryIndex, with that index.
	list func(q structs.QueryOptions) (map[string][]byte, uint64, error)
	// local is this region's copy.
	local func(store *state.StateStore) (map[string][]byte, error)
	// fetch reads the objects named by keys from the authoritative region
	// and returns the Raft entry that writes them here (nil msg: none is
	// left, they were deleted meanwhile).
	fetch func(q structs.QueryOptions, keys []string) (structs.MessageType, interface{}, error)
	// remove is the Raft entry that deletes keys here.
	remove func(keys []string) (structs.MessageType, interface{})
}

// kinds are the kinds copied, dependencies first.
func kinds(cfg *Config) []kind {
	return []kind{policies(cfg), roles(cfg), authMethods(cfg), bindingRules(cfg), globalTokens(cfg)}
}

func policies(cfg *Config) kind {
	return kind{
		name: "policies",
		list: func(q structs.QueryOptions) (map[string][]byte, uint64, error) {
			var reply structs.ACLPolicyListResponse
			if err := cfg.RPC("ACL.ListPolicies", &structs.ACLPolicyListRequest{QueryOptions: q}, &reply); err != nil {
				return nil, 0, err
			}
			out := make(map[string][]byte, len(reply.Policies))
			for _, p := range reply.Policies {
				out[p.Name] = p.Hash
			}
			return out, reply.Index, nil
		},
		local: func(store *state.StateStore) (map[string][]byte, error) {
			all, err := store.ACLPolicies(nil, "")
			if err != nil {
				return nil, err
			}
			out := make(map[string][]byte, len(all))
			for _, p := range all {
				out[p.Name] = p.Hash
			}
			return out, nil
		},
		fetch: func(q structs.QueryOptions, keys []string) (structs.MessageType, interface{}, error) {
			var reply structs.ACLPolicySetResponse
			if err := cfg.RPC("ACL.GetPolicies", &structs.ACLPolicySetRequest{Names: keys, QueryOptions: q}, &reply); err != nil {
				return 0, nil, err
			}
			var out []*structs.ACLPolicy
			for _, name := range keys {
				if p := reply.Policies[name]; p != nil {
					out = append(out, p)
				}
			}
			if len(out) == 0 {
				return 0, nil, nil
			}
			return structs.ACLPoliciesUpsertRequestType, &structs.ACLPolicyUpsertRequest{Policies: out}, nil
		},
		remove: func(keys []string) (structs.MessageType, interface{}) {
			return structs.ACLPoliciesDeleteRequestType, &structs.ACLPolicyDeleteRequest{Names: keys}
		},
	}
}

func roles(cfg *Config) kind {
	return kind{
		name: "roles",
		list: func(q structs.QueryOptions) (map[string][]byte, uint64, error) {
			var reply structs.ACLRolesListResponse
			if err := cfg.RPC("ACL.ListRoles", &structs.ACLRolesListRequest{QueryOptions: q}, &reply); err != nil {
				return nil, 0, err
			}
			out := make(map[string][]byte, len(reply.ACLRoles))
			for _, r := range reply.ACLRoles {
				out[r.ID] = r.Hash
			}
			return out, reply.Index, nil
		},
		local: func(store *state.StateStore) (map[string][]byte, error) {
			all, err := store.ACLRoles(nil, "")
			if err != nil {
				return nil, err
			}
			out := make(map[string][]byte, len(all))
			for _, r := range all {
				out[r.ID] = r.Hash
			}
			return out, nil
		},
		fetch: func(q structs.QueryOptions, keys []string) (structs.MessageType, interface{}, error) {
			var out []*structs.ACLRole
			for _, id := range keys {
				var reply structs.ACLRoleByIDResponse
				if err := cfg.RPC("ACL.GetRole", &structs.ACLRoleByIDRequest{RoleID: id, QueryOptions: q}, &reply); err != nil {
					return 0, nil, err
				}
				if reply.ACLRole != nil {
					out = append(out, reply.ACLRole)
				}
			}
			if len(out) == 0 {
				return 0, nil, nil
			}
			return structs.ACLRolesUpsertRequestType, &structs.ACLRolesUpsertRequest{Roles: out}, nil
		},
		remove: func(keys []string) (structs.MessageType, interface{}) {
			return structs.ACLRolesDeleteRequestType, &structs.ACLRolesDeleteByIDRequest{ACLRoleIDs: keys}
		},
	}
}

func authMethods(cfg *Config) kind {
	return kind{
		name: "auth_methods",
		list: func(q structs.QueryOptions) (map[string][]byte, uint64, error) {
			var reply structs.ACLAuthMethodsListResponse
			if err := cfg.RPC("ACL.ListAuthMethods", &structs.ACLAuthMethodsListRequest{QueryOptions: q}, &reply); err != nil {
				return nil, 0, err
			}
			out := make(map[string][]byte, len(reply.AuthMethods))
			for _, m := range reply.AuthMethods {
				out[m.Name] = m.Hash
			}
			return out, reply.Index, nil
		},
		local: func(store *state.StateStore) (map[string][]byte, error) {
			all, err := store.ACLAuthMethods(nil)
			if err != nil {
				return nil, err
			}
			out := make(map[string][]byte, len(all))
			for _, m := range all {
				out[m.Name] = m.Hash
			}
			return out, nil
		},
		fetch: func(q structs.QueryOptions, keys []string) (structs.MessageType, interface{}, error) {
			var out []*structs.ACLAuthMethod
			for _, name := range keys {
				var reply structs.ACLAuthMethodGetResponse
				if err := cfg.RPC("ACL.GetAuthMethod", &structs.ACLAuthMethodGetRequest{MethodName: name, QueryOptions: q}, &reply); err != nil {
					return 0, nil, err
				}
				if reply.AuthMethod != nil {
					out = append(out, reply.AuthMethod)
				}
			}
			if len(out) == 0 {
				return 0, nil, nil
			}
			return structs.ACLAuthMethodsUpsertRequestType, &structs.ACLAuthMethodsUpsertRequest{AuthMethods: out}, nil
		},
		remove: func(keys []string) (structs.MessageType, interface{}) {
			return structs.ACLAuthMethodsDeleteRequestType, &structs.ACLAuthMethodsDeleteRequest{Names: keys}
		},
	}
}

func bindingRules(cfg *Config) kind {
	return kind{
		name: "binding_rules",
		list: func(q structs.QueryOptions) (map[string][]byte, uint64, error) {
			var reply structs.ACLBindingRulesListResponse
			if err := cfg.RPC("ACL.ListBindingRules", &structs.ACLBindingRulesListRequest{QueryOptions: q}, &reply); err != nil {
				return nil, 0, err
			}
			out := make(map[string][]byte, len(reply.ACLBindingRules))
			for _, r := range reply.ACLBindingRules {
				out[r.ID] = r.Hash
			}
			return out, reply.Index, nil
		},
		local: func(store *state.StateStore) (map[string][]byte, error) {
			all, err := store.ACLBindingRules(nil, "")
			if err != nil {
				return nil, err
			}
			out := make(map[string][]byte, len(all))
			for _, r := range all {
				out[r.ID] = r.Hash
			}
			return out, nil
		},
		fetch: func(q structs.QueryOptions, keys []string) (structs.MessageType, interface{}, error) {
			var out []*structs.ACLBindingRule
			for _, id := range keys {
				var reply structs.ACLBindingRuleResponse
				if err := cfg.RPC("ACL.GetBindingRule", &structs.ACLBindingRuleRequest{ACLBindingRuleID: id, QueryOptions: q}, &reply); err != nil {
					return 0, nil, err
				}
				if reply.ACLBindingRule != nil {
					out = append(out, reply.ACLBindingRule)
				}
			}
			if len(out) == 0 {
				return 0, nil, nil
			}
			return structs.ACLBindingRulesUpsertRequestType, &structs.ACLBindingRulesUpsertRequest{ACLBindingRules: out}, nil
		},
		remove: func(keys []string) (structs.MessageType, interface{}) {
			return structs.ACLBindingRulesDeleteRequestType, &structs.ACLBindingRulesDeleteRequest{ACLBindingRuleIDs: keys}
		},
	}
}

// globalTokens copies the global tokens only; local tokens are each
// region's own.
func globalTokens(cfg *Config) kind {
	return kind{
		name: "global_tokens",
		list: func(q structs.QueryOptions) (map[string][]byte, uint64, error) {
			var reply structs.ACLTokenListResponse
			if err := cfg.RPC("ACL.ListTokens", &structs.ACLTokenListRequest{GlobalOnly: true, QueryOptions: q}, &reply); err != nil {
				return nil, 0, err
			}
			out := make(map[string][]byte, len(reply.Tokens))
			for _, t := range reply.Tokens {
				if t.Global {
					out[t.AccessorID] = t.Hash
				}
			}
			return out, reply.Index, nil
		},
		local: func(store *state.StateStore) (map[string][]byte, error) {
			all, err := store.ACLTokens(nil, "")
			if err != nil {
				return nil, err
			}
			out := make(map[string][]byte)
			for _, t := range all {
				if t.Global {
					out[t.AccessorID] = t.Hash
				}
			}
			return out, nil
		},
		fetch: func(q structs.QueryOptions, keys []string) (structs.MessageType, interface{}, error) {
			var out []*structs.ACLToken
			for _, id := range keys {
				var reply structs.SingleACLTokenResponse
				if err := cfg.RPC("ACL.GetToken", &structs.ACLTokenSpecificRequest{AccessorID: id, QueryOptions: q}, &reply); err != nil {
					return 0, nil, err
				}
				if t := reply.Token; t != nil && t.Global {
					out = append(out, storedToken(t))
				}
			}
			if len(out) == 0 {
				return 0, nil, nil
			}
			return structs.ACLTokensUpsertRequestType, &structs.ACLTokenUpsertRequest{Tokens: out}, nil
		},
		remove: func(keys []string) (structs.MessageType, interface{}) {
			return structs.ACLTokensDeleteRequestType, &structs.ACLTokenDeleteRequest{AccessorIDs: keys}
		},
	}
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
