package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
)

// JobAction is an action a task of a job offers, with the task and group
// offering it.
type JobAction struct {
	Name          string
	Command       string
	Args          []string
	TaskName      string
	TaskGroupName string
}

// Actions lists the actions the tasks of jobID offer.
func (j *Jobs) Actions(jobID string, q *QueryOptions) ([]*JobAction, *QueryMeta, error) {
	var out []*JobAction
	qm, err := j.client.query("/v1/job/"+escape(jobID)+"/actions", &out, q)
	if err != nil {
		return nil, nil, err
	}
	return out, qm, nil
}

// ActionExec runs the action named action of task in a running
// allocation of job, over a websocket to /v1/job/:id/action, streams as
// Allocations.Exec. command is not sent: the action defines the command
// line. It returns the command's exit code, or -2 and the error.
func (j *Jobs) ActionExec(ctx context.Context, alloc *Allocation, job string, task string, tty bool, command []string,
	action string, stdin io.Reader, stdout, stderr io.Writer,
	terminalSizeCh <-chan TerminalSize, q *QueryOptions) (exitCode int, err error) {
	if alloc == nil {
		return -2, errors.New("action: allocation is required")
	}
	r := j.client.newRequest(http.MethodGet, "/v1/job/"+escape(job)+"/action")
	q.apply(r)
	cmdJSON, err := json.Marshal(command)
	if err != nil {
		return -2, fmt.Errorf("action: encoding command: %w", err)
	}
	r.params.Set("action", action)
	r.params.Set("allocID", alloc.ID)
	r.params.Set("group", alloc.TaskGroup)
	r.params.Set("task", task)
	r.params.Set("tty", strconv.FormatBool(tty))
	r.params.Set("command", string(cmdJSON))
	conn, err := j.client.dialExec(ctx, r, "")
	if err != nil {
		return -2, err
	}
	defer conn.Close()
	s := &execStream{conn: conn}
	return s.run(ctx, stdin, stdout, stderr, terminalSizeCh)
}
