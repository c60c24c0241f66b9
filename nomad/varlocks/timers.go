package varlocks

import (
	"sync"

	"github.com/opennomad/nomad/nomad/clock"
	"github.com/opennomad/nomad/structs"
)

// Release clears the lock with lockID on the variable at (ns, path),
// through Raft. It runs on a timer's goroutine.
type Release func(ns, path, lockID string)

type key struct{ ns, path string }

type entry struct {
	lock  structs.VariableLock
	timer clock.Timer
	// expired marks a lock past its TTL, waiting out its lock delay; it
	// can no longer be renewed.
	expired bool
}

// Timers are the lock timers of one leader term. The zero value is not
// usable; New makes one. Safe for concurrent use.
type Timers struct {
	clock   clock.Clock
	release Release

	mu      sync.Mutex
	stopped bool
	locks   map[key]*entry
}

// New returns empty timers on c that release expired locks with release.
func New(c clock.Clock, release Release) *Timers {
	return &Timers{clock: c, release: release, locks: map[key]*entry{}}
}

// Arm starts (or restarts) the timer of the lock held on (ns, path).
func (t *Timers) Arm(ns, path string, lock *structs.VariableLock) {
	if lock == nil || lock.ID == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return
	}
	k := key{ns, path}
	if old := t.locks[k]; old != nil {
		old.timer.Stop()
	}
	e := &entry{lock: *lock}
	e.timer = t.clock.AfterFunc(2*lock.TTL, func() { t.expire(k, e) })
	t.locks[k] = e
}

// Renew restarts the TTL of the lock with lockID on (ns, path). It
// reports false when no such live lock is timed here (it expired, or
// another holder has it).
func (t *Timers) Renew(ns, path, lockID string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.locks[key{ns, path}]
	if e == nil || e.expired || e.lock.ID != lockID {
		return false
	}
	e.timer.Reset(2 * e.lock.TTL)
	return true
}

// Remove forgets the timer of (ns, path): the lock was released or the
// variable deleted.
func (t *Timers) Remove(ns, path string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	k := key{ns, path}
	if e := t.locks[k]; e != nil {
		e.timer.Stop()
		delete(t.locks, k)
	}
}

// Len is the number of timed locks.
func (t *Timers) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.locks)
}

// Stop stops every timer: the leader's term ended.
func (t *Timers) Stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stopped = true
	for k, e := range t.locks {
		e.timer.Stop()
		delete(t.locks, k)
	}
}

// expire runs when the lock's TTL ran out twice over: the lock delay
// starts, after which the lock is released.
func (t *Timers) expire(k key, e *entry) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped || t.locks[k] != e {
		return
	}
	e.expired = true
	e.timer = t.clock.AfterFunc(e.lock.LockDelay, func() { t.releaseDue(k, e) })
}

func (t *Timers) releaseDue(k key, e *entry) {
	t.mu.Lock()
	if t.stopped || t.locks[k] != e {
		t.mu.Unlock()
		return
	}
	delete(t.locks, k)
	t.mu.Unlock()
	t.release(k.ns, k.path, e.lock.ID)
}
