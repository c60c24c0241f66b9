package structs

import (
	"math"
	"slices"
	"testing"
)

func TestJobCountProblems(t *testing.T) {
	job := func(counts ...int) *Job {
		j := &Job{}
		for i, c := range counts {
			j.TaskGroups = append(j.TaskGroups, &TaskGroup{Name: string(rune('a' + i)), Count: c})
		}
		return j
	}
	cases := []struct {
		name string
		job  *Job
		max  int
		want []string
	}{
		{"within", job(10, 20), 30, nil},
		{"one group over", job(31), 30,
			[]string{`group "a": count 31 exceeds the server's limit of 30 allocations per job (job_max_count)`}},
		{"sum over: 20 + 20 = 40 > 30", job(20, 20), 30,
			[]string{"the job's groups ask for 40 allocations in total, more than the server's limit of 30 allocations per job (job_max_count)"}},
		{"2^31-1 against the default", job(math.MaxInt32), 0,
			[]string{`group "a": count 2147483647 exceeds the server's limit of 50000 allocations per job (job_max_count)`}},
		{"2^63-1 twice: no overflow, both named", job(math.MaxInt64, math.MaxInt64), 0, []string{
			`group "a": count 9223372036854775807 exceeds the server's limit of 50000 allocations per job (job_max_count)`,
			`group "b": count 9223372036854775807 exceeds the server's limit of 50000 allocations per job (job_max_count)`}},
		{"negative counts are validation's business", job(-5), 30, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.job.CountProblems(tc.max); !slices.Equal(got, tc.want) {
				t.Fatalf("got %q\nwant %q", got, tc.want)
			}
		})
	}
}
