package endpoints

import (
	"fmt"

	"github.com/hashicorp/go-memdb"

	"github.com/opennomad/nomad/acl"
	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// NodePool serves the NodePool.* RPCs. Every method authorizes itself
// against the node_pool rules for the pools it names: read to see a pool
// (lists are filtered), write to create or change one, delete to remove
// one. Listing a pool's nodes also needs node read, and its jobs
// list-jobs in their namespace.
type NodePool struct {
	srv Server
}

// nodePoolRules: the pool a request concerns is the one it names, not
// the request's namespace, so every method checks its token itself.
var nodePoolRules = Rules{
	"List":            Self("any token; lists the node pools it may read"),
	"GetNodePool":     Self("node pool read on the pool"),
	"UpsertNodePools": Self("node pool write on every pool written"),
	"DeleteNodePools": Self("node pool delete on every pool removed"),
	"ListJobs":        Self("node pool read on the pool, and list-jobs in the jobs' namespaces (filtered)"),
	"ListNodes":       Self("node pool read on the pool, and node read"),
}

// UpsertNodePools writes pools, all or none. The built-in pools cannot be
// changed.
func (n *NodePool) UpsertNodePools(args *structs.NodePoolUpsertRequest, reply *structs.GenericResponse) error {
	if done, err := n.srv.Forward("NodePool.UpsertNodePools", args, args, reply); done {
		return err
	}
	aclObj, err := n.srv.ResolveACL(args.AuthToken)
	if err != nil {
		return err
	}
	for _, p := range args.NodePools {
		if p != nil && !aclObj.AllowNodePoolOperation(p.Name, acl.NodePoolCapabilityWrite) {
			return structs.ErrPermissionDenied
		}
	}
	if len(args.NodePools) == 0 {
		return structs.KindErrorf(structs.ErrInvalid, "must specify at least one node pool")
	}
	pools := make([]*structs.NodePool, 0, len(args.NodePools))
	for _, p := range args.NodePools {
		if p == nil {
			return structs.KindErrorf(structs.ErrInvalid, "node pool is nil")
		}
		if err := p.Validate(); err != nil {
			return structs.KindErrorf(structs.ErrInvalid, "invalid node pool %q: %w", p.Name, err)
		}
		if structs.IsBuiltInNodePool(p.Name) {
			return structs.KindErrorf(structs.ErrInvalid, "modifying node pool %q is not allowed", p.Name)
		}
		p = p.Copy()
		p.Canonicalize()
		pools = append(pools, p)
	}
	req := &structs.NodePoolUpsertRequest{NodePools: pools, WriteRequest: args.WriteRequest}
	_, index, err := n.srv.RaftApply(structs.NodePoolUpsertRequestType, req)
	if err != nil {
		return err
	}
	reply.Index = index
	return nil
}

// DeleteNodePools removes pools, all or none: never a built-in pool, nor
// one that still has nodes or jobs that are not dead.
func (n *NodePool) DeleteNodePools(args *structs.NodePoolDeleteRequest, reply *structs.GenericResponse) error {
	if done, err := n.srv.Forward("NodePool.DeleteNodePools", args, args, reply); done {
		return err
	}
	aclObj, err := n.srv.ResolveACL(args.AuthToken)
	if err != nil {
		return err
	}
	for _, name := range args.Names {
		if !aclObj.AllowNodePoolOperation(name, acl.NodePoolCapabilityDelete) {
			return structs.ErrPermissionDenied
		}
	}
	if len(args.Names) == 0 {
		return structs.KindErrorf(structs.ErrInvalid, "must specify at least one node pool to delete")
	}
	store := n.srv.State()
	for _, name := range args.Names {
		if structs.IsBuiltInNodePool(name) {
			return structs.KindErrorf(structs.ErrInvalid, "deleting node pool %q is not allowed", name)
		}
		p, err := store.NodePoolByName(nil, name)
		if err != nil {
			return err
		}
		if p == nil {
			return fmt.Errorf("node pool %q: %w", name, structs.ErrNodePoolNotFound)
		}
		inUse, err := store.NodePoolInUse(name)
		if err != nil {
			return err
		}
		if inUse != "" {
			return structs.KindErrorf(structs.ErrInvalid, "node pool %q has %s in regions: [%s]",
				name, inUse, n.srv.Settings().Region)
		}
	}
	req := &structs.NodePoolDeleteRequest{Names: args.Names, WriteRequest: args.WriteRequest}
	_, index, err := n.srv.RaftApply(structs.NodePoolDeleteRequestType, req)
	if err != nil {
		return err
	}
	reply.Index = index
	return nil
}

// List lists the pools whose names start with the prefix and that the
// caller's token may read, by name.
func (n *NodePool) List(args *structs.NodePoolListRequest, reply *structs.NodePoolListResponse) error {
	if done, err := n.srv.Forward("NodePool.List", args, args, reply); done {
		return err
	}
	aclObj, err := n.srv.ResolveACL(args.AuthToken)
	if err != nil {
		return err
	}
	return blockingQuery(n.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		all, err := store.NodePools(ws, args.Prefix)
		if err != nil {
			return 0, err
		}
		reply.NodePools = make([]*structs.NodePool, 0, len(all))
		for _, p := range all {
			if aclObj.AllowNodePoolOperation(p.Name, acl.NodePoolCapabilityRead) {
				reply.NodePools = append(reply.NodePools, p.Copy())
			}
		}
		return nodePoolsIndex(store)
	})
}

// GetNodePool reads one pool, for a token that may read it. NodePool is
// nil when it does not exist.
func (n *NodePool) GetNodePool(args *structs.NodePoolSpecificRequest, reply *structs.SingleNodePoolResponse) error {
	if done, err := n.srv.Forward("NodePool.GetNodePool", args, args, reply); done {
		return err
	}
	if err := n.allowPool(args.AuthToken, args.Name); err != nil {
		return err
	}
	return blockingQuery(n.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		p, err := store.NodePoolByName(ws, args.Name)
		if err != nil {
			return 0, err
		}
		reply.NodePool = p.Copy()
		if p != nil {
			return p.ModifyIndex, nil
		}
		return nodePoolsIndex(store)
	})
}

// ListNodes lists the stubs of a pool's nodes ("all": every node), for a
// token with node read that may read the pool. A pool that does not
// exist has no nodes.
func (n *NodePool) ListNodes(args *structs.NodePoolNodesRequest, reply *structs.NodePoolNodesResponse) error {
	if done, err := n.srv.Forward("NodePool.ListNodes", args, args, reply); done {
		return err
	}
	aclObj, err := n.srv.ResolveACL(args.AuthToken)
	if err != nil {
		return err
	}
	if !aclObj.AllowNodeRead() || !aclObj.AllowNodePoolOperation(args.Name, acl.NodePoolCapabilityRead) {
		return structs.ErrPermissionDenied
	}
	return blockingQuery(n.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		var nodes []*structs.Node
		var err error
		switch args.Name {
		case structs.NodePoolAll:
			nodes, err = store.Nodes(ws)
		case structs.NodePoolDefault:
			// Nodes stored before pools existed have none: they are in
			// the default pool.
			nodes, err = store.Nodes(ws)
			nodes = keepNodes(nodes, func(node *structs.Node) bool {
				return node.NodePool == "" || node.NodePool == structs.NodePoolDefault
			})
		default:
			nodes, err = store.NodesByNodePool(ws, args.Name)
		}
		if err != nil {
			return 0, err
		}
		reply.Nodes = make([]*structs.NodeListStub, 0, len(nodes))
		for _, node := range nodes {
			reply.Nodes = append(reply.Nodes, nodeStub(node, args.Fields))
		}
		return store.Index(state.TableNodes)
	})
}

func keepNodes(nodes []*structs.Node, keep func(*structs.Node) bool) []*structs.Node {
	out := nodes[:0:0]
	for _, n := range nodes {
		if keep(n) {
			out = append(out, n)
		}
	}
	return out
}

// ListJobs lists the stubs of a pool's jobs in the request's namespace
// ("*": in every namespace whose jobs the token may list), for a token
// that may read the pool.
func (n *NodePool) ListJobs(args *structs.NodePoolJobsRequest, reply *structs.NodePoolJobsResponse) error {
	if done, err := n.srv.Forward("NodePool.ListJobs", args, args, reply); done {
		return err
	}
	aclObj, err := n.srv.ResolveACL(args.AuthToken)
	if err != nil {
		return err
	}
	ns := args.RequestNamespace()
	if !aclObj.AllowNodePoolOperation(args.Name, acl.NodePoolCapabilityRead) ||
		!aclObj.AllowNsOpAny(ns, acl.NamespaceCapabilityListJobs) {
		return structs.ErrPermissionDenied
	}
	return blockingQuery(n.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		jobs, err := store.JobsByNodePool(ws, ns, args.Name)
		if err != nil {
			return 0, err
		}
		reply.Jobs = make([]*structs.JobListStub, 0, len(jobs))
		for _, job := range jobs {
			if !aclObj.AllowNamespaceOperation(job.Namespace, acl.NamespaceCapabilityListJobs) {
				continue
			}
			summary, err := store.JobSummaryByID(ws, job.Namespace, job.ID)
			if err != nil {
				return 0, err
			}
			stub := job.Stub(summary)
			if args.Fields != nil && args.Fields.Meta {
				stub.Meta = job.Meta
			}
			reply.Jobs = append(reply.Jobs, stub)
		}
		return maxTableIndex(store, state.TableJobs, state.TableJobSummary)
	})
}

// allowPool refuses a token that may not read the pool.
func (n *NodePool) allowPool(secret, pool string) error {
	aclObj, err := n.srv.ResolveACL(secret)
	if err != nil {
		return err
	}
	if !aclObj.AllowNodePoolOperation(pool, acl.NodePoolCapabilityRead) {
		return structs.ErrPermissionDenied
	}
	return nil
}

// nodePoolsIndex is the node pools table's index, and 1 before the first
// write, as Nomad answers (its built-in pools are written at index 1).
func nodePoolsIndex(store *state.StateStore) (uint64, error) {
	index, err := store.Index(state.TableNodePools)
	if err != nil || index > 0 {
		return index, err
	}
	return 1, nil
}

// checkJobNodePool refuses a job whose node pool does not exist, in
// Nomad's words. "all" always exists.
func checkJobNodePool(store interface {
	NodePoolByName(memdb.WatchSet, string) (*structs.NodePool, error)
}, job *structs.Job) error {
	pool := job.NodePool
	if pool == "" {
		pool = structs.NodePoolDefault
	}
	p, err := store.NodePoolByName(nil, pool)
	if err != nil {
		return err
	}
	if p == nil && pool != structs.NodePoolAll {
		return structs.KindErrorf(structs.ErrInvalid, "job %q is in nonexistent node pool %q", job.ID, pool)
	}
	return nil
}
