package endpoints

import (
	"slices"
	"strings"

	"github.com/hashicorp/go-memdb"

	"github.com/opennomad/nomad/acl"
	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// Usage answers, per node, what its live allocations reserve: the sums
// of the node list's fill bars and, when asked, the allocations the
// topology draws. It is computed from one state snapshot and blocks on
// the allocations table. The rule asks node read; the allocations are
// those of the namespaces in which the token may read jobs, so a token
// sees neither the jobs nor the share of other namespaces.
func (n *Node) Usage(args *structs.NodeUsageRequest, reply *structs.NodeUsageResponse) error {
	if done, err := n.srv.Forward("Node.Usage", args, args, reply); done {
		return err
	}
	aclObj, err := n.srv.ResolveACL(args.AuthToken)
	if err != nil {
		return err
	}
	return blockingQuery(n.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		allocs, err := store.Allocs(ws, structs.AllNamespaces)
		if err != nil {
			return 0, err
		}
		reply.Nodes = nodeUsage(allocs, readJobIn(aclObj), args.Allocs)
		return store.Index(state.TableAllocs)
	})
}

// readJobIn returns whether a may read the jobs of a namespace, asking
// the ACL once per namespace.
func readJobIn(a *acl.ACL) func(ns string) bool {
	seen := map[string]bool{}
	return func(ns string) bool {
		ok, known := seen[ns]
		if !known {
			ok = a.AllowNsOpAny(ns, acl.NamespaceCapabilityReadJob)
			seen[ns] = ok
		}
		return ok
	}
}

// nodeUsage sums the live allocations that readable lets through, by
// node, in node ID order; withAllocs keeps each allocation's share too,
// in the order of allocs (the state store's is by ID).
func nodeUsage(allocs []*structs.Allocation, readable func(ns string) bool, withAllocs bool) []*structs.NodeUsage {
	byNode := map[string]*structs.NodeUsage{}
	for _, a := range allocs {
		if a.NodeID == "" || a.TerminalStatus() || !readable(a.Namespace) {
			continue
		}
		u := byNode[a.NodeID]
		if u == nil {
			u = &structs.NodeUsage{NodeID: a.NodeID}
			byNode[a.NodeID] = u
		}
		r := a.ComparableResources()
		u.CPU += r.Flattened.Cpu.CpuShares
		u.MemoryMB += r.Flattened.Memory.MemoryMB
		u.DiskMB += r.Shared.DiskMB
		u.AllocCount++
		if withAllocs {
			u.Allocs = append(u.Allocs, &structs.AllocUsage{ID: a.ID, JobID: a.JobID, Namespace: a.Namespace,
				TaskGroup: a.TaskGroup, CPU: r.Flattened.Cpu.CpuShares, MemoryMB: r.Flattened.Memory.MemoryMB})
		}
	}
	out := make([]*structs.NodeUsage, 0, len(byNode))
	for _, u := range byNode {
		out = append(out, u)
	}
	slices.SortFunc(out, func(x, y *structs.NodeUsage) int { return strings.Compare(x.NodeID, y.NodeID) })
	return out
}
