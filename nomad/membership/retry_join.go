package membership

import (
	"errors"
	"fmt"
	"time"
)

// ErrJoinExhausted is reported when RetryJoin used all its attempts.
var ErrJoinExhausted = errors.New("retry_join: every attempt failed")

// RetryJoin joins addrs in the background, trying again every interval
// until one attempt reaches a member or max attempts failed (0: no
// limit). The channel receives nil on success, an error wrapping
// ErrJoinExhausted after the last attempt, or nothing if the membership
// shuts down first; it has room for the one value, so nobody needs to
// read it.
func (m *Membership) RetryJoin(addrs []string, interval time.Duration, max int) <-chan error {
	out := make(chan error, 1)
	if len(addrs) == 0 {
		out <- nil
		return out
	}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		t := time.NewTimer(0)
		defer t.Stop()
		for attempt := 1; ; attempt++ {
			select {
			case <-m.shutdownCtx.Done():
				return
			case <-t.C:
			}
			n, err := m.Join(addrs)
			if n > 0 {
				out <- nil
				return
			}
			if max > 0 && attempt >= max {
				out <- fmt.Errorf("%w (%d attempts): %w", ErrJoinExhausted, attempt, err)
				return
			}
			m.logger.Warn("join failed; retrying", "addresses", addrs, "attempt", attempt, "interval", interval, "error", err)
			t.Reset(interval)
		}
	}()
	return out
}
