package agent

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/api"
)

func TestJobRegion(t *testing.T) {
	named := func(region string) *api.Job { return &api.Job{Region: &region} }
	cases := []struct {
		name  string
		query string
		job   *api.Job
		want  string
	}{
		{"query wins over the job", "regionB", named("regionC"), "regionB"},
		{"query with a job naming none", "regionB", &api.Job{}, "regionB"},
		{"the job's region", "", named("regionC"), "regionC"},
		{"global is the agent's", "", named("global"), "regionA"},
		{"empty is the agent's", "", named(""), "regionA"},
		{"none is the agent's", "", &api.Job{}, "regionA"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			must.Eq(t, tc.want, jobRegion(tc.query, tc.job, "regionA"))
		})
	}
}
