package endpoints

import (
	"fmt"
	"time"

	"github.com/hashicorp/go-memdb"
	"github.com/hashicorp/go-metrics"

	"github.com/opennomad/nomad/acl"
	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// Alloc serves the Alloc.* RPCs.
type Alloc struct {
	srv Server
}

// allocRules says what each Alloc.* method needs of the caller's token.
var allocRules = Rules{
	"GetAlloc":  NamespaceAny(acl.NamespaceCapabilityReadJob),
	"GetAllocs": Self("a client node's secret (its own allocations), or namespace capability read-job"),
	"List":      NamespaceAny(acl.NamespaceCapabilityReadJob),
	"Stop":      NamespaceAny(acl.NamespaceCapabilityAllocLifecycle),
}

// GetAlloc returns an alloc, nil when unknown.
func (a *Alloc) GetAlloc(args *structs.AllocSpecificRequest, reply *structs.SingleAllocResponse) error {
	if done, err := a.srv.Forward("Alloc.GetAlloc", args, args, reply); done {
		return err
	}
	return blockingQuery(a.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		alloc, err := store.AllocByID(ws, args.AllocID)
		if err != nil {
			return 0, err
		}
		reply.Alloc = alloc
		if alloc != nil {
			return alloc.ModifyIndex, nil
		}
		return store.Index(state.TableAllocs)
	})
}

// GetAllocs returns the named allocs that exist; clients fetch the allocs
// that changed with it.
func (a *Alloc) GetAllocs(args *structs.AllocsGetRequest, reply *structs.AllocsGetResponse) error {
	if done, err := a.srv.Forward("Alloc.GetAllocs", args, args, reply); done {
		return err
	}
	may, err := a.allocReader(args.AuthToken)
	if err != nil {
		return err
	}
	return blockingQuery(a.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		allocs := make([]*structs.Allocation, 0, len(args.AllocIDs))
		for _, id := range args.AllocIDs {
			alloc, err := store.AllocByID(ws, id)
			if err != nil {
				return 0, err
			}
			if alloc == nil {
				continue
			}
			if !may(alloc) {
				return 0, structs.ErrPermissionDenied
			}
			allocs = append(allocs, alloc)
		}
		reply.Allocs = allocs
		return allocsIndex(store, allocs)
	})
}

// allocReader says which allocations the caller with secret may read: a
// client node (by its secret ID, which clients send as their token) its
// own, anyone else those of the namespaces where its token may read jobs.
// Clients fetch their allocations this way, so with ACLs on they need no
// ACL token, as in Nomad.
func (a *Alloc) allocReader(secret string) (func(*structs.Allocation) bool, error) {
	if secret != "" {
		node, err := a.srv.State().NodeBySecretID(nil, secret)
		if err != nil {
			return nil, err
		}
		if node != nil {
			return func(al *structs.Allocation) bool { return al.NodeID == node.ID }, nil
		}
	}
	aclObj, err := a.srv.ResolveACL(secret)
	if err != nil {
		return nil, err
	}
	return func(al *structs.Allocation) bool {
		return aclObj.AllowNsOpAny(al.Namespace, acl.NamespaceCapabilityReadJob)
	}, nil
}

// List returns the stubs of the allocs of a namespace ("*" for all) whose
// ID starts with Prefix.
func (a *Alloc) List(args *structs.AllocListRequest, reply *structs.AllocListResponse) error {
	if done, err := a.srv.Forward("Alloc.List", args, args, reply); done {
		return err
	}
	ns := args.RequestNamespace()
	filter, err := newListFilter(args.Filter)
	if err != nil {
		return err
	}
	return blockingQuery(a.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		allocs, err := store.AllocsByIDPrefix(ws, ns, args.Prefix)
		if err != nil {
			return 0, err
		}
		stubs := make([]*structs.AllocListStub, 0, len(allocs))
		for _, alloc := range allocs {
			keep, err := filter.match(alloc)
			if err != nil {
				return 0, err
			}
			if !keep {
				continue
			}
			stub := alloc.Stub()
			if f := args.Fields; f != nil {
				if f.Resources {
					stub.AllocatedResources = alloc.AllocatedResources
				}
				if !f.TaskStates {
					stub.TaskStates = nil
				}
			}
			stubs = append(stubs, stub)
		}
		reply.Allocations = stubs
		return store.Index(state.TableAllocs)
	})
}

// Stop stops one alloc so that it is replaced: it is marked to migrate
// and an alloc-stop eval of its job acts on that, in one Raft entry.
func (a *Alloc) Stop(args *structs.AllocStopRequest, reply *structs.AllocStopResponse) error {
	if done, err := a.srv.Forward("Alloc.Stop", args, args, reply); done {
		return err
	}
	defer metrics.MeasureSince([]string{"nomad", "alloc", "stop"}, time.Now())
	if args.AllocID == "" {
		return &structs.ValidationError{Problems: []string{"missing alloc ID"}}
	}
	store := a.srv.State()
	alloc, err := store.AllocByID(nil, args.AllocID)
	if err != nil {
		return err
	}
	if alloc == nil {
		return fmt.Errorf("alloc %q: %w", args.AllocID, structs.ErrUnknownAlloc)
	}
	job, err := store.JobByID(nil, alloc.Namespace, alloc.JobID)
	if err != nil {
		return err
	}
	if job == nil {
		job = alloc.Job
	}
	if job == nil {
		return fmt.Errorf("alloc %q: its job %q: %w", alloc.ID, alloc.JobID, structs.ErrUnknownJob)
	}
	eval := newJobEval(job, structs.EvalTriggerAllocStop, 0, a.srv.Clock().Now())
	yes, noDelay := true, args.NoShutdownDelay
	transition := &structs.DesiredTransition{Migrate: &yes, NoShutdownDelay: &noDelay}
	if args.Reschedule {
		transition.Reschedule = &yes
	}
	req := &structs.AllocUpdateDesiredTransitionRequest{
		Allocs: map[string]*structs.DesiredTransition{alloc.ID: transition},
		Evals:  []*structs.Evaluation{eval},
	}
	_, index, err := a.srv.RaftApply(structs.AllocUpdateDesiredTransitionRequestType, req)
	if err != nil {
		return err
	}
	reply.EvalID = eval.ID
	reply.Index = index
	return nil
}
