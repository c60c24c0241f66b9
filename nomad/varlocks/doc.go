// Package varlocks keeps the leader's timers of variable locks. A lock
// whose holder stops renewing it expires after twice its TTL; it then
// keeps the variable locked for its lock delay, and only then is it
// released, through Raft, by the function the leader gives. The timers
// live on the leader alone: a new leader arms one for every lock in
// state, so a lock outlives a change of leader by at most its TTL.
//
// Time is injected (clock.Clock), so tests advance a fake clock rather
// than sleep.
package varlocks
