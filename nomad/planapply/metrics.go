package planapply

import (
	"time"

	metrics "github.com/hashicorp/go-metrics"
)

// emitDuration records d in milliseconds, as metrics.MeasureSince does, but
// measured on the caller's clock rather than the wall clock.
func emitDuration(key []string, d time.Duration, labels []metrics.Label) {
	metrics.AddSampleWithLabels(key, float32(d)/float32(time.Millisecond), labels)
}
