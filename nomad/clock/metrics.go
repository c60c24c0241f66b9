package clock

import (
	"time"

	metrics "github.com/hashicorp/go-metrics"
)

// EmitDuration records d, measured on a Clock, as a go-metrics sample in
// milliseconds: what metrics.MeasureSince records, which would read the
// wall clock instead and so ignore a test's fake one.
func EmitDuration(key []string, d time.Duration, labels []metrics.Label) {
	metrics.AddSampleWithLabels(key, float32(d)/float32(time.Millisecond), labels)
}
