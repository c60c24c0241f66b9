package agent

import (
	"net/http"

	"github.com/opennomad/nomad/api"
	"github.com/opennomad/nomad/structs"
)

// jobRegion is the region a submitted job belongs to, which is also where
// the request goes: ?region= when given (the CLI's -region and
// NOMAD_REGION), else the region the job names, else this agent's. A job
// that names "global", the api package's default, is taken to name none,
// as Nomad does: it runs in the agent's region.
func jobRegion(queryRegion string, job *api.Job, agentRegion string) string {
	if queryRegion != "" {
		return queryRegion
	}
	if job.Region != nil && *job.Region != "" && *job.Region != structs.DefaultRegion {
		return *job.Region
	}
	return agentRegion
}

// applyJobRegion sets the job's region and sends the write there.
func (s *HTTPServer) applyJobRegion(r *http.Request, job *api.Job, wr *structs.WriteRequest) {
	region := jobRegion(queryGet(r, "region"), job, s.agent.Region)
	job.Region = &region
	wr.Region = region
}
