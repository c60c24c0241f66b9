package mock

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/opennomad/nomad/client/driver"
)

func TestExecTask(t *testing.T) {
	d := New()
	cfg := &driver.TaskConfig{Name: "web", Config: map[string]interface{}{
		"exec_command": map[string]interface{}{"exit_code": 4, "stdout_string": "out", "stderr_string": "err"},
	}}
	var stdout, stderr bytes.Buffer
	code, err := d.ExecTask(context.Background(), cfg, nil, &driver.ExecOptions{Command: []string{"anything"}, Stdout: &stdout, Stderr: &stderr})
	if err != nil || code != 4 || stdout.String() != "out" || stderr.String() != "err" {
		t.Fatalf("code %d err %v stdout %q stderr %q", code, err, stdout.String(), stderr.String())
	}

	stdout.Reset()
	code, err = d.ExecTask(context.Background(), &driver.TaskConfig{}, nil, &driver.ExecOptions{
		Command: []string{"showinput"}, Tty: true, Stdin: strings.NewReader("abc"), Stdout: &stdout})
	if err != nil || code != 0 || stdout.String() != "TTY: true\nStdin:\nabc\n" {
		t.Fatalf("showinput: code %d err %v stdout %q", code, err, stdout.String())
	}

	// A long command ends when the session does.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	long := &driver.TaskConfig{Config: map[string]interface{}{"exec_command": map[string]interface{}{"run_for": "1h"}}}
	start := time.Now()
	code, _ = d.ExecTask(ctx, long, nil, &driver.ExecOptions{Command: []string{"x"}, Stdout: &stdout, Stderr: &stderr})
	if code != 137 || time.Since(start) > 10*time.Second {
		t.Fatalf("cancelled: code %d after %v", code, time.Since(start))
	}

	if _, err := d.ExecTask(context.Background(), &driver.TaskConfig{Name: "web"}, nil, &driver.ExecOptions{Command: []string{"ls"}}); err == nil {
		t.Fatal("no exec_command: no error")
	}
}
