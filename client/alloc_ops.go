package client

import (
	"context"
	"errors"
	"fmt"

	"github.com/opennomad/nomad/client/allocrunner"
	"github.com/opennomad/nomad/client/driver"
	"github.com/opennomad/nomad/client/taskrunner"
	"github.com/opennomad/nomad/structs"
)

// runner returns the runner of an allocation this client runs.
func (c *Client) runner(allocID string) (*allocrunner.AllocRunner, error) {
	if allocID == "" {
		return nil, invalid("must provide a valid alloc id")
	}
	ar := c.allocs.Runner(allocID)
	if ar == nil {
		return nil, unknownAlloc(allocID)
	}
	return ar, nil
}

// tasks returns the named task of an allocation, or every task for "".
func (c *Client) tasks(allocID, task string) ([]*taskrunner.TaskRunner, error) {
	ar, err := c.runner(allocID)
	if err != nil {
		return nil, err
	}
	if task != "" {
		tr := ar.TaskRunner(task)
		if tr == nil {
			return nil, notFound("alloc %q: unknown task name %q", allocID, task)
		}
		return []*taskrunner.TaskRunner{tr}, nil
	}
	tg := ar.Alloc().Job.LookupTaskGroup(ar.Alloc().TaskGroup)
	out := make([]*taskrunner.TaskRunner, 0, len(tg.Tasks))
	for _, t := range tg.Tasks {
		out = append(out, ar.TaskRunner(t.Name))
	}
	return out, nil
}

// RestartAlloc restarts the task named task, or with task "" every
// running task of the allocation, in place: each gets its kill signal and
// starts again at once, and the restart does not count against the
// restart policy. allTasks asks for every task and excludes naming one.
// Tasks that already finished (prestart tasks, batch tasks) are not run
// again.
func (c *Client) RestartAlloc(ctx context.Context, allocID, task string, allTasks bool) error {
	if allTasks && task != "" {
		return invalid("task name cannot be set when restarting all tasks")
	}
	trs, err := c.tasks(allocID, task)
	if err != nil {
		return err
	}
	reason := "User requested task to restart"
	if task == "" {
		reason = "User requested running tasks to restart"
	}
	var errs []error
	restarted := 0
	for _, tr := range trs {
		if tr.Handle() == nil {
			if task != "" {
				return invalid("alloc %q: task %q is not running", allocID, task)
			}
			continue
		}
		if err := tr.Restart(ctx, reason); err != nil {
			errs = append(errs, err)
			continue
		}
		restarted++
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("alloc %q: restarting: %w", allocID, err)
	}
	if restarted == 0 {
		return invalid("alloc %q: no task is running", allocID)
	}
	return nil
}

// SignalTask sends a signal ("SIGHUP", "HUP") to the named task, or with
// task "" to every running task of the allocation.
func (c *Client) SignalTask(allocID, task, signal string) error {
	if signal == "" {
		signal = "SIGKILL"
	}
	if _, err := driver.ParseSignal(signal); err != nil {
		return invalid("alloc %q: %v", allocID, err)
	}
	trs, err := c.tasks(allocID, task)
	if err != nil {
		return err
	}
	var errs []error
	signalled := 0
	for _, tr := range trs {
		if tr.Handle() == nil {
			if task != "" {
				return invalid("alloc %q: task %q is not running", allocID, task)
			}
			continue
		}
		if err := tr.Signal(signal); err != nil {
			errs = append(errs, err)
			continue
		}
		signalled++
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("alloc %q: signalling: %w", allocID, err)
	}
	if signalled == 0 {
		return invalid("alloc %q: no task is running", allocID)
	}
	return nil
}

// AllocState returns the allocation as the client sees it (status and
// task states included).
func (c *Client) AllocState(allocID string) (*structs.Allocation, error) {
	ar, err := c.runner(allocID)
	if err != nil {
		return nil, err
	}
	return ar.Alloc(), nil
}
