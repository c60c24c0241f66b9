package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/opennomad/nomad/client"
)

// logHeartbeat is how often an idle framed log stream sends an empty
// frame, so that both ends notice a dead connection.
const logHeartbeat = time.Second

// fsRequest serves /v1/client/fs/{logs,ls,stat,cat,readat}/:alloc.
func (s *HTTPServer) fsRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	if err := requireMethod(r, http.MethodGet); err != nil {
		return nil, err
	}
	op, allocID, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/v1/client/fs/"), "/")
	if allocID == "" {
		return nil, codedError(http.StatusBadRequest, "must provide a valid alloc id")
	}
	c, err := s.localClient()
	if err != nil {
		return nil, err
	}
	q := r.URL.Query()
	switch op {
	case "logs":
		return nil, s.streamLogs(w, r, c, allocID)
	case "ls":
		files, err := c.ListDir(allocID, pathParam(q.Get("path")))
		return files, clientError(err)
	case "stat":
		if q.Get("path") == "" {
			return nil, codedError(http.StatusBadRequest, "must provide a file path")
		}
		info, err := c.StatFile(allocID, q.Get("path"))
		return info, clientError(err)
	case "cat", "readat":
		if q.Get("path") == "" {
			return nil, codedError(http.StatusBadRequest, "must provide a file path")
		}
		var offset, limit int64
		if op == "readat" {
			if offset, err = int64Param(q.Get("offset"), "offset"); err != nil {
				return nil, err
			}
			if limit, err = int64Param(q.Get("limit"), "limit"); err != nil {
				return nil, err
			}
		}
		f, err := c.ReadFile(allocID, q.Get("path"), offset, limit)
		if err != nil {
			return nil, clientError(err)
		}
		defer f.Close()
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if _, err := io.Copy(w, f); err != nil {
			s.logger.Debug("file read cut short", "alloc_id", allocID, "error", err)
		}
		return nil, nil
	}
	return nil, codedError(http.StatusNotFound, fmt.Sprintf("Invalid URL path: unknown file system operation %q", op))
}

// streamLogs serves /v1/client/fs/logs/:alloc: the task's log as Nomad's
// JSON frames ({"Offset","Data"(base64),"File","FileEvent"}, one after
// another, with "{}" heartbeats while idle), or with plain=true the bytes
// alone. Errors found before the first byte get their status; the
// stream then ends with the log (follow=false) or the connection.
func (s *HTTPServer) streamLogs(w http.ResponseWriter, r *http.Request, c ClientAPI, allocID string) error {
	q := r.URL.Query()
	follow, err := boolParam(r, "follow")
	if err != nil {
		return err
	}
	plain, err := boolParam(r, "plain")
	if err != nil {
		return err
	}
	offset, err := int64Param(q.Get("offset"), "offset")
	if err != nil {
		return err
	}
	lr, err := c.Logs(allocID, client.LogRequest{
		Task: q.Get("task"), Type: q.Get("type"), Origin: q.Get("origin"), Offset: offset, Follow: follow,
	})
	if err != nil {
		return clientError(err)
	}
	defer lr.Close()

	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	frames := make(chan *client.StreamFrame)
	done := make(chan error, 1)
	go func() {
		for {
			f, err := lr.Next(ctx)
			if err != nil {
				done <- err
				return
			}
			select {
			case frames <- f:
			case <-ctx.Done():
				done <- ctx.Err()
				return
			}
		}
	}()

	rc := http.NewResponseController(w)
	if plain {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	} else {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(http.StatusOK)
	rc.Flush()
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	heartbeat := time.NewTicker(logHeartbeat)
	defer heartbeat.Stop()
	for {
		var err error
		select {
		case f := <-frames:
			switch {
			case plain && len(f.Data) > 0:
				_, err = w.Write(f.Data)
			case !plain:
				err = enc.Encode(f)
			}
		case <-heartbeat.C:
			if !plain {
				_, err = w.Write([]byte("{}"))
			}
		case err := <-done:
			if err != io.EOF && ctx.Err() == nil {
				s.logger.Debug("log stream ended", "alloc_id", allocID, "error", err)
			}
			return nil
		}
		if err == nil {
			err = rc.Flush()
		}
		if err != nil {
			return nil // the reader went away
		}
	}
}

// pathParam is the path of an fs request, "/" when absent.
func pathParam(p string) string {
	if p == "" {
		return "/"
	}
	return p
}

// int64Param parses an optional integer query parameter.
func int64Param(v, name string) (int64, error) {
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, codedError(http.StatusBadRequest, fmt.Sprintf("Failed to parse value of %q (%v) as an integer", name, v))
	}
	return n, nil
}
