package endpoints

import (
	"github.com/hashicorp/go-memdb"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// GetJobSubmission returns the source a job version was submitted as.
// A version without one (registered through the API without its source,
// purged, or trimmed from the history) is structs.ErrJobSourceNotFound,
// answered 404 as Nomad's "job source not found".
func (j *Job) GetJobSubmission(args *structs.JobSubmissionRequest, reply *structs.JobSubmissionResponse) error {
	if done, err := j.srv.Forward("Job.GetJobSubmission", args, args, reply); done {
		return err
	}
	ns := args.RequestNamespace()
	return blockingQuery(j.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		sub, err := store.JobSubmission(ws, ns, args.JobID, args.Version)
		if err != nil {
			return 0, err
		}
		if sub == nil {
			return 0, structs.ErrJobSourceNotFound
		}
		reply.Submission = sub
		return store.Index(state.TableJobSubmissions)
	})
}
