// Package backlog measures the scheduling backlog: the allocations that
// wait to be placed, why they wait (no node in the pool, constraints, a
// resource dimension exhausted), how long the longest has waited, the
// allocations placed but not yet running, and the evaluations by stage
// with the age of the oldest in each.
//
// Measure is a pure function of a state snapshot and the time. It reads
// totals the state store keeps as it applies writes, and walks only the
// blocked and delayed evaluations, so its cost follows those and not the
// number of jobs or pending evaluations. The leader calls it every few
// seconds and Emit publishes the result as go-metrics
// gauges (and so to Prometheus). Operators of batch systems watch exactly
// these: a queue that grows, and the reason it grows, before users ask.
package backlog
