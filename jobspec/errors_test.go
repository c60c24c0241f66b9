package jobspec

import (
	"errors"
	"strings"
	"testing"
)

func TestErrorsNamePositions(t *testing.T) {
	cases := []struct {
		name string
		src  string
		want []string
	}{
		{
			name: "syntax error",
			src:  "job \"j\" {\n  type = \n}\n",
			want: []string{"job.hcl:2:"},
		},
		{
			name: "unknown job attribute",
			src:  "job \"j\" {\n  typo = \"service\"\n}\n",
			want: []string{`job.hcl:2:3: Unsupported argument; An argument named "typo" is not expected here.`},
		},
		{
			name: "unknown group block",
			src:  "job \"j\" {\n  group \"g\" {\n    taks \"t\" {}\n  }\n}\n",
			want: []string{`job.hcl:3:5: Unsupported block type; Blocks of type "taks" are not expected here.`},
		},
		{
			name: "unknown task attribute",
			src:  "job \"j\" {\n  group \"g\" {\n    task \"t\" {\n      drvier = \"raw_exec\"\n    }\n  }\n}\n",
			want: []string{`job.hcl:4:7: Unsupported argument; An argument named "drvier" is not expected here.`},
		},
		{
			name: "unknown resources attribute",
			src:  "job \"j\" {\n  group \"g\" {\n    task \"t\" {\n      resources {\n        memroy = 10\n      }\n    }\n  }\n}\n",
			want: []string{`job.hcl:5:9: Unsupported argument; An argument named "memroy" is not expected here.`},
		},
		{
			name: "string for a number",
			src:  "job \"j\" {\n  priority = \"high\"\n}\n",
			want: []string{`job.hcl:2:14: Incorrect attribute value type; Inappropriate value for attribute "priority": a number is required.`},
		},
		{
			name: "fractional count",
			src:  "job \"j\" {\n  group \"g\" {\n    count = 1.5\n  }\n}\n",
			want: []string{`job.hcl:3:13: Incorrect attribute value type; Inappropriate value for attribute "count": a whole number is required, not 1.5.`},
		},
		{
			name: "weight out of range",
			src:  "job \"j\" {\n  affinity {\n    attribute = \"${node.class}\"\n    weight = 200\n  }\n}\n",
			want: []string{`job.hcl:4:14: Incorrect attribute value type; Inappropriate value for attribute "weight": 200 is out of range.`},
		},
		{
			name: "bad duration",
			src:  "job \"j\" {\n  group \"g\" {\n    task \"t\" {\n      kill_timeout = \"10 seconds\"\n    }\n  }\n}\n",
			want: []string{`job.hcl:4:22: Incorrect attribute value type; Inappropriate value for attribute "kill_timeout": "10 seconds" is not a duration`},
		},
		{
			name: "list for a string",
			src:  "job \"j\" {\n  region = [\"a\"]\n}\n",
			want: []string{`job.hcl:2:12: Incorrect attribute value type; Inappropriate value for attribute "region": string required, but have tuple.`},
		},
		{
			name: "duplicate update block",
			src:  "job \"j\" {\n  update {}\n  update {}\n}\n",
			want: []string{"job.hcl:3:3: Duplicate update block; Only one update block is allowed here; another was defined at job.hcl:2,3-9."},
		},
		{
			name: "meta as attribute and block",
			src:  "job \"j\" {\n  meta = { a = \"1\" }\n  meta {\n    b = \"2\"\n  }\n}\n",
			want: []string{"job.hcl:3:3: Duplicate meta block"},
		},
		{
			name: "nested block in env",
			src:  "job \"j\" {\n  group \"g\" {\n    task \"t\" {\n      env {\n        inner {}\n      }\n    }\n  }\n}\n",
			want: []string{"job.hcl:5:9: Unexpected block; env may only contain attributes (key = value), not a inner block."},
		},
		{
			name: "missing required lifecycle hook",
			src:  "job \"j\" {\n  group \"g\" {\n    task \"t\" {\n      lifecycle {\n        sidecar = true\n      }\n    }\n  }\n}\n",
			want: []string{`job.hcl:4:17: Missing required argument; The argument "hook" is required, but no definition was found.`},
		},
		{
			name: "group without a name",
			src:  "job \"j\" {\n  group {}\n}\n",
			want: []string{`job.hcl:2:9: Missing name for group; All group blocks must have 1 labels (name).`},
		},
		{
			name: "missing job block",
			src:  "variable \"x\" {\n  default = 1\n}\n",
			want: []string{"job.hcl:1:1: Missing job block; A job file must contain one job block."},
		},
		{
			name: "two job blocks",
			src:  "job \"a\" {}\njob \"b\" {}\n",
			want: []string{"job.hcl:2:1: Duplicate job block"},
		},
		{
			name: "unknown top-level block",
			src:  "jobs \"a\" {}\n",
			want: []string{`job.hcl:1:1: Unsupported block type; Blocks of type "jobs" are not expected here.`},
		},
		{
			name: "undefined var reference",
			src:  "job \"j\" {\n  region = var.nope\n}\n",
			want: []string{`job.hcl:2:15: Unsupported attribute; This object does not have an attribute named "nope".`},
		},
		{
			name: "bad task scaling label",
			src:  "job \"j\" {\n  group \"g\" {\n    task \"t\" {\n      scaling \"disk\" {\n        max = 1\n      }\n    }\n  }\n}\n",
			want: []string{`job.hcl:4:15: Invalid scaling policy name; A task scaling block must be named "cpu" or "mem", not "disk".`},
		},
		{
			name: "group scaling without max",
			src:  "job \"j\" {\n  group \"g\" {\n    scaling {\n      min = 1\n    }\n  }\n}\n",
			want: []string{"job.hcl:3:5: Missing required argument; A group scaling block must set max."},
		},
		{
			name: "every problem is reported",
			src:  "job \"j\" {\n  priority = \"x\"\n  group \"g\" {\n    count = \"y\"\n  }\n}\n",
			want: []string{"job.hcl:2:14:", "job.hcl:4:13:"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Parse("job.hcl", []byte(tc.src), Options{})
			if err == nil {
				t.Fatalf("parse succeeded: %+v", res.Job)
			}
			var perr *Error
			if !errors.As(err, &perr) || len(perr.Diagnostics) == 0 {
				t.Fatalf("err = %T, want *Error with diagnostics", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not contain %q:\n%v", w, err)
				}
			}
		})
	}
}
