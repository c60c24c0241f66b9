package endpoints

import (
	"fmt"

	"github.com/opennomad/nomad/acl"
	"github.com/opennomad/nomad/structs"
)

// Periodic serves Periodic.Force: `job periodic force`.
type Periodic struct {
	srv Server
}

// periodicRules says what Periodic.Force needs of the caller's token.
var periodicRules = Rules{
	"Force": NamespaceAny(acl.NamespaceCapabilitySubmitJob, acl.NamespaceCapabilityDispatchJob, acl.NamespaceCapabilityForcePeriodicJob),
}

// Force launches a child of a periodic job now, whatever its schedule
// and overlap rule say, through the leader's periodic dispatcher.
func (p *Periodic) Force(args *structs.PeriodicForceRequest, reply *structs.PeriodicForceResponse) error {
	if done, err := p.srv.Forward("Periodic.Force", args, args, reply); done {
		return err
	}
	if args.JobID == "" {
		return &structs.ValidationError{Problems: []string{"missing job ID for a periodic force launch"}}
	}
	ns := args.RequestNamespace()
	job, err := p.srv.State().JobByID(nil, ns, args.JobID)
	if err != nil {
		return err
	}
	switch {
	case job == nil:
		return fmt.Errorf("job %q in namespace %q: %w", args.JobID, ns, structs.ErrUnknownJob)
	case !job.IsPeriodic():
		return structs.KindErrorf(structs.ErrInvalid, "can't force launch non-periodic job %q", job.ID)
	case job.Stop:
		return structs.KindErrorf(structs.ErrInvalid, "can't force launch stopped job %q", job.ID)
	}
	launched, err := p.srv.ForcePeriodicRun(ns, job.ID)
	if err != nil {
		return err
	}
	reply.EvalID = launched.EvalID
	reply.EvalCreateIndex = launched.Index
	reply.Index = launched.Index
	return nil
}
