// Package loadgen submits jobs to a cluster through the HTTP API and
// measures how fast their allocations are committed and reported
// running: the load side of the cluster-scale benchmark (W2).
//
// One event stream (topics Allocation and Evaluation) tells when each
// allocation is committed (its first event: the plan result that placed
// it) and when its client reports it running, so no job is ever polled.
// A job's latency is from the moment its registration is sent to the
// moment its last allocation is committed. The servers' plan rejections
// come from their in-memory metrics (/v1/metrics) and their memory from
// /proc, for the process IDs the caller gives.
package loadgen
