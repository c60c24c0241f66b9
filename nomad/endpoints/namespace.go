package endpoints

import (
	"fmt"

	"github.com/hashicorp/go-memdb"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// Namespace serves the Namespace.* RPCs. Writes are for management
// tokens; a token reads the namespaces it may use (holds any capability
// in), and lists are filtered to them.
type Namespace struct {
	srv Server
}

// namespaceRules: writes need a management token; reads authorize
// themselves, since the namespace they concern is the one named (or
// listed), not the request's.
var namespaceRules = Rules{
	"UpsertNamespaces": Management(),
	"DeleteNamespaces": Management(),
	"ListNamespaces":   Self("any token; lists the namespaces it may use"),
	"GetNamespace":     Self("a token that may use the namespace"),
	"GetNamespaces":    Self("a token that may use every namespace named"),
}

// UpsertNamespaces writes namespaces, all or none.
func (n *Namespace) UpsertNamespaces(args *structs.NamespaceUpsertRequest, reply *structs.GenericResponse) error {
	if done, err := n.srv.Forward("Namespace.UpsertNamespaces", args, args, reply); done {
		return err
	}
	if len(args.Namespaces) == 0 {
		return structs.KindErrorf(structs.ErrInvalid, "must specify at least one namespace")
	}
	for _, ns := range args.Namespaces {
		if ns == nil {
			return structs.KindErrorf(structs.ErrInvalid, "namespace is nil")
		}
		if err := ns.Validate(); err != nil {
			return structs.KindErrorf(structs.ErrInvalid, "Invalid namespace %q: %w", ns.Name, err)
		}
	}
	req := &structs.NamespaceUpsertRequest{Namespaces: args.Namespaces, WriteRequest: args.WriteRequest}
	_, index, err := n.srv.RaftApply(structs.NamespaceUpsertRequestType, req)
	if err != nil {
		return err
	}
	reply.Index = index
	return nil
}

// DeleteNamespaces removes namespaces, all or none: never the default
// namespace, nor one that still has jobs that are not dead or
// allocations that are not client-terminal.
func (n *Namespace) DeleteNamespaces(args *structs.NamespaceDeleteRequest, reply *structs.GenericResponse) error {
	if done, err := n.srv.Forward("Namespace.DeleteNamespaces", args, args, reply); done {
		return err
	}
	if len(args.Namespaces) == 0 {
		return structs.KindErrorf(structs.ErrInvalid, "must specify at least one namespace to delete")
	}
	store := n.srv.State()
	for _, name := range args.Namespaces {
		if name == structs.DefaultNamespace {
			return structs.KindErrorf(structs.ErrInvalid, "can not delete default namespace")
		}
		ns, err := store.NamespaceByName(nil, name)
		if err != nil {
			return err
		}
		if ns == nil {
			return fmt.Errorf("namespace %q: %w", name, structs.ErrNamespaceNotFound)
		}
		inUse, err := store.NamespaceInUse(name)
		if err != nil {
			return err
		}
		if inUse != "" {
			return structs.KindErrorf(structs.ErrInvalid, "namespace %q has %s in regions: [%s]",
				name, inUse, n.srv.Settings().Region)
		}
	}
	req := &structs.NamespaceDeleteRequest{Namespaces: args.Namespaces, WriteRequest: args.WriteRequest}
	_, index, err := n.srv.RaftApply(structs.NamespaceDeleteRequestType, req)
	if err != nil {
		return err
	}
	reply.Index = index
	return nil
}

// ListNamespaces lists the namespaces whose names start with the prefix
// and that the caller's token may use, by name.
func (n *Namespace) ListNamespaces(args *structs.NamespaceListRequest, reply *structs.NamespaceListResponse) error {
	if done, err := n.srv.Forward("Namespace.ListNamespaces", args, args, reply); done {
		return err
	}
	aclObj, err := n.srv.ResolveACL(args.AuthToken)
	if err != nil {
		return err
	}
	return blockingQuery(n.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		all, err := store.Namespaces(ws, args.Prefix)
		if err != nil {
			return 0, err
		}
		reply.Namespaces = make([]*structs.Namespace, 0, len(all))
		for _, ns := range all {
			if aclObj.AllowNamespace(ns.Name) {
				reply.Namespaces = append(reply.Namespaces, ns.Copy())
			}
		}
		return indexAtLeastOne(store)
	})
}

// GetNamespace reads one namespace, for a token that may use it.
// Namespace is nil when it does not exist.
func (n *Namespace) GetNamespace(args *structs.NamespaceSpecificRequest, reply *structs.SingleNamespaceResponse) error {
	if done, err := n.srv.Forward("Namespace.GetNamespace", args, args, reply); done {
		return err
	}
	aclObj, err := n.srv.ResolveACL(args.AuthToken)
	if err != nil {
		return err
	}
	if !aclObj.AllowNamespace(args.Name) {
		return structs.ErrPermissionDenied
	}
	return blockingQuery(n.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		ns, err := store.NamespaceByName(ws, args.Name)
		if err != nil {
			return 0, err
		}
		reply.Namespace = ns.Copy()
		if ns != nil {
			return ns.ModifyIndex, nil
		}
		return indexAtLeastOne(store)
	})
}

// GetNamespaces reads several namespaces, for a token that may use every
// one of them; names that do not exist are left out.
func (n *Namespace) GetNamespaces(args *structs.NamespaceSetRequest, reply *structs.NamespaceSetResponse) error {
	if done, err := n.srv.Forward("Namespace.GetNamespaces", args, args, reply); done {
		return err
	}
	aclObj, err := n.srv.ResolveACL(args.AuthToken)
	if err != nil {
		return err
	}
	for _, name := range args.Namespaces {
		if !aclObj.AllowNamespace(name) {
			return structs.ErrPermissionDenied
		}
	}
	return blockingQuery(n.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		reply.Namespaces = make(map[string]*structs.Namespace, len(args.Namespaces))
		for _, name := range args.Namespaces {
			ns, err := store.NamespaceByName(ws, name)
			if err != nil {
				return 0, err
			}
			if ns != nil {
				reply.Namespaces[name] = ns.Copy()
			}
		}
		return indexAtLeastOne(store)
	})
}

// indexAtLeastOne is the namespaces table's index, and 1 before the first
// write, as Nomad answers (its default namespace is written at index 1).
func indexAtLeastOne(store *state.StateStore) (uint64, error) {
	index, err := store.Index(state.TableNamespaces)
	if err != nil || index > 0 {
		return index, err
	}
	return 1, nil
}
