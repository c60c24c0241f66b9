package agent

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/api"
	"github.com/opennomad/nomad/jobspec"
)

// A job file that would exhaust the agent's memory, time or stack is
// refused with the limit it crossed, and the agent keeps serving.
func TestJobs_ParseLimits(t *testing.T) {
	h := newTestHTTP(t)
	parseBody := func(req api.JobsParseRequest) string {
		b, err := json.Marshal(req)
		must.NoError(t, err)
		return string(b)
	}
	deep := strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000)
	cases := []struct {
		name string
		body string
		code int
		want string
	}{
		{
			name: "nesting",
			body: parseBody(api.JobsParseRequest{JobHCL: "job \"j\" {\n  meta = {\n    a = " + deep + "\n  }\n}\n"}),
			code: http.StatusBadRequest,
			// The job's and meta's braces are the first two levels.
			want: fmt.Sprintf("input.hcl:3:%d: nesting depth exceeds the limit of %d", 9+jobspec.MaxNestingDepth-2, jobspec.MaxNestingDepth),
		},
		{
			name: "evaluation",
			body: parseBody(api.JobsParseRequest{JobHCL: `job "j" {
  meta = {
    a = length([for a in range(1024) : [for b in range(1024) : [for c in range(1024) : c]]])
  }
}`}),
			code: http.StatusBadRequest,
			want: fmt.Sprintf("evaluation exceeds the limit of %d steps", jobspec.MaxEvalSteps),
		},
		{
			name: "function in the variables",
			body: parseBody(api.JobsParseRequest{
				JobHCL:    "variable \"s\" {\n  default = \"\"\n}\njob \"j\" {\n  meta = {\n    a = var.s\n  }\n}\n",
				Variables: `s = indent(2147483647, "x")`,
			}),
			code: http.StatusBadRequest,
			want: "variables.hcl:1:5: evaluation exceeds the limit",
		},
		{
			name: "job file size",
			body: parseBody(api.JobsParseRequest{JobHCL: "job \"j\" {}\n#" + strings.Repeat("x", jobspec.MaxSourceBytes)}),
			code: http.StatusRequestEntityTooLarge,
			want: fmt.Sprintf("job file exceeds the maximum size of %d bytes", jobspec.MaxSourceBytes),
		},
		{
			name: "request size",
			body: `{"JobHCL": "` + strings.Repeat("x", maxParseRequestBody) + `"}`,
			code: http.StatusRequestEntityTooLarge,
			want: fmt.Sprintf("Request body is larger than %d bytes", maxParseRequestBody),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			resp, out := h.do("POST", "/v1/jobs/parse", tc.body)
			must.Eq(t, tc.code, resp.StatusCode, must.Sprint(out))
			must.StrContains(t, out, tc.want)
			must.Less(t, 5*time.Second, time.Since(start))
		})
	}

	// The agent is still serving.
	resp, out := h.do("POST", "/v1/jobs/parse", parseBody(api.JobsParseRequest{JobHCL: "job \"j\" {}\n"}))
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(out))
}
