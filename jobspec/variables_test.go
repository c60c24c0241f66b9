package jobspec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func readVarFiles(t *testing.T, names ...string) []VarFile {
	t.Helper()
	var paths []string
	for _, n := range names {
		paths = append(paths, filepath.Join("testdata", n))
	}
	files, err := ReadVarFiles(paths...)
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestVariablesFromEverySourceWithPrecedence(t *testing.T) {
	type want struct {
		region, tag string
		count       int
		dcs         string
		env         map[string]string
	}
	cases := []struct {
		name string
		opts Options
		want want
	}{
		{
			name: "defaults only",
			want: want{region: "global", tag: "latest", count: 1, dcs: "dc1", env: map[string]string{"DEBUG": "0"}},
		},
		{
			name: "environment overrides defaults, other variables ignored",
			opts: Options{Env: []string{"NOMAD_VAR_image_tag=env", "NOMAD_VAR_debug=true", "NOMAD_VAR_undeclared=x", "PATH=/bin",
				`NOMAD_VAR_datacenters=["env-1"]`}},
			want: want{region: "global", tag: "env", count: 1, dcs: "env-1", env: map[string]string{"DEBUG": "1"}},
		},
		{
			name: "variable files override the environment, later files win",
			opts: Options{
				Env:      []string{"NOMAD_VAR_image_tag=env", "NOMAD_VAR_count=2"},
				VarFiles: readVarFiles(t, "vars.hcl", "vars_override.hcl", "vars.json"),
			},
			want: want{region: "global", tag: "v1.3.0", count: 4, dcs: "eu-1,eu-2", env: map[string]string{"DEBUG": "0", "team": "web"}},
		},
		{
			name: "-var flags override everything, later flags win",
			opts: Options{
				Env:      []string{"NOMAD_VAR_region=env-region"},
				VarFiles: readVarFiles(t, "vars.hcl"),
				ArgVars: []string{"image_tag=cli", "count=7", "region=cli-region", `labels={a="b"}`,
					"image_tag=cli-last", `datacenters=["x","y","z"]`},
			},
			want: want{region: "cli-region", tag: "cli-last", count: 7, dcs: "x,y,z", env: map[string]string{"DEBUG": "0", "a": "b"}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := parseFixture(t, "variables.nomad.hcl", tc.opts)
			j := res.Job
			task := j.TaskGroups[0].Tasks[0]
			if *j.Region != tc.want.region {
				t.Errorf("region = %q, want %q", *j.Region, tc.want.region)
			}
			if got := task.Config["args"].([]any)[0]; got != "WEB-"+tc.want.tag {
				t.Errorf("args = %v, want WEB-%s", got, tc.want.tag)
			}
			if *j.TaskGroups[0].Count != tc.want.count {
				t.Errorf("count = %d, want %d", *j.TaskGroups[0].Count, tc.want.count)
			}
			if got := strings.Join(j.Datacenters, ","); got != tc.want.dcs {
				t.Errorf("datacenters = %q, want %q", got, tc.want.dcs)
			}
			assertSameJSON(t, task.Env, tc.want.env)
		})
	}
}

func TestVariableErrors(t *testing.T) {
	cases := []struct {
		name    string
		src     string
		opts    Options
		wantErr []string
	}{
		{
			name:    "validation rule rejects a value",
			opts:    Options{ArgVars: []string{"count=11"}},
			wantErr: []string{`Invalid value for variable "count"; The count must be between 1 and 10.`, "validation rule at testdata/variables.nomad.hcl:16,3-13"},
		},
		{
			name:    "value of the wrong type",
			opts:    Options{ArgVars: []string{"count=many"}},
			wantErr: []string{"Invalid value for variable", "a number is required"},
		},
		{
			name:    "undeclared -var",
			opts:    Options{ArgVars: []string{"colour=blue"}},
			wantErr: []string{`Undefined -var variable; A value was given for variable "colour"`},
		},
		{
			name:    "malformed -var",
			opts:    Options{ArgVars: []string{"justaname"}},
			wantErr: []string{`Invalid -var option; The -var option "justaname" must be of the form name=value.`},
		},
		{
			name:    "undeclared variable in a variables file",
			opts:    Options{VarFiles: []VarFile{{Name: "extra.hcl", Content: []byte("colour = \"blue\"\n")}}},
			wantErr: []string{`extra.hcl:1:1: Undefined variable; A value was given for variable "colour"`},
		},
		{
			name:    "declaration in a variables file",
			opts:    Options{VarFiles: []VarFile{{Name: "decl.hcl", Content: []byte("variable \"x\" {}\n")}}},
			wantErr: []string{"decl.hcl:1:1: Variable declaration in a variables file"},
		},
		{
			name:    "syntax error in a variables file",
			opts:    Options{VarFiles: []VarFile{{Name: "broken.hcl", Content: []byte("x = \n")}}},
			wantErr: []string{"broken.hcl:1:"},
		},
		{
			name:    "unset variable",
			src:     "variable \"needed\" {\n  type = string\n}\njob \"j\" {}\n",
			wantErr: []string{`job.hcl:1:1: Unset variable "needed"; The variable has no default; set it with -var, -var-file or NOMAD_VAR_needed.`},
		},
		{
			name:    "default does not match type",
			src:     "variable \"n\" {\n  type = number\n  default = \"x\"\n}\njob \"j\" {}\n",
			wantErr: []string{"job.hcl:3:13: Invalid default value for variable"},
		},
		{
			name:    "duplicate variable",
			src:     "variable \"a\" {\n  default = 1\n}\nvariable \"a\" {\n  default = 2\n}\njob \"j\" {}\n",
			wantErr: []string{`job.hcl:4:1: Duplicate variable; Variable "a" was already declared at job.hcl:1,1-13.`},
		},
		{
			name:    "validation referring to another variable",
			src:     "variable \"a\" {\n  default = 1\n  validation {\n    condition = var.b > 0\n    error_message = \"Bad.\"\n  }\n}\njob \"j\" {}\n",
			wantErr: []string{"job.hcl:4:17: Invalid reference in variable validation"},
		},
		{
			name:    "unknown attribute in a variable block",
			src:     "variable \"a\" {\n  sensitive = true\n}\njob \"j\" {}\n",
			wantErr: []string{`job.hcl:2:3: Unsupported argument; An argument named "sensitive" is not expected here.`},
		},
		{
			name:    "circular locals",
			src:     "locals {\n  a = local.b\n  b = local.a\n}\njob \"j\" {}\n",
			wantErr: []string{`job.hcl:2:12: Unsupported attribute; This object does not have an attribute named "b".`, "job.hcl:3:12: Unsupported attribute"},
		},
		{
			name:    "duplicate local",
			src:     "locals {\n  a = 1\n}\nlocals {\n  a = 2\n}\njob \"j\" {}\n",
			wantErr: []string{"job.hcl:5:3: Duplicate local value"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.src == "" {
				src, _ := os.ReadFile(filepath.Join("testdata", "variables.nomad.hcl"))
				_, err = Parse(filepath.Join("testdata", "variables.nomad.hcl"), src, tc.opts)
			} else {
				_, err = Parse("job.hcl", []byte(tc.src), tc.opts)
			}
			if err == nil {
				t.Fatal("parse succeeded, want an error")
			}
			for _, want := range tc.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error does not contain %q:\n%v", want, err)
				}
			}
		})
	}
}

func TestLegacyVariablesBlock(t *testing.T) {
	src := "variables {\n  size = 3\n  name = \"x\"\n}\njob \"j\" {\n  group \"g\" {\n    count = var.size\n  }\n}\n"
	res, err := Parse("job.hcl", []byte(src), Options{ArgVars: []string{"size=5"}})
	if err != nil {
		t.Fatal(err)
	}
	if *res.Job.TaskGroups[0].Count != 5 {
		t.Fatalf("count = %d", *res.Job.TaskGroups[0].Count)
	}
}
