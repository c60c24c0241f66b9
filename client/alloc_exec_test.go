package client

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/client/driver"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

func execOpts(cmd ...string) (*driver.ExecOptions, *bytes.Buffer, *bytes.Buffer) {
	var out, errOut bytes.Buffer
	return &driver.ExecOptions{Command: cmd, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut}, &out, &errOut
}

func TestClient_ExecRawExec(t *testing.T) {
	srv := testServer(t, nil)
	cfg := testClientConfig(t, local(srv))
	cfg.Options[OptionRawExecEnable] = "true"
	c := testClient(t, cfg)
	eventually(t, "ready", func() bool { return nodeStatus(t, srv, c.NodeID()) == structs.NodeStatusReady })
	job := mock.Job(mock.Count(1)) // raw_exec
	job.TaskGroups[0].Networks = nil
	job.TaskGroups[0].Tasks[0].Config = map[string]interface{}{"command": "/bin/sleep", "args": []string{"3600"}}
	job = registerJob(t, srv, job)
	a := place(t, srv, job, c.NodeID(), 1)[0]
	eventually(t, "running", clientStatusIs(t, srv, a.ID, structs.AllocClientStatusRunning))

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	opts, out, errOut := execOpts("/bin/sh", "-c", `echo "$NOMAD_ALLOC_ID $NOMAD_TASK_NAME"; pwd; echo err >&2; exit 3`)
	code, err := c.ExecTask(ctx, a.ID, "web", opts)
	must.NoError(t, err)
	must.Eq(t, 3, code)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	must.Eq(t, a.ID+" web", lines[0])
	must.StrHasSuffix(t, "/web", lines[1]) // the task directory
	must.Eq(t, "err\n", errOut.String())

	iso, err := c.ExecIsolation(a.ID, "web")
	must.NoError(t, err)
	must.Eq(t, driver.FSIsolationNone, iso)
}

func TestClient_ExecMock(t *testing.T) {
	c, a := runningMockAlloc(t)
	ctx := context.Background()

	opts, out, _ := execOpts("showinput")
	opts.Stdin = strings.NewReader("ping")
	code, err := c.ExecTask(ctx, a.ID, "web", opts)
	must.NoError(t, err)
	must.Zero(t, code)
	must.Eq(t, "TTY: false\nStdin:\nping\n", out.String())

	iso, err := c.ExecIsolation(a.ID, "web")
	must.NoError(t, err)
	must.Eq(t, driver.FSIsolationImage, iso)

	// The task configures no exec_command.
	opts, _, _ = execOpts("ls")
	_, err = c.ExecTask(ctx, a.ID, "web", opts)
	must.ErrorContains(t, err, "no exec_command")
}

func TestClient_ExecDisabled(t *testing.T) {
	srv := testServer(t, nil)
	cfg := testClientConfig(t, local(srv))
	cfg.DisableRemoteExec = true
	c := testClient(t, cfg)
	opts, _, _ := execOpts("showinput")
	_, err := c.ExecTask(context.Background(), "any", "web", opts)
	must.ErrorIs(t, err, ErrForbidden)
	must.EqError(t, err, "Permission denied")
}

func TestClient_ExecRefusals(t *testing.T) {
	c, a := runningMockAlloc(t)
	cases := []struct {
		name, alloc, task string
		cmd               []string
		kind              error
		text              string
	}{
		{"no task", a.ID, "", []string{"ls"}, ErrInvalid, "must provide task name"},
		{"unknown alloc", "nope", "web", []string{"ls"}, ErrNotFound, `Unknown allocation "nope"`},
		{"unknown task", a.ID, "db", []string{"ls"}, ErrNotFound, `unknown task name "db"`},
		{"no command", a.ID, "web", nil, ErrInvalid, "command is not present"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts, _, _ := execOpts(tc.cmd...)
			_, err := c.ExecTask(context.Background(), tc.alloc, tc.task, opts)
			must.ErrorIs(t, err, tc.kind)
			must.EqError(t, err, tc.text)
		})
	}
}
