package client

import (
	"context"
	"errors"
	"fmt"

	"github.com/opennomad/nomad/client/driver"
	"github.com/opennomad/nomad/client/taskrunner"
	"github.com/opennomad/nomad/structs"
)

// execTask finds the running task a command is to be exec'd into; the
// refusals carry the texts Nomad's clients answer with.
func (c *Client) execTask(allocID, task string) (*taskrunner.TaskRunner, error) {
	if task == "" {
		return nil, invalid("must provide task name")
	}
	ar := c.allocs.Runner(allocID)
	if allocID == "" || ar == nil {
		return nil, &opError{kind: ErrNotFound, msg: fmt.Sprintf("Unknown allocation %q", allocID), cause: structs.ErrUnknownAlloc}
	}
	alloc := ar.Alloc()
	if alloc.ClientTerminalStatus() {
		return nil, invalid("exec not possible, client status of allocation %s is %s", allocID, alloc.ClientStatus)
	}
	tr := ar.TaskRunner(task)
	if tr == nil {
		return nil, notFound("unknown task name %q", task)
	}
	return tr, nil
}

// ExecIsolation is how far the driver of an allocation's task confines a
// command exec'd into it: the agent needs alloc-node-exec of a caller
// when it is driver.FSIsolationNone.
func (c *Client) ExecIsolation(allocID, task string) (driver.FSIsolation, error) {
	tr, err := c.execTask(allocID, task)
	if err != nil {
		return "", err
	}
	iso, err := tr.ExecIsolation()
	if errors.Is(err, taskrunner.ErrExecUnsupported) {
		return "", invalid("%v", err)
	}
	return iso, err
}

// ExecTask runs a command in a running task of an allocation (nomad alloc
// exec) and returns its exit code. Cancelling ctx kills the command.
func (c *Client) ExecTask(ctx context.Context, allocID, task string, opts *driver.ExecOptions) (int, error) {
	if c.cfg.DisableRemoteExec {
		// Nomad's text: the operator turned exec off on this node.
		return 0, forbidden("Permission denied")
	}
	tr, err := c.execTask(allocID, task)
	if err != nil {
		return 0, err
	}
	if len(opts.Command) == 0 || opts.Command[0] == "" {
		return 0, invalid("command is not present")
	}
	st := tr.TaskState()
	if st.State == structs.TaskStatePending {
		return 0, invalid("task %q not started yet.", task)
	}
	if st.State == structs.TaskStateDead || tr.Handle() == nil {
		return 0, invalid("task %q is not running.", task)
	}
	code, err := tr.Exec(ctx, opts)
	switch {
	case errors.Is(err, taskrunner.ErrExecUnsupported):
		return 0, invalid("%v", err)
	case errors.Is(err, taskrunner.ErrNotRunning):
		return 0, invalid("task %q is not running.", task)
	case err != nil:
		return 0, fmt.Errorf("alloc %q: task %q: exec: %w", allocID, task, err)
	}
	return code, nil
}
