package structs_test

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

func TestTaskActions_ValidateAndList(t *testing.T) {
	cases := []struct {
		name    string
		actions []*structs.Action
		want    string
	}{
		{name: "valid", actions: []*structs.Action{{Name: "a", Command: "/bin/echo", Args: []string{"x"}}, {Name: "b", Command: "/bin/date"}}},
		{name: "no name", actions: []*structs.Action{{Command: "/bin/echo"}}, want: "action 0: missing name"},
		{name: "no command", actions: []*structs.Action{{Name: "a"}}, want: `action "a": missing command`},
		{name: "twice", actions: []*structs.Action{{Name: "a", Command: "x"}, {Name: "a", Command: "y"}}, want: `action "a" is defined more than once`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job := serviceJob()
			job.TaskGroups[0].Tasks[0].Actions = tc.actions
			err := job.Validate()
			if tc.want == "" {
				must.NoError(t, err)
				return
			}
			must.ErrorContains(t, err, tc.want)
		})
	}

	job := serviceJob()
	job.TaskGroups[0].Tasks[0].Actions = []*structs.Action{{Name: "hello", Command: "/bin/echo", Args: []string{"hi"}}}
	must.Eq(t, []*structs.JobAction{{Name: "hello", Command: "/bin/echo", Args: []string{"hi"}, TaskName: "web", TaskGroupName: "web"}},
		job.Actions())
	must.Eq(t, []string{"/bin/echo", "hi"}, job.TaskGroups[0].Tasks[0].Actions[0].Argv())
	copied := job.Copy()
	copied.TaskGroups[0].Tasks[0].Actions[0].Args[0] = "changed"
	must.Eq(t, "hi", job.TaskGroups[0].Tasks[0].Actions[0].Args[0], must.Sprint("copies do not share arguments"))
}
