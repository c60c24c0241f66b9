// Package evaltrace keeps the timeline of the newest evaluations the
// leader handled: when each was enqueued, dequeued and by which worker,
// when its plan was submitted and applied (or refused), and when it was
// acked or nacked. The state store keeps an evaluation's outcome; this
// keeps how it got there, for the web UI's evaluation page and for an
// operator asking why an evaluation took long.
//
// The timeline lives in the leader's memory only, bounded in evaluations
// and in events per evaluation: it is lost when leadership moves (the new
// leader starts a fresh one) and is not replicated. Recording is a map
// write under a mutex; it is off the scheduler's hot path but on the
// broker's, so it allocates little and never blocks on I/O.
package evaltrace
