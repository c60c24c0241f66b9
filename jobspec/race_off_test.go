//go:build !race

package jobspec

import "time"

// maxParseTime is how long a hostile input may take to be refused.
const (
	maxParseTime  = time.Second
	testEvalLimit = MaxEvalTime
)
