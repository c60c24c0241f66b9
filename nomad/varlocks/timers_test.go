package varlocks

import (
	"sync"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/clock"
	"github.com/opennomad/nomad/structs"
)

type recorder struct {
	mu       sync.Mutex
	released []string
}

func (r *recorder) release(ns, path, id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.released = append(r.released, ns+"/"+path+"/"+id)
}

func (r *recorder) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.released...)
}

var lock = &structs.VariableLock{ID: "l1", TTL: 10 * time.Second, LockDelay: 5 * time.Second}

// TestTimers_ExpireThenDelay: a lock not renewed expires after twice its
// TTL, and is released only once its lock delay has passed too.
func TestTimers_ExpireThenDelay(t *testing.T) {
	c := clock.NewFake(time.Unix(0, 0))
	r := &recorder{}
	timers := New(c, r.release)
	timers.Arm("default", "a", lock)

	c.Advance(19 * time.Second)
	must.Len(t, 0, r.got())
	c.Advance(time.Second) // 2xTTL: expired, the delay starts
	must.Len(t, 0, r.got())
	must.False(t, timers.Renew("default", "a", "l1"), must.Sprint("an expired lock is not renewed"))
	c.Advance(5 * time.Second)
	must.Eq(t, []string{"default/a/l1"}, r.got())
	must.Eq(t, 0, timers.Len())
}

// TestTimers_RenewRemoveStop: renewal restarts the TTL; a removed or
// stopped timer releases nothing.
func TestTimers_RenewRemoveStop(t *testing.T) {
	c := clock.NewFake(time.Unix(0, 0))
	r := &recorder{}
	timers := New(c, r.release)
	timers.Arm("default", "a", lock)
	timers.Arm("default", "b", lock)

	c.Advance(15 * time.Second)
	must.True(t, timers.Renew("default", "a", "l1"))
	must.False(t, timers.Renew("default", "a", "other"))
	must.False(t, timers.Renew("default", "none", "l1"))
	timers.Remove("default", "b")
	c.Advance(15 * time.Second)
	must.Len(t, 0, r.got(), must.Sprint("a was renewed, b removed"))

	c.Advance(10 * time.Second) // a: 2xTTL after the renewal
	c.Advance(5 * time.Second)
	must.Eq(t, []string{"default/a/l1"}, r.got())

	timers.Arm("default", "c", lock)
	timers.Stop()
	timers.Arm("default", "d", lock)
	c.Advance(time.Minute)
	must.Len(t, 1, r.got())
	must.Eq(t, 0, timers.Len())
}
