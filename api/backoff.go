package api

import (
	"errors"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Backing off on 429. The servers answer 429 Too Many Requests before
// they do anything: an agent's per-client rate or connection limit, or
// the leader's eval backlog limit (a registration, dispatch or scaling
// refused while too many evaluations wait). Retry-After says, in
// seconds, how long to wait.
//
// The client sends a refused request again, after Retry-After plus up to
// half of it again at random (so that a crowd of refused callers does not
// come back at one instant), at most Config.BackoffRetries times. It does
// so only for requests whose repetition is harmless whatever happened to
// the first: reads, job registrations (the same job again is the same
// version, at worst one more evaluation) and scalings (the count is
// absolute). A dispatch is never resent, since each one that succeeds
// launches another child; nor is any request whose body is a stream.
// Callers that want to pace themselves (the load generator) set
// BackoffRetries negative and read RetryDelay from the error.

// DefaultBackoffRetries is how often a 429 is retried when
// Config.BackoffRetries is 0.
const DefaultBackoffRetries = 3

// Bounds of one wait: defaultRetryAfter when the answer has no usable
// Retry-After, and never more than maxBackoffWait, whatever it says.
const (
	defaultRetryAfter = time.Second
	maxBackoffWait    = time.Minute
)

// parseRetryAfter reads a Retry-After header given in seconds (the form
// the agents send; an HTTP date is not read): ok is false when absent or
// not a count of seconds.
func parseRetryAfter(h http.Header) (time.Duration, bool) {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	secs, err := strconv.ParseInt(v, 10, 64)
	if err != nil || secs < 0 {
		return 0, false
	}
	return min(time.Duration(secs)*time.Second, maxBackoffWait), true
}

// backoffDelay is the wait before resending: retryAfter plus jitter
// (in [0, 1)) times half of it, capped at maxBackoffWait.
func backoffDelay(retryAfter time.Duration, jitter float64) time.Duration {
	return min(retryAfter+time.Duration(float64(retryAfter)*jitter/2), maxBackoffWait)
}

// RetryDelay is how long to wait before sending again a request refused
// with err: for a 429 answer, its Retry-After (1s without one) with
// jitter; ok is false for any other error.
func RetryDelay(err error) (wait time.Duration, ok bool) {
	var ure *UnexpectedResponseError
	if !errors.As(err, &ure) || ure.StatusCode != http.StatusTooManyRequests {
		return 0, false
	}
	after := ure.RetryAfter
	if !ure.HasRetryAfter {
		after = defaultRetryAfter
	}
	return backoffDelay(after, rand.Float64()), true
}

// IsTooManyRequests reports whether err is a 429 answer.
func IsTooManyRequests(err error) bool {
	code, ok := StatusCodeOf(err)
	return ok && code == http.StatusTooManyRequests
}

// backoffRetries is the configured bound on resends of a 429.
func (c *Client) backoffRetries() int {
	switch n := c.config.BackoffRetries; {
	case n < 0:
		return 0
	case n == 0:
		return DefaultBackoffRetries
	default:
		return n
	}
}
