package command

import (
	"fmt"
	"strings"
	"testing"

	"github.com/opennomad/nomad/jobspec"
)

// The commands that parse a job file locally stop at the parser's limits
// with the limit named, rather than crashing or hanging the CLI.
func TestJobFileLimits(t *testing.T) {
	const hcl = "job.nomad.hcl"
	deep := "job \"j\" {\n  meta = {\n    a = " + strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000) + "\n  }\n}\n"
	loops := "job \"j\" {\n  meta = {\n    a = length([for a in range(1024) : [for b in range(1024) : [for c in range(1024) : c]]])\n  }\n}\n"
	depthErr := fmt.Sprintf("nesting depth exceeds the limit of %d", jobspec.MaxNestingDepth)
	evalErr := fmt.Sprintf("evaluation exceeds the limit of %d steps", jobspec.MaxEvalSteps)
	var cases []cmdCase
	// job plan exits 255 on errors, as Nomad's does.
	for _, c := range []struct {
		cmd  string
		code int
	}{{"run", 1}, {"plan", 255}, {"validate", 1}} {
		cmd, code := c.cmd, c.code
		cases = append(cases,
			cmdCase{name: cmd + " nesting", files: map[string]string{hcl: deep},
				args: []string{"job", cmd, "{dir}/" + hcl}, wantCode: code, errHas: []string{"{dir}/" + hcl + ":3:", depthErr}},
			cmdCase{name: cmd + " evaluation", files: map[string]string{hcl: loops},
				args: []string{"job", cmd, "{dir}/" + hcl}, wantCode: code, errHas: []string{evalErr}},
			cmdCase{name: cmd + " -var", files: map[string]string{hcl: "variable \"l\" {\n  type = list(number)\n}\njob \"j\" {}\n"},
				args: []string{"job", cmd, "-var", "l=" + strings.Repeat("[", 100_000), "{dir}/" + hcl}, wantCode: code, errHas: []string{depthErr}},
		)
	}
	runCases(t, cases)
}
