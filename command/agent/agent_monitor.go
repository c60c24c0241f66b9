package agent

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/opennomad/nomad/api"
)

// monitorBuffer is how many log lines a slow monitor may fall behind
// before lines are dropped: logging never waits for a reader.
const monitorBuffer = 512

// monitorHeartbeat is how often an idle monitor stream sends an empty
// frame, so that proxies keep it open.
const monitorHeartbeat = 10 * time.Second

// lineSink is the writer of one monitor's log sink: each write is a
// line, handed over without blocking, dropped when the reader lags.
type lineSink struct {
	lines   chan []byte
	dropped chan struct{}
}

func (l *lineSink) Write(p []byte) (int, error) {
	line := append([]byte(nil), p...)
	select {
	case l.lines <- line:
	default:
		select {
		case l.dropped <- struct{}{}:
		default:
		}
	}
	return len(p), nil
}

// agentMonitorRequest serves GET /v1/agent/monitor: this agent's log
// lines from now on, at ?log_level (default info, whatever level the
// agent itself logs at), as JSON stream frames ({"Data":"<base64>"}), or
// as plain text with ?plain=true; ?log_json=true writes JSON lines.
// node_id and server_id may name this agent only.
func (s *HTTPServer) agentMonitorRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	if err := requireMethod(r, http.MethodGet); err != nil {
		return nil, err
	}
	q := r.URL.Query()
	levelName := q.Get("log_level")
	if levelName == "" {
		levelName = "info"
	}
	level := hclog.LevelFromString(levelName)
	if level == hclog.NoLevel {
		return nil, codedError(http.StatusBadRequest, fmt.Sprintf("Unknown log level: %s", levelName))
	}
	logJSON, err := boolParam(r, "log_json")
	if err != nil {
		return nil, err
	}
	plain, err := boolParam(r, "plain")
	if err != nil {
		return nil, err
	}
	if err := s.monitorTarget(r); err != nil {
		return nil, err
	}
	logger, ok := s.cfg.Logger.(hclog.InterceptLogger)
	if !ok {
		return nil, codedError(http.StatusNotImplemented, "this agent's logger cannot be monitored")
	}

	out := &lineSink{lines: make(chan []byte, monitorBuffer), dropped: make(chan struct{}, 1)}
	sink := hclog.NewSinkAdapter(&hclog.LoggerOptions{Level: level, Output: out, JSONFormat: logJSON})
	logger.RegisterSink(sink)
	defer logger.DeregisterSink(sink)

	flusher, _ := w.(http.Flusher)
	if plain {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	} else {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(http.StatusOK)
	if flusher != nil {
		flusher.Flush()
	}
	enc := json.NewEncoder(w)
	send := func(data []byte) error {
		var err error
		if plain {
			_, err = w.Write(data)
		} else {
			err = enc.Encode(api.StreamFrame{Data: data})
		}
		if err == nil && flusher != nil {
			flusher.Flush()
		}
		return err
	}
	heartbeat := time.NewTicker(monitorHeartbeat)
	defer heartbeat.Stop()
	for {
		select {
		case <-r.Context().Done():
			return nil, nil
		case line := <-out.lines:
			if send(line) != nil {
				return nil, nil
			}
		case <-out.dropped:
			if send([]byte("[WARN]  Monitor dropped log lines: the reader is too slow\n")) != nil {
				return nil, nil
			}
		case <-heartbeat.C:
			if !plain && enc.Encode(api.StreamFrame{}) != nil {
				return nil, nil
			}
			if flusher != nil {
				flusher.Flush()
			}
		}
	}
}

// monitorTarget refuses to monitor another agent: this one streams only
// its own logs, so a node or server it is not answers as unknown.
func (s *HTTPServer) monitorTarget(r *http.Request) error {
	if id := r.URL.Query().Get("node_id"); id != "" {
		local, ok := s.cfg.Client.(interface{ NodeID() string })
		if !ok || !strings.EqualFold(local.NodeID(), id) {
			return codedError(http.StatusNotFound, fmt.Sprintf("Unknown node %q", id))
		}
	}
	if id := r.URL.Query().Get("server_id"); id != "" && id != s.agent.Name && id != s.agent.Name+"."+s.agent.Region {
		return codedError(http.StatusInternalServerError, fmt.Sprintf("unknown Nomad server %s", id))
	}
	return nil
}
