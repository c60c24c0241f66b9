package clock

import (
	"sync/atomic"
	"time"
)

// Skewed is a Clock whose reading of the time can be moved by an offset
// at run time, as a host's clock is by an operator or a bad NTP step: a
// fault-injection seam (the agent's debug clock endpoint sets it), off
// until an offset is set. Only Now moves. Timers keep firing after their
// duration, as real timers do across a clock jump: they run on the
// monotonic clock, which a jump leaves alone.
type Skewed struct {
	inner  Clock
	offset atomic.Int64 // nanoseconds
}

// NewSkewed wraps inner with a zero offset.
func NewSkewed(inner Clock) *Skewed { return &Skewed{inner: inner} }

// Now returns inner's time moved by the offset.
func (s *Skewed) Now() time.Time {
	return s.inner.Now().Add(time.Duration(s.offset.Load()))
}

// AfterFunc is inner's: a duration is not moved by a jump.
func (s *Skewed) AfterFunc(d time.Duration, f func()) Timer { return s.inner.AfterFunc(d, f) }

// SetOffset moves Now by d from inner's time (0 puts it back).
func (s *Skewed) SetOffset(d time.Duration) { s.offset.Store(int64(d)) }

// Offset is the offset in force.
func (s *Skewed) Offset() time.Duration { return time.Duration(s.offset.Load()) }

var _ Clock = (*Skewed)(nil)
