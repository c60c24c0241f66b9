package jobspec

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/api"
)

func TestParse_TaskActions(t *testing.T) {
	src := `
job "web" {
  group "g" {
    task "t" {
      driver = "raw_exec"
      config { command = "/bin/sleep" }
      action "hello" {
        command = "/bin/echo"
        args    = ["hi", "there"]
      }
      action "date" {
        command = "/bin/date"
      }
    }
  }
}`
	res, err := Parse("web.nomad.hcl", []byte(src), Options{})
	must.NoError(t, err)
	must.Eq(t, []*api.Action{
		{Name: "hello", Command: "/bin/echo", Args: []string{"hi", "there"}},
		{Name: "date", Command: "/bin/date"},
	}, res.Job.TaskGroups[0].Tasks[0].Actions)

	_, err = Parse("web.nomad.hcl", []byte("job \"web\" {\n group \"g\" {\n task \"t\" {\n action \"x\" {\n }\n }\n }\n}\n"), Options{})
	must.ErrorContains(t, err, "command")
}
