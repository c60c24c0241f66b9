package endpoints

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/hashicorp/go-memdb"
	"github.com/hashicorp/go-metrics"

	"github.com/opennomad/nomad/acl"
	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// Deployment serves the Deployment.* RPCs: reads, the operator's
// actions on a roll-out (promote, fail, pause, alloc health), which the
// leader's deployment watcher carries out with its own rules, and the
// garbage collector's deletions.
type Deployment struct {
	srv Server
}

// deploymentRules says what each Deployment.* method needs of the
// caller's token.
var deploymentRules = Rules{
	"Allocations":    NamespaceAny(acl.NamespaceCapabilityReadJob),
	"GetDeployment":  NamespaceAny(acl.NamespaceCapabilityReadJob),
	"List":           NamespaceAny(acl.NamespaceCapabilityReadJob),
	"Fail":           NamespaceAny(acl.NamespaceCapabilitySubmitJob, acl.NamespaceCapabilityFailDeployment),
	"Pause":          NamespaceAny(acl.NamespaceCapabilitySubmitJob, acl.NamespaceCapabilityPauseDeployment),
	"Promote":        NamespaceAny(acl.NamespaceCapabilitySubmitJob, acl.NamespaceCapabilityPromoteDeployment),
	"SetAllocHealth": NamespaceAny(acl.NamespaceCapabilitySubmitJob, acl.NamespaceCapabilitySetAllocHealthDeployment),
	"Reap":           Internal(),
}

// newestFirst orders deployments by creation, the newest first.
func newestFirst(ds []*structs.Deployment) []*structs.Deployment {
	slices.SortFunc(ds, func(a, b *structs.Deployment) int { return cmp.Compare(b.CreateIndex, a.CreateIndex) })
	return ds
}

// List returns the deployments of a namespace ("*" for all) whose ID
// starts with Prefix, newest first.
func (d *Deployment) List(args *structs.DeploymentListRequest, reply *structs.DeploymentListResponse) error {
	if done, err := d.srv.Forward("Deployment.List", args, args, reply); done {
		return err
	}
	ns := args.RequestNamespace()
	return blockingQuery(d.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		ds, err := store.DeploymentsByIDPrefix(ws, ns, args.Prefix)
		if err != nil {
			return 0, err
		}
		reply.Deployments = newestFirst(ds)
		return store.Index(state.TableDeployment)
	})
}

// GetDeployment returns a deployment, nil when unknown.
func (d *Deployment) GetDeployment(args *structs.DeploymentSpecificRequest, reply *structs.SingleDeploymentResponse) error {
	if done, err := d.srv.Forward("Deployment.GetDeployment", args, args, reply); done {
		return err
	}
	return blockingQuery(d.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		dep, err := store.DeploymentByID(ws, args.DeploymentID)
		if err != nil {
			return 0, err
		}
		reply.Deployment = dep
		if dep != nil {
			return dep.ModifyIndex, nil
		}
		return store.Index(state.TableDeployment)
	})
}

// Allocations returns the stubs of a deployment's allocs.
func (d *Deployment) Allocations(args *structs.DeploymentSpecificRequest, reply *structs.AllocListResponse) error {
	if done, err := d.srv.Forward("Deployment.Allocations", args, args, reply); done {
		return err
	}
	return blockingQuery(d.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		allocs, err := store.AllocsByDeployment(ws, args.DeploymentID)
		if err != nil {
			return 0, err
		}
		stubs := make([]*structs.AllocListStub, 0, len(allocs))
		for _, a := range allocs {
			stubs = append(stubs, a.Stub())
		}
		reply.Allocations = stubs
		return store.Index(state.TableAllocs)
	})
}

// checkActive refuses an action on a deployment that is unknown (404) or
// no longer active (400), before the watcher is asked.
func (d *Deployment) checkActive(id string) error {
	if id == "" {
		return &structs.ValidationError{Problems: []string{"missing deployment ID"}}
	}
	dep, err := d.srv.State().DeploymentByID(nil, id)
	if err != nil {
		return err
	}
	if dep == nil {
		return fmt.Errorf("deployment %q: %w", id, structs.ErrUnknownDeployment)
	}
	if !dep.Active() {
		return structs.KindErrorf(structs.ErrConflict, "deployment %q is %s: only an active deployment can be changed", id, dep.Status)
	}
	return nil
}

// operate runs one operator action through the leader's watcher.
func (d *Deployment) operate(what, id string, action func() (*structs.DeploymentUpdateResponse, error), reply *structs.DeploymentUpdateResponse) error {
	defer metrics.MeasureSince([]string{"nomad", "deployment", what}, time.Now())
	if err := d.checkActive(id); err != nil {
		return err
	}
	resp, err := action()
	if err != nil {
		return err
	}
	*reply = *resp
	return nil
}

// Promote promotes a deployment's canaries (all groups', or the named
// groups'), with an eval that places the rest of the roll-out. A group
// whose canaries are not all healthy refuses the promotion.
func (d *Deployment) Promote(args *structs.DeploymentPromoteRequest, reply *structs.DeploymentUpdateResponse) error {
	if done, err := d.srv.Forward("Deployment.Promote", args, args, reply); done {
		return err
	}
	if !args.All && len(args.Groups) == 0 {
		return &structs.ValidationError{Problems: []string{"promote requires All or at least one task group"}}
	}
	return d.operate("promote", args.DeploymentID, func() (*structs.DeploymentUpdateResponse, error) {
		return d.srv.Deployments().Promote(args)
	}, reply)
}

// Fail fails a deployment, reverting its job to the latest stable
// version when the deployment auto-reverts.
func (d *Deployment) Fail(args *structs.DeploymentFailRequest, reply *structs.DeploymentUpdateResponse) error {
	if done, err := d.srv.Forward("Deployment.Fail", args, args, reply); done {
		return err
	}
	return d.operate("fail", args.DeploymentID, func() (*structs.DeploymentUpdateResponse, error) {
		return d.srv.Deployments().Fail(args)
	}, reply)
}

// Pause pauses or resumes a deployment.
func (d *Deployment) Pause(args *structs.DeploymentPauseRequest, reply *structs.DeploymentUpdateResponse) error {
	if done, err := d.srv.Forward("Deployment.Pause", args, args, reply); done {
		return err
	}
	return d.operate("pause", args.DeploymentID, func() (*structs.DeploymentUpdateResponse, error) {
		return d.srv.Deployments().Pause(args)
	}, reply)
}

// SetAllocHealth records an operator's verdict on allocs of a deployment
// (the only verdicts a group with health_check "manual" gets).
func (d *Deployment) SetAllocHealth(args *structs.DeploymentAllocHealthRequest, reply *structs.DeploymentUpdateResponse) error {
	if done, err := d.srv.Forward("Deployment.SetAllocHealth", args, args, reply); done {
		return err
	}
	if len(args.HealthyAllocationIDs)+len(args.UnhealthyAllocationIDs) == 0 {
		return &structs.ValidationError{Problems: []string{"must specify at least one healthy or unhealthy allocation ID"}}
	}
	return d.operate("set_alloc_health", args.DeploymentID, func() (*structs.DeploymentUpdateResponse, error) {
		return d.srv.Deployments().SetAllocHealth(args)
	}, reply)
}

// Deployments returns a job's deployments, newest first; with All, also
// those of earlier, purged jobs with the same ID.
func (j *Job) Deployments(args *structs.JobSpecificRequest, reply *structs.DeploymentListResponse) error {
	if done, err := j.srv.Forward("Job.Deployments", args, args, reply); done {
		return err
	}
	ns := args.RequestNamespace()
	return blockingQuery(j.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		ds, err := store.DeploymentsByJobID(ws, ns, args.JobID, args.All)
		if err != nil {
			return 0, err
		}
		reply.Deployments = newestFirst(ds)
		return store.Index(state.TableDeployment)
	})
}

// LatestDeployment returns a job's newest deployment, nil when it has
// none.
func (j *Job) LatestDeployment(args *structs.JobSpecificRequest, reply *structs.SingleDeploymentResponse) error {
	if done, err := j.srv.Forward("Job.LatestDeployment", args, args, reply); done {
		return err
	}
	ns := args.RequestNamespace()
	return blockingQuery(j.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		dep, err := store.LatestDeploymentByJobID(ws, ns, args.JobID)
		if err != nil {
			return 0, err
		}
		reply.Deployment = dep
		if dep != nil {
			return dep.ModifyIndex, nil
		}
		return store.Index(state.TableDeployment)
	})
}
