package endpoints

import (
	"fmt"
	"time"

	"github.com/hashicorp/go-metrics"

	"github.com/opennomad/nomad/structs"
)

// Revert registers a stored version of a job again as its newest version,
// through Job.Register: the same checks, one Raft entry with its eval.
// The copy starts unstable and untagged. Reverting to the current version
// is refused; with EnforcePriorVersion the current version must be that
// one, and the registration enforces the job's modify index.
func (j *Job) Revert(args *structs.JobRevertRequest, reply *structs.JobRegisterResponse) error {
	if done, err := j.srv.Forward("Job.Revert", args, args, reply); done {
		return err
	}
	defer metrics.MeasureSince([]string{"nomad", "job", "revert"}, time.Now())
	if args.JobID == "" {
		return &structs.ValidationError{Problems: []string{"missing job ID for revert"}}
	}
	ns := args.RequestNamespace()
	store := j.srv.State()
	cur, err := store.JobByID(nil, ns, args.JobID)
	if err != nil {
		return err
	}
	if cur == nil {
		return fmt.Errorf("job %q in namespace %q: %w", args.JobID, ns, structs.ErrUnknownJob)
	}
	if args.JobVersion == cur.Version {
		return structs.KindErrorf(structs.ErrInvalid, "job %q: can't revert to current version", args.JobID)
	}
	old, err := store.JobByIDAndVersion(nil, ns, args.JobID, args.JobVersion)
	if err != nil {
		return err
	}
	if old == nil {
		return structs.KindErrorf(structs.ErrNotFound, "job %q in namespace %q at version %d not found",
			args.JobID, ns, args.JobVersion)
	}
	reg := &structs.JobRegisterRequest{Job: old.RevertedCopy(), WriteRequest: args.WriteRequest}
	if args.EnforcePriorVersion != nil {
		if cur.Version != *args.EnforcePriorVersion {
			return structs.KindErrorf(structs.ErrConflict, "Current job has version %d; enforcing version %d",
				cur.Version, *args.EnforcePriorVersion)
		}
		reg.EnforceIndex = true
		reg.JobModifyIndex = cur.JobModifyIndex
	}
	return j.Register(reg, reply)
}

// Stable marks a stored version of a job stable or not, as a deployment
// does when it succeeds.
func (j *Job) Stable(args *structs.JobStabilityRequest, reply *structs.JobStabilityResponse) error {
	if done, err := j.srv.Forward("Job.Stable", args, args, reply); done {
		return err
	}
	defer metrics.MeasureSince([]string{"nomad", "job", "stable"}, time.Now())
	if args.JobID == "" {
		return &structs.ValidationError{Problems: []string{"missing job ID for marking job as stable"}}
	}
	ns := args.RequestNamespace()
	v, err := j.srv.State().JobByIDAndVersion(nil, ns, args.JobID, args.JobVersion)
	if err != nil {
		return err
	}
	if v == nil {
		return structs.KindErrorf(structs.ErrNotFound, "job %q in namespace %q at version %d not found",
			args.JobID, ns, args.JobVersion)
	}
	_, index, err := j.srv.RaftApply(structs.JobStabilityRequestType, args)
	if err != nil {
		return err
	}
	reply.Index = index
	return nil
}

// TagVersion tags a version of a job (Tag set) or removes a tag (Tag
// nil). The store checks again in the Raft entry what is checked here
// first, so a refused request writes nothing.
func (j *Job) TagVersion(args *structs.JobApplyTagRequest, reply *structs.JobTagResponse) error {
	if done, err := j.srv.Forward("Job.TagVersion", args, args, reply); done {
		return err
	}
	defer metrics.MeasureSince([]string{"nomad", "job", "tag_version"}, time.Now())
	var problems []string
	if args.JobID == "" {
		problems = append(problems, "missing job ID for tagging a version")
	}
	if args.Name == "" {
		problems = append(problems, "missing tag name")
	}
	if args.Tag != nil && args.Tag.Name != args.Name {
		problems = append(problems, fmt.Sprintf("tag name %q does not match the request's %q", args.Tag.Name, args.Name))
	}
	if len(problems) > 0 {
		return &structs.ValidationError{Problems: problems}
	}
	ns := args.RequestNamespace()
	store := j.srv.State()
	holder, err := store.JobVersionByTagName(nil, ns, args.JobID, args.Name)
	if err != nil {
		return err
	}
	if args.Tag == nil {
		if holder == nil {
			return structs.KindErrorf(structs.ErrNotFound, "tag %q not found on job %q", args.Name, args.JobID)
		}
	} else {
		if args.Latest {
			cur, err := store.JobByID(nil, ns, args.JobID)
			if err != nil {
				return err
			}
			if cur == nil {
				return fmt.Errorf("job %q in namespace %q: %w", args.JobID, ns, structs.ErrUnknownJob)
			}
			args.Version, args.Latest = cur.Version, false
		}
		v, err := store.JobByIDAndVersion(nil, ns, args.JobID, args.Version)
		if err != nil {
			return err
		}
		if v == nil {
			return structs.KindErrorf(structs.ErrNotFound, "job %q version %d not found", args.JobID, args.Version)
		}
		if holder != nil && holder.Version != args.Version {
			return structs.KindErrorf(structs.ErrConflict, "tag %q already exists on a different version of job %q",
				args.Name, args.JobID)
		}
		args.Tag.TaggedTime = j.srv.Clock().Now().UnixNano()
	}
	_, index, err := j.srv.RaftApply(structs.JobVersionTagRequestType, args)
	if err != nil {
		return err
	}
	reply.Index = index
	reply.Name = args.Name
	if args.Tag != nil {
		reply.Description = args.Tag.Description
		reply.TaggedTime = args.Tag.TaggedTime
	}
	return nil
}
