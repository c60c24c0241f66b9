// Package clock is the server's seam to time. Every timer a leader-side
// component arms (nack timeouts, redelivery delays, delayed evaluations,
// heartbeat TTLs, garbage-collection intervals) goes through a Clock, so
// that tests drive time by hand with a Fake and never sleep. Durations
// measured on a Clock go to metrics through EmitDuration.
package clock

import "time"

// Clock tells the time and schedules callbacks.
//
// Implementations must be safe for concurrent use. Callbacks passed to
// AfterFunc must not assume which goroutine runs them: the real clock runs
// each on its own goroutine, the Fake runs them on the goroutine that calls
// Advance. Callers therefore never invoke AfterFunc, Stop or Reset while
// holding a lock that the callback itself takes and then wait for the
// callback to finish.
type Clock interface {
	// Now returns the current time.
	Now() time.Time

	// AfterFunc calls f once, d after now, unless the returned Timer is
	// stopped first. A d <= 0 fires as soon as the clock gets to it: at
	// once for the real clock, at the next Advance for the Fake.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending AfterFunc callback. Its semantics are those of a
// *time.Timer created by time.AfterFunc.
type Timer interface {
	// Stop prevents the callback from running. It returns false when the
	// callback already started (or the timer was already stopped): a
	// false from Stop is how callers learn that a timeout fired.
	Stop() bool

	// Reset re-arms the timer to fire d from now and reports whether it
	// was still pending. Resetting a timer whose callback already started
	// schedules a second run; callers that must not run twice call Stop
	// first and Reset only when Stop returned true.
	Reset(d time.Duration) bool
}

// Real is the wall clock.
type Real struct{}

// Now returns time.Now().
func (Real) Now() time.Time { return time.Now() }

// AfterFunc wraps time.AfterFunc.
func (Real) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// interface checks
var (
	_ Clock = Real{}
	_ Clock = (*Fake)(nil)
	_ Timer = (*time.Timer)(nil)
)
