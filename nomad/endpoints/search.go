package endpoints

import (
	"fmt"
	"sort"
	"strings"

	"github.com/opennomad/nomad/acl"
	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// Search serves the Search.* RPCs: prefix search of IDs and fuzzy
// search of names, over the objects the caller's token may read.
type Search struct {
	srv Server
}

// searchRules: each search filters its matches by the token, and refuses
// a context the token may not read at all.
var searchRules = Rules{
	"PrefixSearch": Self("read access to the searched context (namespace read-job or host-volume-read, node read, node pool read)"),
	"FuzzySearch":  Self("read access to the searched context (namespace read-job, node read, node pool read)"),
}

// prefixContexts are the contexts of a prefix search, in the order
// "all" searches them.
var prefixContexts = []string{
	structs.SearchContextAllocs, structs.SearchContextDeployments, structs.SearchContextEvals,
	structs.SearchContextJobs, structs.SearchContextNodes, structs.SearchContextNodePools,
	structs.SearchContextNamespaces, structs.SearchContextHostVolumes,
}

// fuzzyContexts are the contexts of a fuzzy search.
var fuzzyContexts = []string{
	structs.SearchContextAllocs, structs.SearchContextJobs, structs.SearchContextGroups,
	structs.SearchContextTasks, structs.SearchContextCommands, structs.SearchContextImages,
	structs.SearchContextNodes, structs.SearchContextNodePools, structs.SearchContextNamespaces,
}

// searchAccess answers what a token may see of a search.
type searchAccess struct {
	acl *acl.ACL
}

func (s searchAccess) readsNamespace(ns string) bool {
	return s.acl.AllowNsOpAny(ns, acl.NamespaceCapabilityReadJob, acl.NamespaceCapabilityListJobs)
}

func (s searchAccess) readsHostVolumes(ns string) bool {
	return s.acl.AllowNsOpAny(ns, acl.NamespaceCapabilityHostVolumeRead)
}

// readsContext reports whether the token may read anything of context in
// namespace ns: a search of one context it may not read is refused.
func (s searchAccess) readsContext(context, ns string) bool {
	switch context {
	case structs.SearchContextNodes:
		return s.acl.AllowNodeRead()
	case structs.SearchContextNodePools, structs.SearchContextNamespaces:
		return true // filtered one by one
	case structs.SearchContextHostVolumes:
		return s.readsHostVolumes(ns)
	}
	return s.readsNamespace(ns)
}

// contextsFor returns the contexts a search of context runs, or an error
// naming the valid ones.
func contextsFor(context string, valid []string, access searchAccess, ns string) ([]string, error) {
	if context == structs.SearchContextAll {
		var out []string
		for _, c := range valid {
			if access.readsContext(c, ns) {
				out = append(out, c)
			}
		}
		return out, nil
	}
	for _, c := range valid {
		if c == context {
			if !access.readsContext(c, ns) {
				return nil, structs.ErrPermissionDenied
			}
			return []string{c}, nil
		}
	}
	return nil, &structs.ValidationError{Problems: []string{fmt.Sprintf(
		"context must be one of %v or 'all' for all contexts; got %q", valid, context)}}
}

// uuidPrefix trims an odd-length ID prefix (hyphens not counted) by one
// character, as Nomad does (its IDs are indexed as bytes), so such a
// search also finds the IDs that match the shorter prefix.
func uuidPrefix(prefix string) string {
	if len(strings.ReplaceAll(prefix, "-", ""))%2 == 1 {
		return prefix[:len(prefix)-1]
	}
	return prefix
}

// PrefixSearch returns, by context, the IDs that begin with Prefix
// (names for node pools and namespaces), at most SearchResultLimit each.
func (s *Search) PrefixSearch(args *structs.SearchRequest, reply *structs.SearchResponse) error {
	if done, err := s.srv.Forward("Search.PrefixSearch", args, args, reply); done {
		return err
	}
	aclObj, err := s.srv.ResolveACL(args.AuthToken)
	if err != nil {
		return err
	}
	access := searchAccess{acl: aclObj}
	ns := args.RequestNamespace()
	contexts, err := contextsFor(args.Context, prefixContexts, access, ns)
	if err != nil {
		return err
	}
	store := s.srv.State()
	reply.Matches = map[string][]string{}
	reply.Truncations = map[string]bool{}
	var index uint64
	for _, c := range contexts {
		ids, table, err := prefixMatches(store, access, c, ns, args.Prefix)
		if err != nil {
			return err
		}
		if len(ids) > structs.SearchResultLimit {
			ids = ids[:structs.SearchResultLimit]
			reply.Truncations[c] = true
		} else {
			reply.Truncations[c] = false
		}
		reply.Matches[c] = ids
		if idx, err := store.Index(table); err != nil {
			return err
		} else if idx > index {
			index = idx
		}
	}
	reply.Index = index
	s.srv.SetQueryMeta(&reply.QueryMeta)
	return nil
}

// prefixMatches returns the readable IDs of one context beginning with
// prefix, and the table they come from.
func prefixMatches(store *state.StateStore, access searchAccess, context, ns, prefix string) ([]string, string, error) {
	switch context {
	case structs.SearchContextJobs:
		jobs, err := store.JobsByIDPrefix(nil, ns, prefix)
		return visibleIDs(jobs, func(j *structs.Job) (string, bool) { return j.ID, access.readsNamespace(j.Namespace) }), state.TableJobs, err
	case structs.SearchContextEvals:
		evals, err := store.EvalsByIDPrefix(nil, ns, uuidPrefix(prefix))
		return visibleIDs(evals, func(e *structs.Evaluation) (string, bool) { return e.ID, access.readsNamespace(e.Namespace) }), state.TableEvals, err
	case structs.SearchContextAllocs:
		allocs, err := store.AllocsByIDPrefix(nil, ns, uuidPrefix(prefix))
		return visibleIDs(allocs, func(a *structs.Allocation) (string, bool) { return a.ID, access.readsNamespace(a.Namespace) }), state.TableAllocs, err
	case structs.SearchContextDeployments:
		deps, err := store.DeploymentsByIDPrefix(nil, ns, uuidPrefix(prefix))
		return visibleIDs(deps, func(d *structs.Deployment) (string, bool) { return d.ID, access.readsNamespace(d.Namespace) }), state.TableDeployment, err
	case structs.SearchContextNodes:
		nodes, err := store.NodesByIDPrefix(nil, uuidPrefix(prefix))
		return visibleIDs(nodes, func(n *structs.Node) (string, bool) { return n.ID, true }), state.TableNodes, err
	case structs.SearchContextNodePools:
		pools, err := store.NodePools(nil, prefix)
		return visibleIDs(pools, func(p *structs.NodePool) (string, bool) {
			return p.Name, access.acl.AllowNodePoolOperation(p.Name, acl.NodePoolCapabilityRead)
		}), state.TableNodePools, err
	case structs.SearchContextHostVolumes:
		vols, err := store.HostVolumes(nil)
		p := uuidPrefix(prefix)
		return visibleIDs(vols, func(v *structs.HostVolume) (string, bool) {
			return v.ID, strings.HasPrefix(v.ID, p) && (ns == "*" || v.Namespace == ns) && access.readsHostVolumes(v.Namespace)
		}), state.TableHostVolumes, err
	case structs.SearchContextNamespaces:
		nss, err := store.Namespaces(nil, prefix)
		return visibleIDs(nss, func(n *structs.Namespace) (string, bool) { return n.Name, access.acl.AllowNamespace(n.Name) }), state.TableNamespaces, err
	}
	return nil, "", fmt.Errorf("search context %q: %w", context, structs.ErrInvalid)
}

// visibleIDs returns the IDs of the objects the token may see; key gives
// an object's ID and whether it may.
func visibleIDs[T any](objs []T, key func(T) (string, bool)) []string {
	var ids []string
	for _, o := range objs {
		if id, ok := key(o); ok {
			ids = append(ids, id)
		}
	}
	return ids
}

// FuzzySearch returns, by context, the names that contain Text
// (case-insensitively), each with its scope, at most
// FuzzySearchResultLimit each.
func (s *Search) FuzzySearch(args *structs.FuzzySearchRequest, reply *structs.FuzzySearchResponse) error {
	if done, err := s.srv.Forward("Search.FuzzySearch", args, args, reply); done {
		return err
	}
	if len(args.Text) < structs.FuzzySearchMinTermLength {
		return &structs.ValidationError{Problems: []string{fmt.Sprintf(
			"fuzzy search query must be at least %d characters, got %d", structs.FuzzySearchMinTermLength, len(args.Text))}}
	}
	aclObj, err := s.srv.ResolveACL(args.AuthToken)
	if err != nil {
		return err
	}
	access := searchAccess{acl: aclObj}
	ns := args.RequestNamespace()
	contexts, err := contextsFor(args.Context, fuzzyContexts, access, ns)
	if err != nil {
		return err
	}
	want := map[string]bool{}
	for _, c := range contexts {
		want[c] = true
	}
	text := strings.ToLower(args.Text)
	has := func(s string) bool { return s != "" && strings.Contains(strings.ToLower(s), text) }
	store := s.srv.State()
	found := map[string][]structs.FuzzyMatch{}
	add := func(c, id string, scope ...string) {
		if want[c] && has(id) {
			found[c] = append(found[c], structs.FuzzyMatch{ID: id, Scope: scope})
		}
	}

	if want[structs.SearchContextJobs] || want[structs.SearchContextGroups] || want[structs.SearchContextTasks] ||
		want[structs.SearchContextCommands] || want[structs.SearchContextImages] {
		jobs, err := store.Jobs(nil, ns)
		if err != nil {
			return err
		}
		for _, j := range jobs {
			if !access.readsNamespace(j.Namespace) {
				continue
			}
			add(structs.SearchContextJobs, j.Name, j.Namespace, j.ID)
			for _, tg := range j.TaskGroups {
				add(structs.SearchContextGroups, tg.Name, j.Namespace, j.ID)
				for _, t := range tg.Tasks {
					add(structs.SearchContextTasks, t.Name, j.Namespace, j.ID, tg.Name)
					if cmd, ok := t.Config["command"].(string); ok {
						add(structs.SearchContextCommands, cmd, j.Namespace, j.ID, tg.Name, t.Name)
					}
					if img, ok := t.Config["image"].(string); ok {
						add(structs.SearchContextImages, img, j.Namespace, j.ID, tg.Name, t.Name)
					}
				}
			}
		}
	}
	if want[structs.SearchContextAllocs] {
		allocs, err := store.Allocs(nil, ns)
		if err != nil {
			return err
		}
		for _, a := range allocs {
			if access.readsNamespace(a.Namespace) {
				add(structs.SearchContextAllocs, a.Name, a.Namespace, a.ID)
			}
		}
	}
	if want[structs.SearchContextNodes] {
		nodes, err := store.Nodes(nil)
		if err != nil {
			return err
		}
		for _, n := range nodes {
			add(structs.SearchContextNodes, n.Name, n.ID)
		}
	}
	if want[structs.SearchContextNodePools] {
		pools, err := store.NodePools(nil, "")
		if err != nil {
			return err
		}
		for _, p := range pools {
			if access.acl.AllowNodePoolOperation(p.Name, acl.NodePoolCapabilityRead) {
				add(structs.SearchContextNodePools, p.Name)
			}
		}
	}
	if want[structs.SearchContextNamespaces] {
		nss, err := store.Namespaces(nil, "")
		if err != nil {
			return err
		}
		for _, n := range nss {
			if access.acl.AllowNamespace(n.Name) {
				add(structs.SearchContextNamespaces, n.Name)
			}
		}
	}

	reply.Matches = map[string][]structs.FuzzyMatch{}
	reply.Truncations = map[string]bool{}
	for _, c := range contexts {
		m := found[c]
		// Closest first: a match at the start of the name, then shorter
		// names, then by name, so that answers do not depend on order in
		// the store.
		sort.SliceStable(m, func(i, k int) bool {
			pi := strings.HasPrefix(strings.ToLower(m[i].ID), text)
			pk := strings.HasPrefix(strings.ToLower(m[k].ID), text)
			if pi != pk {
				return pi
			}
			if len(m[i].ID) != len(m[k].ID) {
				return len(m[i].ID) < len(m[k].ID)
			}
			return m[i].ID < m[k].ID
		})
		reply.Truncations[c] = len(m) > structs.FuzzySearchResultLimit
		if len(m) > structs.FuzzySearchResultLimit {
			m = m[:structs.FuzzySearchResultLimit]
		}
		if m == nil {
			m = []structs.FuzzyMatch{}
		}
		reply.Matches[c] = m
	}
	index, err := maxTableIndex(store, state.TableJobs, state.TableAllocs, state.TableNodes,
		state.TableNodePools, state.TableNamespaces)
	if err != nil {
		return err
	}
	reply.Index = index
	s.srv.SetQueryMeta(&reply.QueryMeta)
	return nil
}
