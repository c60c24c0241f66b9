package api

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// UnexpectedResponseError is returned when the server answers with a status
// outside 2xx. The server's plain-text explanation is kept in Body, so a
// caller can both branch on StatusCode and show the user what went wrong.
type UnexpectedResponseError struct {
	// StatusCode is the HTTP status code, e.g. 404.
	StatusCode int
	// Body is the server's response text, trimmed of surrounding space.
	Body string
	// Method and URL identify the failed request.
	Method string
	URL    string
	// RetryAfter is the answer's Retry-After in seconds, when
	// HasRetryAfter (a 429 says how long to wait).
	RetryAfter    time.Duration
	HasRetryAfter bool
}

// Error renders the error the way Nomad's clients do, e.g.
// `Unexpected response code: 404 (job not found)`.
func (e *UnexpectedResponseError) Error() string {
	if e.Body == "" {
		return fmt.Sprintf("Unexpected response code: %d (%s)", e.StatusCode, http.StatusText(e.StatusCode))
	}
	return fmt.Sprintf("Unexpected response code: %d (%s)", e.StatusCode, e.Body)
}

// StatusCodeOf returns the HTTP status carried by err if it (or an error it
// wraps) is an *UnexpectedResponseError.
func StatusCodeOf(err error) (int, bool) {
	var ure *UnexpectedResponseError
	if errors.As(err, &ure) {
		return ure.StatusCode, true
	}
	return 0, false
}

// IsNotFound reports whether err is a 404 answer from the server.
func IsNotFound(err error) bool {
	code, ok := StatusCodeOf(err)
	return ok && code == http.StatusNotFound
}

// newUnexpectedResponseError builds the error from a response body that has
// already been read.
func newUnexpectedResponseError(method, url string, status int, header http.Header, body []byte) *UnexpectedResponseError {
	e := &UnexpectedResponseError{
		StatusCode: status,
		Body:       strings.TrimSpace(string(body)),
		Method:     method,
		URL:        url,
	}
	e.RetryAfter, e.HasRetryAfter = parseRetryAfter(header)
	return e
}

// headerError reports a response header the client could not parse.
type headerError struct {
	name, value string
	err         error
}

// Error names the header and its bad value.
func (e *headerError) Error() string {
	return fmt.Sprintf("invalid %s header %q: %v", e.name, e.value, e.err)
}

// Unwrap returns the parse error.
func (e *headerError) Unwrap() error { return e.err }
