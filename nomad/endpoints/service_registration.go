package endpoints

import (
	"errors"
	"slices"

	"github.com/hashicorp/go-memdb"

	"github.com/opennomad/nomad/acl"
	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// ServiceRegistration serves the ServiceRegistration.* RPCs: the catalog
// of native (provider "nomad") services. Client nodes write their allocs'
// registrations with their node secret; users read them with read-job in
// the namespace, and may remove a stale one.
type ServiceRegistration struct {
	srv Server
}

// serviceRegistrationRules: reads need read-job in the namespace ("*":
// the list keeps the namespaces the token may read). Writes authorize
// themselves, since the caller may be a client node, known by its
// secret rather than by an ACL token.
var serviceRegistrationRules = Rules{
	"Upsert":           Self("a client node's secret; the node registers only its own allocs' services"),
	"DeleteByID":       Self("the owning client node's secret, or submit-job or delete-service-registration in the namespace"),
	"DeleteByAllocIDs": Self("a client node's secret; the node removes only its own allocs' services"),
	"List":             NamespaceAny(acl.NamespaceCapabilityReadJob),
	"GetService":       NamespaceAny(acl.NamespaceCapabilityReadJob),
	"ListByJob":        NamespaceAny(acl.NamespaceCapabilityReadJob),
	// The allocation's namespace, not the request's, decides.
	"ListByAlloc": Self("namespace capability read-job in the allocation's namespace"),
}

// Upsert writes a client's registrations. The caller's token must be the
// secret of the node every registration names.
func (s *ServiceRegistration) Upsert(args *structs.ServiceRegistrationUpsertRequest, reply *structs.GenericResponse) error {
	if done, err := s.srv.Forward("ServiceRegistration.Upsert", args, args, reply); done {
		return err
	}
	if len(args.Services) == 0 {
		return structs.KindErrorf(structs.ErrInvalid, "must specify at least one service registration")
	}
	node, err := s.srv.State().NodeBySecretID(nil, args.AuthToken)
	if err != nil {
		return err
	}
	if node == nil {
		return structs.ErrPermissionDenied
	}
	for _, r := range args.Services {
		if r == nil {
			return structs.KindErrorf(structs.ErrInvalid, "service registration is nil")
		}
		if r.NodeID != node.ID {
			return structs.ErrPermissionDenied
		}
		if err := r.Validate(); err != nil {
			return structs.KindErrorf(structs.ErrInvalid, "%w", err)
		}
		// A node speaks only for the allocations it runs, and for them
		// only as the servers placed them.
		alloc, err := s.srv.State().AllocByID(nil, r.AllocID)
		if err != nil {
			return err
		}
		if alloc == nil {
			continue // collected meanwhile; the store skips it too
		}
		if alloc.NodeID != node.ID {
			return structs.ErrPermissionDenied
		}
		if alloc.Namespace != r.Namespace || alloc.JobID != r.JobID {
			return structs.KindErrorf(structs.ErrInvalid, "service registration %q: alloc %q is of job %q in namespace %q",
				r.ID, alloc.ID, alloc.JobID, alloc.Namespace)
		}
	}
	req := &structs.ServiceRegistrationUpsertRequest{Services: args.Services, WriteRequest: args.WriteRequest}
	req.AuthToken = ""
	_, index, err := s.srv.RaftApply(structs.ServiceRegistrationUpsertRequestType, req)
	if err != nil {
		return err
	}
	reply.Index = index
	return nil
}

// DeleteByID removes one registration of the request's namespace, for
// the node that made it or a token that may remove it.
func (s *ServiceRegistration) DeleteByID(args *structs.ServiceRegistrationDeleteByIDRequest, reply *structs.GenericResponse) error {
	if done, err := s.srv.Forward("ServiceRegistration.DeleteByID", args, args, reply); done {
		return err
	}
	if args.ID == "" {
		return structs.KindErrorf(structs.ErrInvalid, "missing service id")
	}
	ns := args.RequestNamespace()
	store := s.srv.State()
	reg, err := store.ServiceRegistrationByID(nil, ns, args.ID)
	if err != nil {
		return err
	}
	node, err := store.NodeBySecretID(nil, args.AuthToken)
	if err != nil {
		return err
	}
	switch {
	case node != nil:
		if reg != nil && reg.NodeID != node.ID {
			return structs.ErrPermissionDenied
		}
	default:
		aclObj, err := s.srv.ResolveACL(args.AuthToken)
		if err != nil {
			return err
		}
		if !aclObj.AllowNsOpAny(ns, acl.NamespaceCapabilitySubmitJob, acl.NamespaceCapabilityDeleteServiceRegistration) {
			return structs.ErrPermissionDenied
		}
	}
	if reg == nil {
		return structs.KindErrorf(structs.ErrNotFound, "service registration not found")
	}
	req := &structs.ServiceRegistrationDeleteByIDRequest{ID: args.ID, WriteRequest: args.WriteRequest}
	req.Namespace, req.AuthToken = ns, ""
	_, index, err := s.srv.RaftApply(structs.ServiceRegistrationDeleteByIDRequestType, req)
	if err != nil {
		return err
	}
	reply.Index = index
	return nil
}

// DeleteByAllocIDs removes every registration of the allocs, for the
// client node they were placed on: one Raft entry when an alloc stops,
// however many services it had.
func (s *ServiceRegistration) DeleteByAllocIDs(args *structs.ServiceRegistrationDeleteByAllocIDsRequest, reply *structs.GenericResponse) error {
	if done, err := s.srv.Forward("ServiceRegistration.DeleteByAllocIDs", args, args, reply); done {
		return err
	}
	if len(args.AllocIDs) == 0 {
		return structs.KindErrorf(structs.ErrInvalid, "must specify at least one allocation")
	}
	store := s.srv.State()
	node, err := store.NodeBySecretID(nil, args.AuthToken)
	if err != nil {
		return err
	}
	if node == nil {
		return structs.ErrPermissionDenied
	}
	for _, id := range args.AllocIDs {
		alloc, err := store.AllocByID(nil, id)
		if err != nil {
			return err
		}
		if alloc != nil && alloc.NodeID != node.ID {
			return structs.ErrPermissionDenied
		}
		regs, err := store.ServiceRegistrationsByAllocID(nil, id)
		if err != nil {
			return err
		}
		for _, r := range regs {
			if r.NodeID != node.ID {
				return structs.ErrPermissionDenied
			}
		}
	}
	req := &structs.ServiceRegistrationDeleteByAllocIDsRequest{AllocIDs: args.AllocIDs, WriteRequest: args.WriteRequest}
	req.AuthToken = ""
	_, index, err := s.srv.RaftApply(structs.ServiceRegistrationDeleteByAllocIDsRequestType, req)
	if err != nil {
		return err
	}
	reply.Index = index
	return nil
}

// List answers the service names of the request's namespace with the
// union of their instances' tags; for "*", one entry per namespace the
// token may read jobs in, by namespace.
func (s *ServiceRegistration) List(args *structs.ServiceRegistrationListRequest, reply *structs.ServiceRegistrationListResponse) error {
	if done, err := s.srv.Forward("ServiceRegistration.List", args, args, reply); done {
		return err
	}
	ns := args.RequestNamespace()
	aclObj, err := s.srv.ResolveACL(args.AuthToken)
	if err != nil {
		return err
	}
	return blockingQuery(s.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		regs, err := store.ServiceRegistrations(ws, ns)
		if err != nil {
			return 0, err
		}
		reply.Services = listServices(regs, func(ns string) bool {
			return aclObj.AllowNsOpAny(ns, acl.NamespaceCapabilityReadJob)
		})
		return serviceIndex(store)
	})
}

// listServices groups registrations (sorted by namespace) into one stub
// per namespace that may, each listing its service names in order with
// the sorted union of their tags.
func listServices(regs []*structs.ServiceRegistration, may func(ns string) bool) []*structs.ServiceRegistrationListStub {
	out := []*structs.ServiceRegistrationListStub{}
	var cur *structs.ServiceRegistrationListStub
	byName := map[string]*structs.ServiceRegistrationStub{}
	for _, r := range regs {
		if !may(r.Namespace) {
			continue
		}
		if cur == nil || cur.Namespace != r.Namespace {
			cur = &structs.ServiceRegistrationListStub{Namespace: r.Namespace}
			out = append(out, cur)
			byName = map[string]*structs.ServiceRegistrationStub{}
		}
		stub := byName[r.ServiceName]
		if stub == nil {
			stub = &structs.ServiceRegistrationStub{ServiceName: r.ServiceName, Tags: []string{}}
			byName[r.ServiceName] = stub
			cur.Services = append(cur.Services, stub)
		}
		for _, t := range r.Tags {
			if !slices.Contains(stub.Tags, t) {
				stub.Tags = append(stub.Tags, t)
			}
		}
	}
	for _, l := range out {
		slices.SortFunc(l.Services, func(a, b *structs.ServiceRegistrationStub) int {
			return compareStrings(a.ServiceName, b.ServiceName)
		})
		for _, st := range l.Services {
			slices.Sort(st.Tags)
		}
	}
	return out
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// GetService answers the registrations of one service name in the
// request's namespace (none: an empty list), or, with Choose, the ones
// rendezvous hashing picks for the key.
func (s *ServiceRegistration) GetService(args *structs.ServiceRegistrationByNameRequest, reply *structs.ServiceRegistrationByNameResponse) error {
	if done, err := s.srv.Forward("ServiceRegistration.GetService", args, args, reply); done {
		return err
	}
	ns := args.RequestNamespace()
	if args.Choose != "" {
		if _, _, err := parseChoose(args.Choose); err != nil {
			return err
		}
	}
	return blockingQuery(s.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		regs, err := store.ServiceRegistrationsByName(ws, ns, args.ServiceName)
		if err != nil {
			return 0, err
		}
		if args.Choose != "" {
			regs, err = chooseServices(regs, args.Choose)
			if err != nil {
				return 0, err
			}
		}
		reply.Services = copyRegistrations(regs)
		return serviceIndex(store)
	})
}

// serviceIndex is the registrations table's index, at least 1 so that a
// blocking query on an empty catalog waits instead of spinning.
func serviceIndex(store *state.StateStore) (uint64, error) {
	idx, err := store.Index(state.TableServiceRegistrations)
	if err != nil {
		return 0, err
	}
	return max(idx, 1), nil
}

// ListByJob answers the registrations of one job of the request's
// namespace; Services is nil when the job does not exist.
func (s *ServiceRegistration) ListByJob(args *structs.ServiceRegistrationsByJobRequest, reply *structs.ServiceRegistrationsResponse) error {
	if done, err := s.srv.Forward("ServiceRegistration.ListByJob", args, args, reply); done {
		return err
	}
	ns := args.RequestNamespace()
	return blockingQuery(s.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		reply.Services = nil
		job, err := store.JobByID(ws, ns, args.JobID)
		if err != nil || job == nil {
			idx, ierr := serviceIndex(store)
			return idx, errors.Join(err, ierr)
		}
		regs, err := store.ServiceRegistrationsByJobID(ws, ns, args.JobID)
		if err != nil {
			return 0, err
		}
		reply.Services = copyRegistrations(regs)
		return serviceIndex(store)
	})
}

// ListByAlloc answers the registrations of one allocation, for a token
// that may read jobs in its namespace; Services is nil when the
// allocation does not exist.
func (s *ServiceRegistration) ListByAlloc(args *structs.ServiceRegistrationsByAllocRequest, reply *structs.ServiceRegistrationsResponse) error {
	if done, err := s.srv.Forward("ServiceRegistration.ListByAlloc", args, args, reply); done {
		return err
	}
	aclObj, err := s.srv.ResolveACL(args.AuthToken)
	if err != nil {
		return err
	}
	return blockingQuery(s.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		reply.Services = nil
		alloc, err := store.AllocByID(ws, args.AllocID)
		if err != nil {
			return 0, err
		}
		// An unknown allocation is judged in the request's namespace, so
		// that the answer tells nothing to a token that may not look.
		ns := args.RequestNamespace()
		if alloc != nil {
			ns = alloc.Namespace
		}
		if !aclObj.AllowNsOpAny(ns, acl.NamespaceCapabilityReadJob) {
			return 0, structs.ErrPermissionDenied
		}
		if alloc == nil {
			return serviceIndex(store)
		}
		regs, err := store.ServiceRegistrationsByAllocID(ws, args.AllocID)
		if err != nil {
			return 0, err
		}
		reply.Services = copyRegistrations(regs)
		return serviceIndex(store)
	})
}

func copyRegistrations(regs []*structs.ServiceRegistration) []*structs.ServiceRegistration {
	out := make([]*structs.ServiceRegistration, 0, len(regs))
	for _, r := range regs {
		out = append(out, r.Copy())
	}
	return out
}
