package endpoints

import (
	"github.com/hashicorp/go-memdb"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// The ACL role methods.

// UpsertRoles creates or updates roles; management only. A role without
// ID is created with a new one; one with an ID must exist.
func (a *ACL) UpsertRoles(args *structs.ACLRolesUpsertRequest, reply *structs.ACLRolesUpsertResponse) error {
	a.toAuthoritative(&args.WriteRequest)
	if done, err := a.srv.Forward("ACL.UpsertRoles", args, args, reply); done {
		return err
	}
	if err := a.requireManagement(args.AuthToken); err != nil {
		return err
	}
	if len(args.Roles) == 0 {
		return structs.KindErrorf(structs.ErrInvalid, "must specify at least one role")
	}
	store := a.srv.State()
	roles := make([]*structs.ACLRole, 0, len(args.Roles))
	for i, in := range args.Roles {
		if in == nil {
			return structs.KindErrorf(structs.ErrInvalid, "role %d invalid: missing role", i)
		}
		r := in.Copy()
		if r.ID != "" {
			existing, err := store.ACLRoleByID(nil, r.ID)
			if err != nil {
				return err
			}
			if existing == nil {
				return structs.KindErrorf(structs.ErrInvalid, "cannot find role %s", r.ID)
			}
		}
		r.Canonicalize()
		if err := r.Validate(); err != nil {
			return structs.KindErrorf(structs.ErrInvalid, "role %d invalid: %v", i, err)
		}
		named, err := store.ACLRoleByName(nil, r.Name)
		if err != nil {
			return err
		}
		if named != nil && named.ID != r.ID {
			return structs.KindErrorf(structs.ErrInvalid, "role with name %s already exists", r.Name)
		}
		for _, link := range r.Policies {
			p, err := store.ACLPolicyByName(nil, link.Name)
			if err != nil {
				return err
			}
			if p == nil {
				return structs.KindErrorf(structs.ErrInvalid, "cannot find policy %s", link.Name)
			}
		}
		r.Hash = nil
		r.SetHash()
		roles = append(roles, r)
	}
	req := &structs.ACLRolesUpsertRequest{Roles: roles, WriteRequest: args.WriteRequest}
	_, index, err := a.srv.RaftApply(structs.ACLRolesUpsertRequestType, req)
	if err != nil {
		return err
	}
	ids := keysOf(roles, func(r *structs.ACLRole) string { return r.ID })
	if reply.Roles, err = storedCopies(ids, roleByID(a.srv.State()), structs.ErrACLRoleNotFound); err != nil {
		return err
	}
	reply.Index = index
	return nil
}

// DeleteRoles removes roles by ID; management only. A role that does not
// exist refuses the whole request.
func (a *ACL) DeleteRoles(args *structs.ACLRolesDeleteByIDRequest, reply *structs.GenericResponse) error {
	a.toAuthoritative(&args.WriteRequest)
	if done, err := a.srv.Forward("ACL.DeleteRoles", args, args, reply); done {
		return err
	}
	if err := a.requireManagement(args.AuthToken); err != nil {
		return err
	}
	if len(args.ACLRoleIDs) == 0 {
		return structs.KindErrorf(structs.ErrInvalid, "must specify at least one role")
	}
	if _, err := storedCopies(args.ACLRoleIDs, roleByID(a.srv.State()), structs.ErrACLRoleNotFound); err != nil {
		return err
	}
	req := &structs.ACLRolesDeleteByIDRequest{ACLRoleIDs: args.ACLRoleIDs, WriteRequest: args.WriteRequest}
	_, index, err := a.srv.RaftApply(structs.ACLRolesDeleteRequestType, req)
	if err != nil {
		return err
	}
	reply.Index = index
	return nil
}

// ListRoles lists the roles whose IDs start with the prefix: all of them
// for a management token, those the caller's token links to otherwise.
func (a *ACL) ListRoles(args *structs.ACLRolesListRequest, reply *structs.ACLRolesListResponse) error {
	if done, err := a.srv.Forward("ACL.ListRoles", args, args, reply); done {
		return err
	}
	if err := a.enabled(); err != nil {
		return err
	}
	return flooredBlockingQuery(a.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		tok, err := a.caller(store, args.AuthToken)
		if err != nil {
			return 0, err
		}
		roles, err := store.ACLRoles(ws, args.Prefix)
		if err != nil {
			return 0, err
		}
		reply.ACLRoles = make([]*structs.ACLRoleListStub, 0, len(roles))
		for _, r := range roles {
			if tok.IsManagement() || tok.HasRole(r.ID) {
				reply.ACLRoles = append(reply.ACLRoles, r.Stub())
			}
		}
		return store.Index(state.TableACLRoles)
	})
}

// GetRole reads one role by ID: for a management token or a token linked
// to it. ACLRole is nil when it does not exist.
func (a *ACL) GetRole(args *structs.ACLRoleByIDRequest, reply *structs.ACLRoleByIDResponse) error {
	if done, err := a.srv.Forward("ACL.GetRole", args, args, reply); done {
		return err
	}
	return a.getRole(&args.QueryOptions, reply, func(ws memdb.WatchSet, store *state.StateStore) (*structs.ACLRole, error) {
		return store.ACLRoleByID(ws, args.RoleID)
	})
}

// GetRoleByName reads one role by name, by the same rule as GetRole.
func (a *ACL) GetRoleByName(args *structs.ACLRoleByNameRequest, reply *structs.ACLRoleByIDResponse) error {
	if done, err := a.srv.Forward("ACL.GetRoleByName", args, args, reply); done {
		return err
	}
	return a.getRole(&args.QueryOptions, reply, func(ws memdb.WatchSet, store *state.StateStore) (*structs.ACLRole, error) {
		return store.ACLRoleByName(ws, args.RoleName)
	})
}

func (a *ACL) getRole(opts *structs.QueryOptions, reply *structs.ACLRoleByIDResponse,
	lookup func(memdb.WatchSet, *state.StateStore) (*structs.ACLRole, error)) error {
	if err := a.enabled(); err != nil {
		return err
	}
	return flooredBlockingQuery(a.srv, opts, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		tok, err := a.caller(store, opts.AuthToken)
		if err != nil {
			return 0, err
		}
		r, err := lookup(ws, store)
		if err != nil {
			return 0, err
		}
		if !tok.IsManagement() && (r == nil || !tok.HasRole(r.ID)) {
			return 0, structs.ErrPermissionDenied
		}
		reply.ACLRole = r.Copy()
		if r != nil {
			return r.ModifyIndex, nil
		}
		return store.Index(state.TableACLRoles)
	})
}
