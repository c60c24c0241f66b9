package mempressure

import "runtime/metrics"

// liveHeapMetric is the heap the last garbage collection marked live:
// what the server really holds, without the garbage not yet collected,
// read without stopping the world (unlike runtime.ReadMemStats).
const liveHeapMetric = "/gc/heap/live:bytes"

// LiveHeap returns this process's live heap in bytes.
func LiveHeap() uint64 {
	s := []metrics.Sample{{Name: liveHeapMetric}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
