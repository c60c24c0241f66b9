package agent

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/pprof"
	"os"
	"runtime"
	rpprof "runtime/pprof"
	"runtime/trace"
	"strconv"
	"strings"
	"time"
)

// pprofQuery is what the api package sends with every profile request:
// seconds, debug and gc as integers (0 when unset) and the agent to
// profile (node_id, server_id; empty for this one).
type pprofQuery struct {
	seconds   float64
	debug, gc int
}

// parsePprofQuery reads the query; the api package sends seconds=0 for
// profiles that take no duration, so 0 is not an error here.
func parsePprofQuery(r *http.Request) (pprofQuery, error) {
	var q pprofQuery
	if v := r.URL.Query().Get("seconds"); v != "" {
		n, err := strconv.ParseFloat(v, 64)
		if err != nil || n < 0 {
			return q, codedError(http.StatusBadRequest, fmt.Sprintf("Error parsing seconds value %q", v))
		}
		q.seconds = n
	}
	for _, p := range []struct {
		name string
		dst  *int
	}{{"debug", &q.debug}, {"gc", &q.gc}} {
		v := r.URL.Query().Get(p.name)
		if v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return q, codedError(http.StatusBadRequest, fmt.Sprintf("Error parsing %s value %q", p.name, v))
		}
		*p.dst = n
	}
	return q, nil
}

// pprofTarget refuses a profile of another agent: this agent profiles
// only itself, so a server or node it is not answers as Nomad answers an
// unknown one.
func (s *HTTPServer) pprofTarget(r *http.Request) error {
	if id := r.URL.Query().Get("server_id"); id != "" {
		name := s.agent.Name
		if id != name && id != name+"."+s.agent.Region {
			return codedError(http.StatusInternalServerError, fmt.Sprintf("unknown Nomad server %s", id))
		}
	}
	if id := r.URL.Query().Get("node_id"); id != "" {
		return codedError(http.StatusInternalServerError, fmt.Sprintf("Unknown node %q", id))
	}
	return nil
}

// pprofRequest serves /v1/agent/pprof/<name>: profile (CPU, for
// ?seconds, default 1), trace (likewise), cmdline, symbol, the runtime's
// named profiles (heap, goroutine, allocs, block, mutex, threadcreate;
// ?debug for text, ?gc=1 collects before a heap profile; an unknown name
// is 404), and their index at /v1/agent/pprof/.
func (s *HTTPServer) pprofRequest(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, "/v1/agent/pprof/")
	switch name {
	case "":
		pprof.Index(w, r)
		return
	case "symbol":
		pprof.Symbol(w, r)
		return
	}
	q, err := parsePprofQuery(r)
	if err == nil {
		err = s.pprofTarget(r)
	}
	if err != nil {
		code, msg := errorStatus(err)
		writeError(w, code, msg)
		return
	}
	var buf bytes.Buffer
	switch name {
	case "cmdline":
		buf.WriteString(strings.Join(os.Args, "\x00"))
	case "profile":
		if err := rpprof.StartCPUProfile(&buf); err != nil {
			writeError(w, http.StatusInternalServerError, err.Error())
			return
		}
		sleepFor(r, q.seconds)
		rpprof.StopCPUProfile()
	case "trace":
		if err := trace.Start(&buf); err != nil {
			writeError(w, http.StatusInternalServerError, err.Error())
			return
		}
		sleepFor(r, q.seconds)
		trace.Stop()
	default:
		p := rpprof.Lookup(name)
		if p == nil {
			writeError(w, http.StatusNotFound, fmt.Sprintf("Pprof profile not found profile: %s", name))
			return
		}
		if name == "heap" && q.gc > 0 {
			runtime.GC()
		}
		if err := p.WriteTo(&buf, q.debug); err != nil {
			writeError(w, http.StatusInternalServerError, err.Error())
			return
		}
	}
	if q.debug > 0 && name != "profile" && name != "trace" {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	} else {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s"`, name))
	}
	w.Write(buf.Bytes()) // the client went away if this fails
}

// sleepFor waits seconds (1 when 0) or until the request ends.
func sleepFor(r *http.Request, seconds float64) {
	if seconds <= 0 {
		seconds = 1
	}
	t := time.NewTimer(time.Duration(seconds * float64(time.Second)))
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.Context().Done():
	}
}
