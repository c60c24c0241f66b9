package jobspec

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/opennomad/nomad/api"
)

// TestParsedJobsMatchNomadCanonicalization checks, for every fixture, that
// the parsed job is valid input for Nomad's own Go package and that our
// Canonicalize fills the same defaults Nomad's does.
func TestParsedJobsMatchNomadCanonicalization(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.nomad.hcl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("fixtures: %v %v", files, err)
	}
	files = append(files, ExampleJobFileName)
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			res, err := Parse(path, src, Options{AllowFS: true})
			if err != nil {
				t.Fatal(err)
			}
			raw, err := json.Marshal(res.Job)
			if err != nil {
				t.Fatal(err)
			}

			var theirs nomadapi.Job
			if err := json.Unmarshal(raw, &theirs); err != nil {
				t.Fatalf("Nomad's api cannot decode the parsed job: %v", err)
			}
			theirs.Canonicalize()
			want, _ := json.Marshal(&theirs)

			var ours api.Job
			if err := json.Unmarshal(raw, &ours); err != nil {
				t.Fatal(err)
			}
			ours.Canonicalize()
			ourJSON, _ := json.Marshal(&ours)
			var viaNomad nomadapi.Job
			if err := json.Unmarshal(ourJSON, &viaNomad); err != nil {
				t.Fatal(err)
			}
			got, _ := json.Marshal(&viaNomad)
			if string(got) != string(want) {
				t.Fatalf("canonical forms differ\n ours: %s\nNomad: %s", got, want)
			}
		})
	}
}

func TestJSONSyntaxJob(t *testing.T) {
	src := `{
  "job": {
    "web": {
      "datacenters": ["dc1"],
      "group": {
        "g": {
          "count": 2,
          "task": {
            "t": {
              "driver": "raw_exec",
              "config": {"command": "/bin/sleep", "args": ["60"]},
              "env": {"NODE": "${node.unique.name}"}
            }
          }
        }
      }
    }
  }
}`
	res, err := Parse("web.nomad.json", []byte(src), Options{})
	if err != nil {
		t.Fatal(err)
	}
	tg := res.Job.TaskGroups[0]
	task := tg.Tasks[0]
	if *tg.Count != 2 || task.Driver != "raw_exec" || task.Env["NODE"] != "${node.unique.name}" {
		t.Fatalf("group = %+v task = %+v", tg, task)
	}
	assertSameJSON(t, task.Config, map[string]any{"command": "/bin/sleep", "args": []any{"60"}})
}
