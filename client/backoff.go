package client

import "time"

// backoff is the wait before the next try after failures consecutive
// failures: min doubled per failure, capped at max, then spread over
// [d/2, d) by jitter (a value in [0, 1)) so that many clients that lost
// the same server do not come back in step.
func backoff(min, max time.Duration, failures int, jitter float64) time.Duration {
	d := min
	for i := 1; i < failures && d < max; i++ {
		d *= 2
	}
	if d > max {
		d = max
	}
	return d/2 + time.Duration(jitter*float64(d/2))
}
