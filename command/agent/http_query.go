package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/opennomad/nomad/structs"
)

// Response headers of reads and writes.
const (
	headerIndex       = "X-Nomad-Index"
	headerKnownLeader = "X-Nomad-KnownLeader"
	headerLastContact = "X-Nomad-LastContact"
	headerNextToken   = "X-Nomad-NextToken"
	headerToken       = "X-Nomad-Token"
)

// maxRequestBody bounds request bodies; a job of that size is already
// absurd.
const maxRequestBody = 32 << 20

// parseQueryOptions fills the read options from the query string:
// region, namespace, stale, index, wait, prefix, filter, per_page,
// next_token, reverse and the token. Malformed values are 400 errors.
//
// The wait is passed on as given: the server that runs the blocking query
// applies the default (5 minutes), the cap (300 s) and the jitter (up to
// 1/16 of the wait), on its own clock.
func (s *HTTPServer) parseQueryOptions(r *http.Request, q *structs.QueryOptions) error {
	v := r.URL.Query()
	q.Region = s.region(r)
	q.Namespace = namespace(r)
	q.AuthToken = authToken(r)
	stale, err := parseBool(v, "stale", "Expect `true` or `false` for `stale` query string parameter")
	if err != nil {
		return err
	}
	q.AllowStale = stale
	if idx := v.Get("index"); idx != "" {
		n, err := strconv.ParseUint(idx, 10, 64)
		if err != nil {
			return codedError(http.StatusBadRequest, "Invalid index")
		}
		q.MinQueryIndex = n
	}
	if w := v.Get("wait"); w != "" {
		d, err := time.ParseDuration(w)
		if err != nil || d < 0 {
			return codedError(http.StatusBadRequest, "Invalid wait time")
		}
		q.MaxQueryTime = d
	}
	q.Prefix = v.Get("prefix")
	q.Filter = v.Get("filter")
	if pp := v.Get("per_page"); pp != "" {
		n, err := strconv.ParseInt(pp, 10, 32)
		if err != nil || n < 0 {
			return codedError(http.StatusBadRequest, "Invalid per_page")
		}
		q.PerPage = int32(n)
	}
	q.NextToken = v.Get("next_token")
	reverse, err := parseBool(v, "reverse", "Expect `true` or `false` for `reverse` query string parameter")
	if err != nil {
		return err
	}
	q.Reverse = reverse
	return nil
}

// parseWriteRequest fills the write options from the query string.
func (s *HTTPServer) parseWriteRequest(r *http.Request, w *structs.WriteRequest) {
	w.Region = s.region(r)
	w.Namespace = namespace(r)
	w.AuthToken = authToken(r)
	w.IdempotencyToken = queryGet(r, "idempotency_token")
}

// region is ?region=, else the agent's region.
func (s *HTTPServer) region(r *http.Request) string {
	if reg := queryGet(r, "region"); reg != "" {
		return reg
	}
	return s.agent.Region
}

// queryGet is r.URL.Query().Get(key), without parsing (and allocating)
// for the many requests that carry no query at all.
func queryGet(r *http.Request, key string) string {
	if r.URL.RawQuery == "" {
		return ""
	}
	return r.URL.Query().Get(key)
}

// localRegion refuses, as the servers do (a 400), a request for another
// region made to a handler that serves it from this agent alone and so
// would otherwise answer for the wrong region.
func (s *HTTPServer) localRegion(r *http.Request) error {
	if reg := s.region(r); reg != s.agent.Region {
		return fmt.Errorf("%w %q", structs.ErrNoRegionPath, reg)
	}
	return nil
}

// namespace is ?namespace=, else "default".
func namespace(r *http.Request) string {
	if ns := queryGet(r, "namespace"); ns != "" {
		return ns
	}
	return structs.DefaultNamespace
}

// authToken reads X-Nomad-Token (trimmed), else an "Authorization:
// Bearer <token>" header, the scheme in any case and the token its first
// word, as Nomad reads them.
func authToken(r *http.Request) string {
	if t := strings.TrimSpace(r.Header.Get(headerToken)); t != "" {
		return t
	}
	scheme, rest, _ := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	if strings.EqualFold(scheme, "bearer") {
		if fields := strings.Fields(rest); len(fields) > 0 {
			return fields[0]
		}
	}
	return ""
}

// parseBool reads a boolean query parameter: absent is false, present
// with no value ("?stale") is true.
func parseBool(v map[string][]string, key, errMsg string) (bool, error) {
	vals, ok := v[key]
	if !ok {
		return false, nil
	}
	if len(vals) == 0 || vals[0] == "" {
		return true, nil
	}
	b, err := strconv.ParseBool(vals[0])
	if err != nil {
		return false, codedError(http.StatusBadRequest, errMsg)
	}
	return b, nil
}

// boolParam reads an optional boolean parameter with a generic error.
func boolParam(r *http.Request, key string) (bool, error) {
	return parseBool(r.URL.Query(), key, fmt.Sprintf("Failed to parse value of %q (%v) as a bool", key, r.URL.Query().Get(key)))
}

// intParam reads an optional integer parameter.
func intParam(r *http.Request, key string) (int, error) {
	s := r.URL.Query().Get(key)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, codedError(http.StatusBadRequest, fmt.Sprintf("Failed to parse value of %q (%v) as an integer", key, s))
	}
	return n, nil
}

// setMeta writes the read headers. The index is at least 1 so a client
// feeding it back never spins on index 0.
func setMeta(w http.ResponseWriter, m *structs.QueryMeta) {
	setIndex(w, m.Index)
	w.Header().Set(headerKnownLeader, strconv.FormatBool(m.KnownLeader))
	w.Header().Set(headerLastContact, strconv.FormatInt(m.LastContact.Milliseconds(), 10))
	if m.NextToken != "" {
		w.Header().Set(headerNextToken, m.NextToken)
	}
}

// setIndex writes X-Nomad-Index: 0 for a read of a table never written,
// as Nomad answers.
func setIndex(w http.ResponseWriter, index uint64) {
	w.Header().Set(headerIndex, strconv.FormatUint(index, 10))
}

// decodeBody reads a JSON request body into out: an empty body is
// "Request body is empty", malformed JSON a 400 naming the problem.
func decodeBody(r *http.Request, out interface{}) error {
	if r.Body == nil {
		return codedError(http.StatusBadRequest, "Request body is empty")
	}
	body, err := readRequestBody(r)
	if err != nil {
		// A route may bound its body more tightly with
		// http.MaxBytesReader.
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return codedError(http.StatusRequestEntityTooLarge, fmt.Sprintf("Request body is larger than %d bytes", tooLarge.Limit))
		}
		return codedError(http.StatusBadRequest, fmt.Sprintf("Failed to read request body: %v", err))
	}
	if len(body) > maxRequestBody {
		return codedError(http.StatusRequestEntityTooLarge, fmt.Sprintf("Request body is larger than %d bytes", maxRequestBody))
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return codedError(http.StatusBadRequest, "Request body is empty")
	}
	if err := json.Unmarshal(body, out); err != nil {
		var syn *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.As(err, &syn):
			return codedError(http.StatusBadRequest, fmt.Sprintf("Failed to decode request body: invalid JSON at offset %d: %v", syn.Offset, err))
		case errors.As(err, &typ):
			return codedError(http.StatusBadRequest, fmt.Sprintf("Failed to decode request body: field %q: cannot use a JSON %s as %s", typ.Field, typ.Value, typ.Type))
		}
		return codedError(http.StatusBadRequest, fmt.Sprintf("Failed to decode request body: %v", err))
	}
	return nil
}

// readRequestBody reads r's body, up to one byte past maxRequestBody. A
// body that declares its length (as API clients' bodies do) is read into
// a slice of that size at once rather than grown by doubling.
func readRequestBody(r *http.Request) ([]byte, error) {
	body := io.LimitReader(r.Body, maxRequestBody+1)
	n := r.ContentLength
	if n <= 0 || n > maxRequestBody {
		return io.ReadAll(body)
	}
	// One byte more than declared, so that the end is seen without
	// growing the slice.
	buf := make([]byte, 0, n+1)
	for {
		m, err := body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		switch {
		case err == io.EOF:
			return buf, nil
		case err != nil:
			return buf, err
		case len(buf) == cap(buf):
			// Longer than declared: read the rest as any body.
			rest, err := io.ReadAll(body)
			return append(buf, rest...), err
		}
	}
}
