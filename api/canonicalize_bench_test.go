package api

import (
	"encoding/json"
	"testing"
)

// BenchmarkDecodeAndCanonicalize measures what a server does with each
// submitted job body: decode the JSON and fill the defaults, for a job
// with every block set.
func BenchmarkDecodeAndCanonicalize(b *testing.B) {
	raw := []byte(canonicalizeInputs["service with everything"])
	b.ReportAllocs()
	for b.Loop() {
		var j Job
		if err := json.Unmarshal(raw, &j); err != nil {
			b.Fatal(err)
		}
		j.Canonicalize()
	}
}
