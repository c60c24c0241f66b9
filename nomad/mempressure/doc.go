// Package mempressure decides when the servers hold too much memory to
// take more work. An operator gives each server a memory figure (the
// agent's server.memory_limit); each server reads its own live heap, the
// leader gathers every server's reading, and while any server's live
// heap is past HighWater of its figure the leader refuses the writes
// that add work (job registrations, dispatches, scalings) with a 429 and
// a Retry-After, until every server is back under LowWater.
//
// The leader counts the followers too: they apply the same Raft log into
// the same state store, so a flood fills them as it fills the leader, and
// a follower may have the smaller figure or the bigger heap (a snapshot
// being written, a burst of reads).
//
// The package is pure: Gate decides from the readings it is given, and
// LiveHeap is the one call into the runtime, so tests inject readings.
package mempressure
