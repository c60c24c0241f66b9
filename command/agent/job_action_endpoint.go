package agent

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"

	"github.com/gorilla/websocket"

	"github.com/opennomad/nomad/structs"
)

// jobActions serves GET /v1/job/:id/actions: every action the job's
// tasks offer, with the task and group offering it.
func (s *HTTPServer) jobActions(w http.ResponseWriter, r *http.Request, id string) (interface{}, error) {
	job, err := s.readJob(w, r, id)
	if err != nil {
		return nil, err
	}
	return job.Actions(), nil
}

// jobAction serves GET /v1/job/:id/action?action=&allocID=&group=&task=&tty=
// as a websocket: it runs the named action of the task in the
// allocation, as the allocation's own job version defines it. The
// allocation is read with the caller's token; the command then goes
// through the allocation exec route, whose capability (alloc-exec, and
// alloc-node-exec for drivers without isolation) is checked as for any
// exec, and which forwards to the agent running the allocation.
func (s *HTTPServer) jobAction(w http.ResponseWriter, r *http.Request, jobID string) (interface{}, error) {
	if err := requireMethod(r, http.MethodGet); err != nil {
		return nil, err
	}
	q := r.URL.Query()
	name, allocID, task := q.Get("action"), q.Get("allocID"), q.Get("task")
	switch {
	case name == "":
		return nil, codedError(http.StatusBadRequest, "missing action name")
	case allocID == "":
		return nil, codedError(http.StatusBadRequest, "missing allocation ID")
	case task == "":
		return nil, codedError(http.StatusBadRequest, "missing task name")
	}
	if !websocket.IsWebSocketUpgrade(r) {
		return nil, codedError(http.StatusBadRequest, "action needs a websocket: send the request with Upgrade: websocket")
	}
	args := structs.AllocSpecificRequest{AllocID: allocID}
	if err := s.parseQueryOptions(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.SingleAllocResponse
	if err := s.rpc.RPC("Alloc.GetAlloc", &args, &out); err != nil {
		return nil, err
	}
	alloc := out.Alloc
	if alloc == nil || alloc.JobID != jobID {
		return nil, codedError(http.StatusNotFound, fmt.Sprintf("allocation %q of job %q not found", allocID, jobID))
	}
	action, err := findAction(alloc, task, name)
	if err != nil {
		return nil, err
	}
	command, err := json.Marshal(action.Argv())
	if err != nil {
		return nil, err
	}
	exec := r.Clone(r.Context())
	params := url.Values{}
	for k, v := range q {
		switch k {
		case "action", "allocID", "group":
		default:
			params[k] = v
		}
	}
	params.Set("command", string(command))
	exec.URL.Path = "/v1/client/allocation/" + allocID + "/exec"
	exec.URL.RawPath = ""
	exec.URL.RawQuery = params.Encode()
	exec.RequestURI = exec.URL.RequestURI()
	s.mux.ServeHTTP(w, exec)
	return nil, nil
}

// findAction is the action name of task in the allocation's job.
func findAction(alloc *structs.Allocation, task, name string) (*structs.Action, error) {
	if alloc.Job == nil {
		return nil, codedError(http.StatusNotFound, fmt.Sprintf("allocation %q has no job", alloc.ID))
	}
	tg := alloc.Job.LookupTaskGroup(alloc.TaskGroup)
	if tg == nil {
		return nil, codedError(http.StatusNotFound, fmt.Sprintf("task group %q not found", alloc.TaskGroup))
	}
	for _, t := range tg.Tasks {
		if t.Name != task {
			continue
		}
		for _, a := range t.Actions {
			if a != nil && a.Name == name {
				return a, nil
			}
		}
		return nil, codedError(http.StatusNotFound, fmt.Sprintf("action %q not found in task %q", name, task))
	}
	return nil, codedError(http.StatusNotFound, fmt.Sprintf("task %q not found in group %q", task, alloc.TaskGroup))
}
