package api

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// fakeLocker is a Locker whose answers the test scripts.
type fakeLocker struct {
	mu        sync.Mutex
	acquireOK []bool // per attempt; true once exhausted
	renewErr  error
	calls     []string
}

func (f *fakeLocker) record(c string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, c)
}

func (f *fakeLocker) Acquire(context.Context) (string, error) {
	f.record("acquire")
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.acquireOK) > 0 {
		ok := f.acquireOK[0]
		f.acquireOK = f.acquireOK[1:]
		if !ok {
			return "", ErrLockConflict
		}
	}
	return "path", nil
}

func (f *fakeLocker) Release(context.Context) error { f.record("release"); return nil }

func (f *fakeLocker) Renew(context.Context) error {
	f.record("renew")
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.renewErr
}

func (f *fakeLocker) LockTTL() time.Duration { return 20 * time.Millisecond }

func (f *fakeLocker) got() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

// TestLockLeaser_RunsWhileHolding: the leaser waits out a conflict, runs
// the function holding the lock, renews it meanwhile, and releases it.
func TestLockLeaser_RunsWhileHolding(t *testing.T) {
	f := &fakeLocker{acquireOK: []bool{false}}
	c := &Client{}
	ll := c.NewLockLeaser(f, LockLeaserOptionWithWaitPeriod(time.Millisecond))
	ran := false
	err := ll.Start(context.Background(), func(ctx context.Context) error {
		time.Sleep(50 * time.Millisecond) // a few renewal periods
		ran = true
		return nil
	})
	if err != nil || !ran {
		t.Fatalf("err = %v, ran = %v", err, ran)
	}
	calls := f.got()
	if calls[0] != "acquire" || calls[1] != "acquire" || calls[len(calls)-1] != "release" {
		t.Fatalf("calls = %v", calls)
	}
	renewed := false
	for _, c := range calls {
		renewed = renewed || c == "renew"
	}
	if !renewed {
		t.Fatalf("never renewed: %v", calls)
	}
}

// TestLockLeaser_EarlyReturnAndErrors: with early return a held lock ends
// Start at once; a failing function's error is returned after release.
func TestLockLeaser_EarlyReturnAndErrors(t *testing.T) {
	f := &fakeLocker{acquireOK: []bool{false}}
	ll := (&Client{}).NewLockLeaser(f, LockLeaserOptionWithEarlyReturn(true))
	if err := ll.Start(context.Background(), func(context.Context) error { t.Fatal("ran"); return nil }); err != nil {
		t.Fatal(err)
	}
	if got := f.got(); len(got) != 1 {
		t.Fatalf("calls = %v", got)
	}

	boom := errors.New("boom")
	f = &fakeLocker{}
	err := (&Client{}).NewLockLeaser(f).Start(context.Background(), func(context.Context) error { return boom })
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	if got := f.got(); got[len(got)-1] != "release" {
		t.Fatalf("calls = %v", got)
	}
}

// TestLocks_Calls: the handle's calls hit the lock routes and a 409 is
// ErrLockConflict.
func TestLocks_Calls(t *testing.T) {
	agent := newFakeAgent(t, reply{Body: `{"Path":"a","Lock":{"ID":"l-1","TTL":"15s","LockDelay":"15s"}}`})
	c := agent.client(t)
	l, err := c.Locks(WriteOptions{}, Variable{Path: "a", Lock: &VariableLock{TTL: "15s"}})
	if err != nil {
		t.Fatal(err)
	}
	if p, err := l.Acquire(context.Background()); err != nil || p != "a" {
		t.Fatalf("acquire = %q, %v", p, err)
	}
	if err := l.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(agent.requests) != 2 || agent.requests[0].Query.Has("lock-acquire") != true ||
		!agent.requests[1].Query.Has("lock-release") || string(agent.requests[1].Body) == "" {
		t.Fatalf("requests = %+v", agent.requests)
	}
	if _, err := c.Locks(WriteOptions{}, Variable{}); !errors.Is(err, LockNoPathErr) {
		t.Fatalf("err = %v", err)
	}

	conflict := newFakeAgent(t, reply{Status: 409, Body: `{"Namespace":"default","Path":"a"}`})
	l, _ = conflict.client(t).Locks(WriteOptions{}, Variable{Path: "a", Lock: &VariableLock{TTL: "15s"}})
	if _, err := l.Acquire(context.Background()); !errors.Is(err, ErrLockConflict) {
		t.Fatalf("err = %v", err)
	}
}
