package command

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/opennomad/nomad/api"
	"github.com/opennomad/nomad/command/agent"
)

// startExecAgent starts a -dev agent with its client (raw_exec on, as
// -dev has it) and runs a raw_exec job whose task "web" sleeps. It
// returns the agent's address and the running allocation's ID.
func startExecAgent(t *testing.T) (string, string) {
	t.Helper()
	return startExecAgentWith(t, nil)
}

// startExecAgentWith is startExecAgent with the task changed by mod
// first.
func startExecAgentWith(t *testing.T, mod func(*api.Task)) (string, string) {
	t.Helper()
	cfg, err := agent.LoadConfig([]string{"-dev", "-node", "exec-1"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Ports.HTTP = 0
	cfg.LogLevel = "ERROR"
	cfg.DataDir = t.TempDir()
	a, err := agent.NewAgent(cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Shutdown() })
	addr := "http://" + a.HTTPAddr()
	c, err := api.NewClient(&api.Config{Address: addr})
	if err != nil {
		t.Fatal(err)
	}
	job := testJob("sleeper", 1, 64)
	job.TaskGroups[0].Tasks[0].Name = "web"
	job.TaskGroups[0].Tasks[0].Config = map[string]any{"command": "/bin/sleep", "args": []any{"3600"}}
	if mod != nil {
		mod(job.TaskGroups[0].Tasks[0])
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, _, err = c.Jobs().Register(job, nil); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("registering the job: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for {
		stubs, _, err := c.Jobs().Allocations("sleeper", false, nil)
		if err == nil {
			for _, s := range stubs {
				if s.ClientStatus == "running" {
					return addr, s.ID
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the allocation never ran")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestAllocExec_CLI runs commands in a real raw_exec task: output on the
// right streams, the remote exit code as the CLI's, stdin passed with -i,
// -job picking a running allocation of the job.
func TestAllocExec_CLI(t *testing.T) {
	addr, allocID := startExecAgent(t)
	cases := []struct {
		name       string
		stdin      string
		args       []string
		wantCode   int
		wantStdout string
		errHas     string
	}{
		{name: "exit code", args: []string{allocID, "/bin/sh", "-c", "echo hi; exit 3"}, wantCode: 3, wantStdout: "hi\n"},
		{name: "prefix and task", args: []string{"-task", "web", allocID[:8], "/bin/sh", "-c", "echo $NOMAD_TASK_NAME"}, wantStdout: "web\n"},
		{name: "stdin", stdin: "typed\n", args: []string{"-i", allocID, "cat"}, wantStdout: "typed\n"},
		{name: "no stdin", stdin: "typed\n", args: []string{"-i=false", allocID, "cat"}, wantStdout: ""},
		{name: "stderr", args: []string{allocID, "/bin/sh", "-c", "echo bad >&2"}, errHas: "bad"},
		{name: "by job", args: []string{"-job", "sleeper", "/bin/sh", "-c", "echo $NOMAD_JOB_NAME"}, wantStdout: "sleeper\n"},
		{name: "by job and group", args: []string{"-job", "-group", "web", "sleeper", "/bin/sh", "-c", "echo $NOMAD_GROUP_NAME"}, wantStdout: "web\n"},
		{name: "no such group", args: []string{"-job", "-group", "db", "sleeper", "ls"}, wantCode: 1, errHas: `group "db"`},
		{name: "unknown task", args: []string{"-task", "nope", allocID, "ls"}, wantCode: 1, errHas: "nope"},
		{name: "-t needs -i", args: []string{"-i=false", "-t", allocID, "ls"}, wantCode: 1, errHas: "-t requires -i"},
		{name: "missing command", args: []string{allocID}, wantCode: 1, errHas: "at least two arguments"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := runCommand(t, addr, runOpts{stdin: tc.stdin}, append([]string{"alloc", "exec"}, tc.args...)...)
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

func TestExpandShortFlags(t *testing.T) {
	cases := []struct{ in, want string }{
		{"-it abc sh", "-i -t abc sh"},
		{"-task web -it abc sh -it", "-task web -i -t abc sh -it"},
		{"-job -ti web ls", "-job -i -t web ls"},
		{"abc -it", "abc -it"},
	}
	for _, tc := range cases {
		got := strings.Join(expandShortFlags(strings.Fields(tc.in)), " ")
		if got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestEscapeReader(t *testing.T) {
	cases := []struct {
		in, want string
		exit     bool
	}{
		{in: "ls\n", want: "ls\n"},
		{in: "~.", want: "", exit: true},
		{in: "echo\n~.rest", want: "echo\n", exit: true},
		{in: "a~.b\n", want: "a~.b\n"},
		{in: "~~x", want: "~x"},
		{in: "~x", want: "~x"},
	}
	for _, tc := range cases {
		r := newEscapeReader(strings.NewReader(tc.in), '~')
		got, err := io.ReadAll(r)
		if string(got) != tc.want {
			t.Errorf("%q: read %q, want %q", tc.in, got, tc.want)
		}
		if (err == errEscapeExit) != tc.exit {
			t.Errorf("%q: err %v, want exit %v", tc.in, err, tc.exit)
		}
	}
}
