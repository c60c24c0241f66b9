package agent

import (
	"fmt"

	"github.com/opennomad/nomad/api"
	"github.com/opennomad/nomad/structs"
)

// deepConfigs refuses, with a *structs.ValidationError (a 400), a job whose
// task driver configs nest deeper than structs.MaxConfigDepth. The servers
// refuse it too, but an agent that forwards the job over RPC would
// otherwise send a value the server's decoder cannot read, and the caller
// would get a decoding failure (a 500) instead of the problem.
func deepConfigs(job *api.Job) error {
	if job == nil {
		return nil
	}
	var problems []string
	for gi, tg := range job.TaskGroups {
		if tg == nil {
			continue
		}
		for ti, t := range tg.Tasks {
			if t == nil {
				continue
			}
			if structs.ConfigDepth(t.Config, structs.MaxConfigDepth) > structs.MaxConfigDepth {
				problems = append(problems, fmt.Sprintf("TaskGroups[%d].Tasks[%d].Config: nests deeper than %d levels",
					gi, ti, structs.MaxConfigDepth))
			}
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return &structs.ValidationError{Problems: problems}
}
