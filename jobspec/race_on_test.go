//go:build race

package jobspec

import "time"

// The race detector slows evaluation several times: a hostile input may
// take longer to be refused, and the time limit, a backstop, must not
// stop what the step limit is being tested on.
const (
	maxParseTime  = 5 * time.Second
	testEvalLimit = 30 * time.Second
)
