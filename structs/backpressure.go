package structs

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// BackpressureError refuses a write because the leader's backlog of
// evaluations passed the scheduler configuration's EvalBacklogLimit. It
// is of kind ErrBackpressure and says how long the caller should wait
// (the HTTP layer's Retry-After).
type BackpressureError struct {
	// Backlog is the ready and blocked evals the leader held, Limit the
	// configured bound.
	Backlog, Limit int
	// RetryAfter is how long to wait before trying again, whole seconds.
	RetryAfter time.Duration
}

// retryAfterWords precede the wait in the error's text: the wait is the
// last thing said, so that RetryAfterOf finds it after a network hop.
const retryAfterWords = "; retry after "

func (e *BackpressureError) Error() string {
	return fmt.Sprintf("%s: %d ready or blocked, limit %d%s%ds",
		ErrBackpressure, e.Backlog, e.Limit, retryAfterWords, int64(e.RetryAfter/time.Second))
}

func (e *BackpressureError) Is(target error) bool { return target == ErrBackpressure }

// MemoryPressureError refuses a write because a server's live heap
// passed the high-water mark of its configured memory limit (the agent's
// server.memory_limit). It is of kind ErrMemoryPressure, and so of
// ErrBackpressure, and says how long the caller should wait.
type MemoryPressureError struct {
	// Server names the server whose heap is the fullest, HeapLive its
	// live heap and Limit its memory limit, in bytes.
	Server          string
	HeapLive, Limit uint64
	// RetryAfter is how long to wait before trying again, whole seconds.
	RetryAfter time.Duration
}

func (e *MemoryPressureError) Error() string {
	return fmt.Sprintf("%s: server %q holds %d MiB of live heap, its memory limit is %d MiB%s%ds",
		ErrMemoryPressure, e.Server, e.HeapLive>>20, e.Limit>>20, retryAfterWords, int64(e.RetryAfter/time.Second))
}

func (e *MemoryPressureError) Is(target error) bool {
	return target == ErrMemoryPressure || target == ErrBackpressure
}

// RetryAfterOf returns how long a refusal of kind ErrBackpressure asks
// its caller to wait: the error's own field in process, or, after a
// network hop where only text travels, the seconds that end the text
// BackpressureError.Error and MemoryPressureError.Error write (this reads
// only that tail, which this file formats). ok is false for other errors
// and for text without it.
func RetryAfterOf(err error) (wait time.Duration, ok bool) {
	var b *BackpressureError
	if errors.As(err, &b) {
		return b.RetryAfter, true
	}
	var m *MemoryPressureError
	if errors.As(err, &m) {
		return m.RetryAfter, true
	}
	if !IsKind(err, ErrBackpressure) {
		return 0, false
	}
	text := err.Error()
	i := strings.LastIndex(text, retryAfterWords)
	if i < 0 {
		return 0, false
	}
	secs, found := strings.CutSuffix(text[i+len(retryAfterWords):], "s")
	n, convErr := strconv.Atoi(secs)
	if !found || convErr != nil || n < 0 {
		return 0, false
	}
	return time.Duration(n) * time.Second, true
}
