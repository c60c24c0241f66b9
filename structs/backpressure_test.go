package structs

import (
	"errors"
	"fmt"
	"net/rpc"
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

// A refusal keeps its wait in process and after the hop, where only its
// coded text arrives, perhaps wrapped by a caller.
func TestBackpressureError_RetryAfterSurvivesTheHop(t *testing.T) {
	refusal := &BackpressureError{Backlog: 12, Limit: 10, RetryAfter: 3 * time.Second}
	must.ErrorIs(t, refusal, ErrBackpressure)
	must.Eq(t, "too many evaluations waiting: 12 ready or blocked, limit 10; retry after 3s", refusal.Error())

	wrapped := fmt.Errorf("registering job %q: %w", "web", refusal)
	wait, ok := RetryAfterOf(wrapped)
	must.True(t, ok)
	must.Eq(t, 3*time.Second, wait)

	sent := ClassifyError(wrapped)
	remote := fmt.Errorf("forwarding: %w", rpc.ServerError(sent.Error()))
	must.True(t, IsKind(remote, ErrBackpressure))
	code, _, ok := ErrorCode(remote)
	must.True(t, ok)
	must.Eq(t, 429, code)
	wait, ok = RetryAfterOf(remote)
	must.True(t, ok)
	must.Eq(t, 3*time.Second, wait)

	for _, other := range []error{errors.New("retry after 3s"), ErrNoLeader, ErrBackpressure} {
		_, ok := RetryAfterOf(other)
		must.False(t, ok, must.Sprintf("%v", other))
	}
}

// A memory refusal is a backpressure refusal too: 429, and its wait
// survives the hop the same way.
func TestMemoryPressureError_IsBackpressureAcrossTheHop(t *testing.T) {
	refusal := &MemoryPressureError{Server: "s2", HeapLive: 1700 << 20, Limit: 2048 << 20, RetryAfter: 5 * time.Second}
	must.ErrorIs(t, refusal, ErrMemoryPressure)
	must.ErrorIs(t, refusal, ErrBackpressure)
	must.Eq(t, `servers near their memory limit: server "s2" holds 1700 MiB of live heap, its memory limit is 2048 MiB; retry after 5s`,
		refusal.Error())
	wait, ok := RetryAfterOf(refusal)
	must.True(t, ok)
	must.Eq(t, 5*time.Second, wait)

	sent := ClassifyError(fmt.Errorf("registering job %q: %w", "web", refusal))
	remote := fmt.Errorf("forwarding: %w", rpc.ServerError(sent.Error()))
	must.True(t, IsKind(remote, ErrMemoryPressure))
	must.True(t, IsKind(remote, ErrBackpressure))
	code, _, ok := ErrorCode(remote)
	must.True(t, ok)
	must.Eq(t, 429, code)
	wait, ok = RetryAfterOf(remote)
	must.True(t, ok)
	must.Eq(t, 5*time.Second, wait)
}
