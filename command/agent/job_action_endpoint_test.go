package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/api"
	"github.com/opennomad/nomad/structs"
)

// TestJobAction_RawExec: a task's actions are listed with the job, and
// one runs in a running allocation through the exec machinery, with its
// own command line whatever command the caller sends.
func TestJobAction_RawExec(t *testing.T) {
	ra, alloc := startClientAgentRunningJob(t, "raw_exec",
		map[string]interface{}{"command": "/bin/sleep", "args": []interface{}{"3600"}}, nil,
		func(task *structs.Task) {
			task.Actions = []*structs.Action{
				{Name: "greet", Command: "/bin/sh", Args: []string{"-c", "echo hello $NOMAD_TASK_NAME; echo warn >&2; exit 4"}},
				{Name: "echo-in", Command: "cat"},
			}
		})
	c := execClient(t, ra)

	resp, body := ra.do("GET", "/v1/job/"+alloc.JobID+"/actions", "")
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	var actions []*api.JobAction
	must.NoError(t, json.Unmarshal([]byte(body), &actions))
	must.Eq(t, []*api.JobAction{
		{Name: "greet", Command: "/bin/sh", Args: []string{"-c", "echo hello $NOMAD_TASK_NAME; echo warn >&2; exit 4"}, TaskName: "web", TaskGroupName: "web"},
		{Name: "echo-in", Command: "cat", TaskName: "web", TaskGroupName: "web"},
	}, actions)

	apiAlloc, _, err := c.Allocations().Info(alloc.ID, nil)
	must.NoError(t, err)
	run := func(action, task, stdin string) (int, string, string, error) {
		var stdout, stderr bytes.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		code, err := c.Jobs().ActionExec(ctx, apiAlloc, alloc.JobID, task, false, []string{"/bin/false"}, action,
			strings.NewReader(stdin), &stdout, &stderr, nil, nil)
		return code, stdout.String(), stderr.String(), err
	}
	code, stdout, stderr, err := run("greet", "web", "")
	must.NoError(t, err)
	must.Eq(t, 4, code)
	must.Eq(t, "hello web\n", stdout)
	must.Eq(t, "warn\n", stderr)

	code, stdout, _, err = run("echo-in", "web", "piped\n")
	must.NoError(t, err)
	must.Eq(t, 0, code)
	must.Eq(t, "piped\n", stdout)

	for _, tc := range []struct{ action, task, want string }{
		{"nope", "web", `action "nope" not found in task "web"`},
		{"greet", "other", `task "other" not found in group "web"`},
	} {
		_, _, _, err := run(tc.action, tc.task, "")
		must.ErrorContains(t, err, tc.want)
	}
	_, err = c.Jobs().ActionExec(context.Background(), &nomadapi.Allocation{ID: structs.GenerateUUID(), TaskGroup: "web"},
		alloc.JobID, "web", false, nil, "greet", strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{}, nil, nil)
	must.Error(t, err)
}

// TestJobAction_ACL: running an action needs what exec needs in the
// job's namespace (raw_exec: alloc-exec and alloc-node-exec), besides
// reading the allocation; a token that may only read is refused.
func TestJobAction_ACL(t *testing.T) {
	ra, alloc := startClientAgentRunningJob(t, "raw_exec",
		map[string]interface{}{"command": "/bin/sleep", "args": []interface{}{"3600"}},
		func(c *Config) { c.ACL.Enabled = true },
		func(task *structs.Task) {
			task.Actions = []*structs.Action{{Name: "hi", Command: "/bin/echo", Args: []string{"hi"}}}
		})
	mgmt := ra.mgmt
	cases := []struct {
		name    string
		token   string
		allowed bool
	}{
		{"anonymous", "", false},
		{"read", ra.mustToken(mgmt, "read", nsRead), false},
		{"alloc-exec only", ra.mustToken(mgmt, "exec", nsCaps("read-job", "alloc-exec")), false},
		{"exec and node-exec", ra.mustToken(mgmt, "both", nsCaps("read-job", "alloc-exec", "alloc-node-exec")), true},
		{"management", mgmt, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := nomadapi.NewClient(&nomadapi.Config{Address: ra.base, SecretID: tc.token})
			must.NoError(t, err)
			apiAlloc := &nomadapi.Allocation{ID: alloc.ID, Namespace: alloc.Namespace, TaskGroup: alloc.TaskGroup}
			var stdout bytes.Buffer
			code, err := c.Jobs().ActionExec(context.Background(), apiAlloc, alloc.JobID, "web", false, nil, "hi",
				strings.NewReader(""), &stdout, &bytes.Buffer{}, nil, nil)
			if !tc.allowed {
				must.Error(t, err)
				must.StrContains(t, err.Error(), "403")
				must.Eq(t, "", stdout.String())
				return
			}
			must.NoError(t, err)
			must.Zero(t, code)
			must.Eq(t, "hi\n", stdout.String())
		})
	}
}
