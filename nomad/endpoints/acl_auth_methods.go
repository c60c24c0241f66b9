package endpoints

import (
	"time"

	"github.com/hashicorp/go-memdb"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// The auth method and binding rule methods. Writes and reads of one
// object need a management token, as an auth method's config may hold a
// client secret; the list of auth methods is open to any caller, as a
// login page reads it before it holds a token.

// tokenTTLBounds are the server's bounds of a token's time to live.
func (a *ACL) tokenTTLBounds() (minTTL, maxTTL time.Duration) {
	settings := a.srv.Settings()
	minTTL, maxTTL = settings.ACLTokenMinExpirationTTL, settings.ACLTokenMaxExpirationTTL
	if minTTL <= 0 {
		minTTL = structs.DefaultACLTokenMinExpirationTTL
	}
	if maxTTL <= 0 {
		maxTTL = structs.DefaultACLTokenMaxExpirationTTL
	}
	return minTTL, maxTTL
}

// UpsertAuthMethods creates or updates auth methods by name; management
// only. At most one method is the default.
func (a *ACL) UpsertAuthMethods(args *structs.ACLAuthMethodsUpsertRequest, reply *structs.ACLAuthMethodsUpsertResponse) error {
	a.toAuthoritative(&args.WriteRequest)
	if done, err := a.srv.Forward("ACL.UpsertAuthMethods", args, args, reply); done {
		return err
	}
	if err := a.requireManagement(args.AuthToken); err != nil {
		return err
	}
	if len(args.AuthMethods) == 0 {
		return structs.KindErrorf(structs.ErrInvalid, "must specify at least one auth method")
	}
	store := a.srv.State()
	minTTL, maxTTL := a.tokenTTLBounds()
	now := a.srv.Clock().Now()
	methods := make([]*structs.ACLAuthMethod, 0, len(args.AuthMethods))
	for i, in := range args.AuthMethods {
		if in == nil {
			return structs.KindErrorf(structs.ErrInvalid, "auth method %d invalid: missing auth method", i)
		}
		m := in.Copy()
		existing, err := store.ACLAuthMethodByName(nil, m.Name)
		if err != nil {
			return err
		}
		m.Canonicalize(existing, now)
		if err := m.Validate(minTTL, maxTTL); err != nil {
			return structs.KindErrorf(structs.ErrInvalid, "auth method %d invalid: %v", i, err)
		}
		if m.Default {
			def, err := store.ACLDefaultAuthMethod(nil)
			if err != nil {
				return err
			}
			if def != nil && def.Name != m.Name {
				return structs.KindErrorf(structs.ErrInvalid, "default method already exists: %s", def.Name)
			}
		}
		m.Hash = nil
		m.SetHash()
		methods = append(methods, m)
	}
	req := &structs.ACLAuthMethodsUpsertRequest{AuthMethods: methods, WriteRequest: args.WriteRequest}
	_, index, err := a.srv.RaftApply(structs.ACLAuthMethodsUpsertRequestType, req)
	if err != nil {
		return err
	}
	names := keysOf(methods, func(m *structs.ACLAuthMethod) string { return m.Name })
	if reply.AuthMethods, err = storedCopies(names, authMethodByName(a.srv.State()), structs.ErrACLAuthMethodNotFound); err != nil {
		return err
	}
	reply.Index = index
	return nil
}

// DeleteAuthMethods removes auth methods by name, with their binding
// rules; management only. A method that does not exist refuses the whole
// request.
func (a *ACL) DeleteAuthMethods(args *structs.ACLAuthMethodsDeleteRequest, reply *structs.GenericResponse) error {
	a.toAuthoritative(&args.WriteRequest)
	if done, err := a.srv.Forward("ACL.DeleteAuthMethods", args, args, reply); done {
		return err
	}
	if err := a.requireManagement(args.AuthToken); err != nil {
		return err
	}
	if len(args.Names) == 0 {
		return structs.KindErrorf(structs.ErrInvalid, "must specify at least one auth method")
	}
	if _, err := storedCopies(args.Names, authMethodByName(a.srv.State()), structs.ErrACLAuthMethodNotFound); err != nil {
		return err
	}
	req := &structs.ACLAuthMethodsDeleteRequest{Names: args.Names, WriteRequest: args.WriteRequest}
	_, index, err := a.srv.RaftApply(structs.ACLAuthMethodsDeleteRequestType, req)
	if err != nil {
		return err
	}
	reply.Index = index
	return nil
}

// ListAuthMethods lists every auth method's stub, to any caller.
func (a *ACL) ListAuthMethods(args *structs.ACLAuthMethodsListRequest, reply *structs.ACLAuthMethodsListResponse) error {
	if done, err := a.srv.Forward("ACL.ListAuthMethods", args, args, reply); done {
		return err
	}
	if err := a.enabled(); err != nil {
		return err
	}
	return flooredBlockingQuery(a.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		methods, err := store.ACLAuthMethods(ws)
		if err != nil {
			return 0, err
		}
		reply.AuthMethods = make([]*structs.ACLAuthMethodListStub, 0, len(methods))
		for _, m := range methods {
			reply.AuthMethods = append(reply.AuthMethods, m.Stub())
		}
		return store.Index(state.TableACLAuthMethods)
	})
}

// GetAuthMethod reads one auth method by name; management only.
// AuthMethod is nil when it does not exist.
func (a *ACL) GetAuthMethod(args *structs.ACLAuthMethodGetRequest, reply *structs.ACLAuthMethodGetResponse) error {
	if done, err := a.srv.Forward("ACL.GetAuthMethod", args, args, reply); done {
		return err
	}
	if err := a.enabled(); err != nil {
		return err
	}
	return flooredBlockingQuery(a.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		if err := a.managementIn(store, args.AuthToken); err != nil {
			return 0, err
		}
		m, err := store.ACLAuthMethodByName(ws, args.MethodName)
		if err != nil {
			return 0, err
		}
		reply.AuthMethod = m.Copy()
		if m != nil {
			return m.ModifyIndex, nil
		}
		return store.Index(state.TableACLAuthMethods)
	})
}

// managementIn admits a management token, looked up in store.
func (a *ACL) managementIn(store *state.StateStore, secret string) error {
	tok, err := a.caller(store, secret)
	if err != nil {
		return err
	}
	if !tok.IsManagement() {
		return structs.ErrPermissionDenied
	}
	return nil
}

// UpsertBindingRules creates or updates binding rules; management only. A
// rule without ID is created with a new one; one with an ID must exist.
// The auth method a rule names must exist.
func (a *ACL) UpsertBindingRules(args *structs.ACLBindingRulesUpsertRequest, reply *structs.ACLBindingRulesUpsertResponse) error {
	a.toAuthoritative(&args.WriteRequest)
	if done, err := a.srv.Forward("ACL.UpsertBindingRules", args, args, reply); done {
		return err
	}
	if err := a.requireManagement(args.AuthToken); err != nil {
		return err
	}
	if len(args.ACLBindingRules) == 0 {
		return structs.KindErrorf(structs.ErrInvalid, "must specify at least one binding rule")
	}
	store := a.srv.State()
	now := a.srv.Clock().Now()
	rules := make([]*structs.ACLBindingRule, 0, len(args.ACLBindingRules))
	for i, in := range args.ACLBindingRules {
		if in == nil {
			return structs.KindErrorf(structs.ErrInvalid, "binding rule %d invalid: missing binding rule", i)
		}
		r := in.Copy()
		var existing *structs.ACLBindingRule
		if r.ID != "" {
			var err error
			if existing, err = store.ACLBindingRuleByID(nil, r.ID); err != nil {
				return err
			}
			if existing == nil {
				return structs.KindErrorf(structs.ErrInvalid, "cannot find binding rule %s", r.ID)
			}
		}
		r.Canonicalize(existing, now)
		if err := r.Validate(); err != nil {
			return structs.KindErrorf(structs.ErrInvalid, "binding rule %d invalid: %v", i, err)
		}
		m, err := store.ACLAuthMethodByName(nil, r.AuthMethod)
		if err != nil {
			return err
		}
		if m == nil {
			return structs.KindErrorf(structs.ErrInvalid, "binding rule %d invalid: cannot find auth method %s", i, r.AuthMethod)
		}
		r.Hash = nil
		r.SetHash()
		rules = append(rules, r)
	}
	req := &structs.ACLBindingRulesUpsertRequest{ACLBindingRules: rules, WriteRequest: args.WriteRequest}
	_, index, err := a.srv.RaftApply(structs.ACLBindingRulesUpsertRequestType, req)
	if err != nil {
		return err
	}
	ids := keysOf(rules, func(r *structs.ACLBindingRule) string { return r.ID })
	if reply.ACLBindingRules, err = storedCopies(ids, bindingRuleByID(a.srv.State()), structs.ErrACLBindingRuleNotFound); err != nil {
		return err
	}
	reply.Index = index
	return nil
}

// DeleteBindingRules removes binding rules by ID; management only. A rule
// that does not exist refuses the whole request.
func (a *ACL) DeleteBindingRules(args *structs.ACLBindingRulesDeleteRequest, reply *structs.GenericResponse) error {
	a.toAuthoritative(&args.WriteRequest)
	if done, err := a.srv.Forward("ACL.DeleteBindingRules", args, args, reply); done {
		return err
	}
	if err := a.requireManagement(args.AuthToken); err != nil {
		return err
	}
	if len(args.ACLBindingRuleIDs) == 0 {
		return structs.KindErrorf(structs.ErrInvalid, "must specify at least one binding rule")
	}
	if _, err := storedCopies(args.ACLBindingRuleIDs, bindingRuleByID(a.srv.State()), structs.ErrACLBindingRuleNotFound); err != nil {
		return err
	}
	req := &structs.ACLBindingRulesDeleteRequest{ACLBindingRuleIDs: args.ACLBindingRuleIDs, WriteRequest: args.WriteRequest}
	_, index, err := a.srv.RaftApply(structs.ACLBindingRulesDeleteRequestType, req)
	if err != nil {
		return err
	}
	reply.Index = index
	return nil
}

// ListBindingRules lists the binding rules whose IDs start with the
// prefix, of one auth method when AuthMethod is set; management only.
func (a *ACL) ListBindingRules(args *structs.ACLBindingRulesListRequest, reply *structs.ACLBindingRulesListResponse) error {
	if done, err := a.srv.Forward("ACL.ListBindingRules", args, args, reply); done {
		return err
	}
	if err := a.enabled(); err != nil {
		return err
	}
	return flooredBlockingQuery(a.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		if err := a.managementIn(store, args.AuthToken); err != nil {
			return 0, err
		}
		rules, err := store.ACLBindingRules(ws, args.Prefix)
		if err != nil {
			return 0, err
		}
		reply.ACLBindingRules = make([]*structs.ACLBindingRuleListStub, 0, len(rules))
		for _, r := range rules {
			if args.AuthMethod == "" || r.AuthMethod == args.AuthMethod {
				reply.ACLBindingRules = append(reply.ACLBindingRules, r.Stub())
			}
		}
		return store.Index(state.TableACLBindingRules)
	})
}

// GetBindingRule reads one binding rule by ID; management only.
// ACLBindingRule is nil when it does not exist.
func (a *ACL) GetBindingRule(args *structs.ACLBindingRuleRequest, reply *structs.ACLBindingRuleResponse) error {
	if done, err := a.srv.Forward("ACL.GetBindingRule", args, args, reply); done {
		return err
	}
	if err := a.enabled(); err != nil {
		return err
	}
	return flooredBlockingQuery(a.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		if err := a.managementIn(store, args.AuthToken); err != nil {
			return 0, err
		}
		r, err := store.ACLBindingRuleByID(ws, args.ACLBindingRuleID)
		if err != nil {
			return 0, err
		}
		reply.ACLBindingRule = r.Copy()
		if r != nil {
			return r.ModifyIndex, nil
		}
		return store.Index(state.TableACLBindingRules)
	})
}
