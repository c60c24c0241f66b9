package mock

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/opennomad/nomad/client/driver"
)

// ExecCommand is the simulated command of the exec_command config.
type ExecCommand struct {
	RunFor       driver.Duration `json:"run_for"`
	ExitCode     int             `json:"exit_code"`
	StdoutString string          `json:"stdout_string"`
	StderrString string          `json:"stderr_string"`
}

var _ driver.Execer = (*Driver)(nil)

// ExecTask simulates a command in the task: "showinput" reads stdin to
// its end and writes it back with the tty flag; any other command does
// what the task's exec_command says, ignoring its arguments.
func (d *Driver) ExecTask(ctx context.Context, cfg *driver.TaskConfig, _ driver.Handle, opts *driver.ExecOptions) (int, error) {
	if len(opts.Command) == 0 {
		return 0, errors.New("command is not present")
	}
	if opts.Command[0] == "showinput" {
		in, err := io.ReadAll(readerOrEmpty(opts.Stdin))
		if err != nil {
			return 0, err
		}
		fmt.Fprintf(opts.Stdout, "TTY: %v\nStdin:\n%s\n", opts.Tty, in)
		return 0, nil
	}
	var tc TaskConfig
	if err := driver.DecodeConfig(cfg.Config, &tc); err != nil {
		return 0, err
	}
	ec := tc.ExecCommand
	if ec == nil {
		return 0, fmt.Errorf("%s: task %q has no exec_command configured", Name, cfg.Name)
	}
	io.WriteString(opts.Stdout, ec.StdoutString)
	io.WriteString(opts.Stderr, ec.StderrString)
	if ec.RunFor > 0 {
		select {
		case <-time.After(time.Duration(ec.RunFor)):
		case <-ctx.Done():
			return driver.ExitCodeForSignal(9), nil
		}
	}
	return ec.ExitCode, nil
}

// ExecIsolation is image: simulated commands touch nothing of the node.
func (d *Driver) ExecIsolation() driver.FSIsolation { return driver.FSIsolationImage }

func readerOrEmpty(r io.Reader) io.Reader {
	if r == nil {
		return strings.NewReader("")
	}
	return r
}
