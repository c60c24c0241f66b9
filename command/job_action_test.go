package command

import (
	"strings"
	"testing"

	"github.com/opennomad/nomad/api"
)

// TestJobAction_CLI runs a task's actions in a real raw_exec task, by
// allocation or by group and task, with the remote exit code as the
// CLI's; `nomad action` is the same command.
func TestJobAction_CLI(t *testing.T) {
	addr, allocID := startExecAgentWith(t, func(task *api.Task) {
		task.Actions = []*api.Action{
			{Name: "hello", Command: "/bin/sh", Args: []string{"-c", "echo hello $NOMAD_TASK_NAME; exit 2"}},
			{Name: "echo-in", Command: "cat"},
		}
	})
	cases := []struct {
		name       string
		stdin      string
		args       []string
		wantCode   int
		wantStdout string
		errHas     string
	}{
		{name: "by alloc", args: []string{"job", "action", "-job", "sleeper", "-alloc", allocID[:8], "hello"}, wantCode: 2, wantStdout: "hello web\n"},
		{name: "by group and task", args: []string{"action", "-job", "sleeper", "-group", "web", "-task", "web", "hello"}, wantCode: 2, wantStdout: "hello web\n"},
		{name: "stdin", stdin: "typed\n", args: []string{"action", "-job", "sleeper", "-alloc", allocID, "echo-in"}, wantStdout: "typed\n"},
		{name: "unknown action", args: []string{"action", "-job", "sleeper", "-alloc", allocID, "nope"}, wantCode: 1, errHas: `action "nope" not found`},
		{name: "no job", args: []string{"action", "-alloc", allocID, "hello"}, wantCode: 1, errHas: "A job ID is required"},
		{name: "no group", args: []string{"action", "-job", "sleeper", "hello"}, wantCode: 1, errHas: "A group name is required"},
		{name: "no action", args: []string{"action", "-job", "sleeper", "-alloc", allocID}, wantCode: 1, errHas: "An action name is required"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := runCommand(t, addr, runOpts{stdin: tc.stdin}, tc.args...)
			if res.code != tc.wantCode {
				t.Errorf("exit code %d, want %d\nstdout: %s\nstderr: %s", res.code, tc.wantCode, res.stdout, res.stderr)
			}
			if tc.errHas == "" && res.stdout != tc.wantStdout {
				t.Errorf("stdout %q, want %q (stderr %q)", res.stdout, tc.wantStdout, res.stderr)
			}
			if !strings.Contains(res.stderr, tc.errHas) {
				t.Errorf("stderr %q lacks %q", res.stderr, tc.errHas)
			}
		})
	}
}
