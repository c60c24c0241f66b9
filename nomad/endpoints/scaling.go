package endpoints

import (
	"sort"

	"github.com/hashicorp/go-memdb"

	"github.com/opennomad/nomad/acl"
	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// Scaling serves the Scaling.* RPCs: the scaling policies of the task
// groups of the registered jobs, read where they live (in their jobs).
type Scaling struct {
	srv Server
}

var scalingRules = Rules{
	"ListPolicies": NamespaceAny(acl.NamespaceCapabilityListScalingPolicies, acl.NamespaceCapabilityListJobs),
	"GetPolicy":    NamespaceAny(acl.NamespaceCapabilityReadScalingPolicy, acl.NamespaceCapabilityReadJob),
}

// scalingPolicies returns the policies of the jobs of namespace ns ("*":
// every namespace a may list) in ID order.
func scalingPolicies(ws memdb.WatchSet, store *state.StateStore, ns string, a *acl.ACL) ([]*structs.ScalingPolicy, error) {
	jobs, err := store.Jobs(ws, ns)
	if err != nil {
		return nil, err
	}
	var out []*structs.ScalingPolicy
	for _, j := range jobs {
		if a != nil && !a.AllowNsOpAny(j.Namespace, acl.NamespaceCapabilityListScalingPolicies, acl.NamespaceCapabilityListJobs) {
			continue
		}
		for _, tg := range j.TaskGroups {
			if tg.Scaling != nil {
				out = append(out, tg.Scaling)
			}
		}
	}
	sort.Slice(out, func(i, k int) bool { return out[i].ID < out[k].ID })
	return out, nil
}

// ListPolicies lists the policies of a namespace ("*": all), of one job
// when Job is set, of one type when Type is set.
func (s *Scaling) ListPolicies(args *structs.ScalingPolicyListRequest, reply *structs.ScalingPolicyListResponse) error {
	if done, err := s.srv.Forward("Scaling.ListPolicies", args, args, reply); done {
		return err
	}
	aclObj, err := s.srv.ResolveACL(args.AuthToken)
	if err != nil {
		return err
	}
	ns := args.RequestNamespace()
	return blockingQuery(s.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		policies, err := scalingPolicies(ws, store, ns, aclObj)
		if err != nil {
			return 0, err
		}
		reply.Policies = make([]*structs.ScalingPolicyListStub, 0, len(policies))
		for _, p := range policies {
			if args.Job != "" && p.Target[structs.ScalingTargetJob] != args.Job {
				continue
			}
			if args.Type != "" && p.Type != args.Type {
				continue
			}
			reply.Policies = append(reply.Policies, p.Stub())
		}
		return store.Index(state.TableJobs)
	})
}

// GetPolicy returns a policy by ID (in whatever namespace), nil when no
// job has it; a policy of a namespace the token may not read is refused.
func (s *Scaling) GetPolicy(args *structs.ScalingPolicySpecificRequest, reply *structs.SingleScalingPolicyResponse) error {
	if done, err := s.srv.Forward("Scaling.GetPolicy", args, args, reply); done {
		return err
	}
	aclObj, err := s.srv.ResolveACL(args.AuthToken)
	if err != nil {
		return err
	}
	err = blockingQuery(s.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		policies, err := scalingPolicies(ws, store, structs.AllNamespaces, nil)
		if err != nil {
			return 0, err
		}
		reply.Policy = nil
		for _, p := range policies {
			if p.ID == args.ID {
				reply.Policy = p
				return p.ModifyIndex, nil
			}
		}
		return store.Index(state.TableJobs)
	})
	if err != nil {
		return err
	}
	if p := reply.Policy; p != nil && !aclObj.AllowNsOpAny(p.Target[structs.ScalingTargetNamespace],
		acl.NamespaceCapabilityReadScalingPolicy, acl.NamespaceCapabilityReadJob) {
		reply.Policy = nil
		return structs.ErrPermissionDenied
	}
	return nil
}
