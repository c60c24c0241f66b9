package structs

import "fmt"

// DefaultJobMaxCount is the default of the server's job_max_count: the
// most allocations one job may ask for, summed over its groups. A count
// is a number the submitter chooses; everything a server keeps for a job
// (queued counts, deployment totals, summaries) must stay proportional to
// what operators meant to allow, not to that number.
const DefaultJobMaxCount = 50_000

// CountProblems lists the group counts, and the job's total, above max
// (max <= 0: DefaultJobMaxCount). Each problem names the group and the
// limit, so a refused job says what to change.
func (j *Job) CountProblems(max int) []string {
	if max <= 0 {
		max = DefaultJobMaxCount
	}
	var out []string
	total := 0
	for i, tg := range j.TaskGroups {
		if tg == nil {
			continue
		}
		if tg.Count > max {
			name := fmt.Sprintf("group %q", tg.Name)
			if tg.Name == "" {
				name = fmt.Sprintf("group %d", i+1)
			}
			out = append(out, fmt.Sprintf("%s: count %d exceeds the server's limit of %d allocations per job (job_max_count)", name, tg.Count, max))
			continue
		}
		if tg.Count > 0 {
			// Each term is at most max, so the sum cannot overflow.
			total += tg.Count
		}
	}
	if len(out) == 0 && total > max {
		out = append(out, fmt.Sprintf("the job's groups ask for %d allocations in total, more than the server's limit of %d allocations per job (job_max_count)", total, max))
	}
	return out
}
