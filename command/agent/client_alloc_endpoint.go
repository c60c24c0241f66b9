package agent

import (
	"context"
	"errors"
	"io"
	"net/http"

	"github.com/opennomad/nomad/client"
	"github.com/opennomad/nomad/structs"
)

// ClientAPI is the node agent as the /v1/client endpoints use it: the
// in-process *client.Client. Each handler makes one call, so that a
// forwarding implementation (to the node running the allocation) can
// stand in later.
type ClientAPI interface {
	Logs(allocID string, req client.LogRequest) (*client.LogReader, error)
	ListDir(allocID, path string) ([]*client.AllocFileInfo, error)
	StatFile(allocID, path string) (*client.AllocFileInfo, error)
	ReadFile(allocID, path string, offset, limit int64) (io.ReadCloser, error)
	AllocStats(allocID string) (*client.AllocResourceUsage, error)
	// AllocChecks is the latest result of each native service check of
	// the allocation, by check ID.
	AllocChecks(allocID string) (map[string]client.CheckResult, error)
	RestartAlloc(ctx context.Context, allocID, task string, allTasks bool) error
	SignalTask(allocID, task, signal string) error
	// AllocState is the allocation as the client has it; the routes
	// check the caller's token in its namespace.
	AllocState(allocID string) (*structs.Allocation, error)
}

var clientAllocSubresources = map[string]bool{"stats": true, "checks": true, "restart": true, "signal": true, "exec": true}

// clientAllocRequest serves /v1/client/allocation/:id/{stats,checks,restart,signal,exec}.
func (s *HTTPServer) clientAllocRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	id, sub := splitObjectPath(r, "/v1/client/allocation/", clientAllocSubresources)
	if id == "" || sub == "" {
		return nil, codedError(http.StatusNotFound, "Invalid URL path: want /v1/client/allocation/<id>/stats, /checks, /restart, /signal or /exec")
	}
	c, err := s.localClient()
	if err != nil {
		return nil, err
	}
	switch sub {
	case "exec":
		return nil, s.allocExec(w, r, id)
	case "stats":
		if err := requireMethod(r, http.MethodGet); err != nil {
			return nil, err
		}
		usage, err := c.AllocStats(id)
		return usage, clientError(err)
	case "checks":
		if err := requireMethod(r, http.MethodGet); err != nil {
			return nil, err
		}
		checks, err := c.AllocChecks(id)
		return checks, clientError(err)
	case "restart":
		if err := requireMethod(r, http.MethodPut, http.MethodPost); err != nil {
			return nil, err
		}
		var body struct {
			TaskName string
			AllTasks bool
		}
		if err := decodeOptionalBody(r, &body); err != nil {
			return nil, err
		}
		if err := c.RestartAlloc(r.Context(), id, body.TaskName, body.AllTasks); err != nil {
			return nil, clientError(err)
		}
		return struct{}{}, nil
	default: // signal
		if err := requireMethod(r, http.MethodPut, http.MethodPost); err != nil {
			return nil, err
		}
		var body struct {
			Task   string
			Signal string
		}
		if err := decodeOptionalBody(r, &body); err != nil {
			return nil, err
		}
		if err := c.SignalTask(id, body.Task, body.Signal); err != nil {
			return nil, clientError(err)
		}
		return struct{}{}, nil
	}
}

// localClient is the agent's client, or the error of an agent without
// one: forwarding client requests to other agents is not built yet.
func (s *HTTPServer) localClient() (ClientAPI, error) {
	if s.cfg.Client == nil {
		return nil, codedError(http.StatusNotImplemented,
			"this agent runs no client; client endpoints are answered by the agent running the allocation")
	}
	return s.cfg.Client, nil
}

// decodeOptionalBody decodes a JSON body when there is one.
func decodeOptionalBody(r *http.Request, out interface{}) error {
	if r.Body == nil || r.ContentLength == 0 {
		return nil
	}
	err := decodeBody(r, out)
	var coded *CodedError
	if errors.As(err, &coded) && coded.Msg == "Request body is empty" {
		return nil
	}
	return err
}

// clientError gives a client refusal, an error of one of the structs
// kinds, its HTTP status (structs.HTTPStatus).
func clientError(err error) error {
	if err == nil {
		return nil
	}
	for _, kind := range []error{client.ErrNotFound, client.ErrInvalid, client.ErrForbidden} {
		if errors.Is(err, kind) {
			return codedError(structs.HTTPStatus(kind), err.Error())
		}
	}
	return err
}
