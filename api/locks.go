package api

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"
)

// Locks over variables: a Locks handle takes, renews and releases the
// lock of one variable; a LockLeaser runs functions only while it holds
// the lock, renewing it as they run.

const (
	// DefaultLockTTL is how long a lock lives without a renewal unless
	// the variable asks otherwise.
	DefaultLockTTL = 15 * time.Second
	// DefaultLockDelay is how long an expired lock still keeps others
	// out.
	DefaultLockDelay = 15 * time.Second

	// renewalFactor: a leaser renews its lock when this share of the TTL
	// has passed.
	renewalFactor = 0.7
	// retryFactor: a leaser that did not get the lock tries again after
	// this many TTLs.
	retryFactor = 1.1
	// defaultLockRetries bounds the attempts of one lock call that fails
	// for any reason but a conflict.
	defaultLockRetries = 5
)

var (
	// ErrLockConflict is a lock call refused because another caller holds
	// the lock (or, to renew or release, because the caller does not).
	ErrLockConflict = errors.New("conflicting operation over lock")
	// LockNoPathErr refuses a lock handle for a variable without a path.
	LockNoPathErr = errors.New("variable's path can't be empty")
)

// LockID is the ID of the lock v carries, "" when none.
func (v *Variable) LockID() string {
	if v.Lock == nil {
		return ""
	}
	return v.Lock.ID
}

// Locker is what a LockLeaser needs of a lock.
type Locker interface {
	// Acquire takes the lock and returns the path of its variable;
	// ErrLockConflict when another caller holds it.
	Acquire(ctx context.Context) (string, error)
	// Release gives the lock up before its TTL runs out.
	Release(ctx context.Context) error
	// Renew restarts the lock's TTL; ErrLockConflict when the caller no
	// longer holds it.
	Renew(ctx context.Context) error
	// LockTTL is the lock's time to live.
	LockTTL() time.Duration
}

// Locks operates the lock of one variable. The variable is created when
// the lock is first taken if it does not exist; removing it afterwards is
// the caller's affair. Calls that fail for any reason but a conflict are
// retried, with a growing pause, up to a number of times and within the
// lock's TTL.
type Locks struct {
	WriteOptions
	c          *Client
	variable   Variable
	ttl        time.Duration
	maxRetries int64
}

// LocksOption changes a Locks handle as it is made.
type LocksOption = func(l *Locks)

// LocksOptionWithMaxRetries sets how many times a failing call is tried.
func LocksOptionWithMaxRetries(maxRetries int64) LocksOption {
	return func(l *Locks) { l.maxRetries = maxRetries }
}

// Locks returns a handle on the lock of v, whose Lock.TTL (a duration
// string) is the lock's time to live.
func (c *Client) Locks(wo WriteOptions, v Variable, opts ...LocksOption) (*Locks, error) {
	if v.Path == "" {
		return nil, LockNoPathErr
	}
	if v.Lock == nil {
		return nil, errors.New("variable has no lock to ask for")
	}
	ttl, err := time.ParseDuration(v.Lock.TTL)
	if err != nil {
		return nil, err
	}
	l := &Locks{WriteOptions: wo, c: c, variable: v, ttl: ttl, maxRetries: defaultLockRetries}
	for _, opt := range opts {
		opt(l)
	}
	return l, nil
}

// Acquire takes the lock, returning the variable's path.
func (l *Locks) Acquire(ctx context.Context) (string, error) {
	var out Variable
	if err := l.call(ctx, "lock-acquire", &l.variable, &out); err != nil {
		return "", fmt.Errorf("acquire: %w", err)
	}
	l.variable.Lock = out.Lock
	return l.variable.Path, nil
}

// Release gives the lock up.
func (l *Locks) Release(ctx context.Context) error {
	in := &Variable{Path: l.variable.Path, Lock: &VariableLock{ID: l.variable.LockID()}}
	if err := l.call(ctx, "lock-release", in, &Variable{}); err != nil {
		return fmt.Errorf("release: %w", err)
	}
	return nil
}

// Renew restarts the lock's TTL.
func (l *Locks) Renew(ctx context.Context) error {
	if err := l.call(ctx, "lock-renew", &l.variable, &VariableMetadata{}); err != nil {
		return fmt.Errorf("renew: %w", err)
	}
	return nil
}

// LockTTL is the lock's time to live.
func (l *Locks) LockTTL() time.Duration { return l.ttl }

// call makes one lock operation, retrying what may pass on a second try.
func (l *Locks) call(ctx context.Context, op string, in, out any) error {
	deadline := time.Now().Add(l.ttl)
	pause := 250 * time.Millisecond
	for attempt := int64(1); ; attempt++ {
		wo := l.WriteOptions
		_, err := l.c.write(http.MethodPut, varPath(l.variable.Path)+"?"+op, in, out, wo.WithContext(ctx))
		if code, ok := StatusCodeOf(err); ok && code == http.StatusConflict {
			return ErrLockConflict
		}
		if err == nil || attempt >= l.maxRetries || time.Now().Add(pause).After(deadline) {
			return err
		}
		if code, ok := StatusCodeOf(err); ok && code < http.StatusInternalServerError {
			return err // a refusal: trying again changes nothing
		}
		if !sleepCtx(ctx, pause) {
			return ctx.Err()
		}
		pause *= 2
	}
}

// sleepCtx waits d; false when ctx ended first.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// LockLeaser runs functions only while holding a lock: it takes the lock
// (trying again until it gets it), runs the functions one after the
// other while renewing the lock, and gives it up when they are done. If
// the lock is lost meanwhile the functions' context is canceled and the
// leaser tries to take the lock again.
type LockLeaser struct {
	Name string

	locker        Locker
	renewalPeriod time.Duration
	waitPeriod    time.Duration
	randomDelay   time.Duration
	earlyReturn   bool
	locked        bool
}

// LockLeaserOption changes a LockLeaser as it is made.
type LockLeaserOption = func(l *LockLeaser)

// LockLeaserOptionWithEarlyReturn makes Start return, doing nothing,
// when the lock is held by another caller, instead of waiting for it.
func LockLeaserOptionWithEarlyReturn(er bool) LockLeaserOption {
	return func(l *LockLeaser) { l.earlyReturn = er }
}

// LockLeaserOptionWithWaitPeriod sets the pause between attempts to take
// the lock (1.1 TTLs by default).
func LockLeaserOptionWithWaitPeriod(wp time.Duration) LockLeaserOption {
	return func(l *LockLeaser) { l.waitPeriod = wp }
}

// NewLockLeaser returns a leaser of the lock l.
func (c *Client) NewLockLeaser(l Locker, opts ...LockLeaserOption) *LockLeaser {
	ll := &LockLeaser{
		locker:        l,
		renewalPeriod: time.Duration(float64(l.LockTTL()) * renewalFactor),
		waitPeriod:    time.Duration(float64(l.LockTTL()) * retryFactor),
		// Instances started together do not all ask at the same instant.
		randomDelay: time.Duration(rand.IntN(100)) * time.Millisecond,
	}
	for _, opt := range opts {
		opt(ll)
	}
	return ll
}

// Start takes the lock, runs fns while holding it and gives it up; it
// returns when they are done, one fails, or ctx ends.
func (ll *LockLeaser) Start(ctx context.Context, fns ...func(ctx context.Context) error) error {
	err := ll.run(ctx, fns)
	if ll.locked {
		// ctx may have ended: the release must still be made.
		if rerr := ll.locker.Release(context.WithoutCancel(ctx)); rerr != nil {
			err = errors.Join(err, fmt.Errorf("lock release: %w", rerr))
		}
		ll.locked = false
	}
	return err
}

func (ll *LockLeaser) run(ctx context.Context, fns []func(ctx context.Context) error) error {
	if !sleepCtx(ctx, ll.randomDelay) {
		return nil
	}
	for {
		_, err := ll.locker.Acquire(ctx)
		switch {
		case err == nil:
			ll.locked = true
			done, err := ll.hold(ctx, fns)
			if done || err != nil {
				return err
			}
			ll.locked = false // the lock was lost: try again
		case errors.Is(err, ErrLockConflict):
			if ll.earlyReturn {
				return nil
			}
		default:
			return fmt.Errorf("locks: %w", err)
		}
		if !sleepCtx(ctx, ll.waitPeriod) {
			return nil
		}
	}
}

// hold runs fns while renewing the lock. done reports that they ran to
// their end (or ctx ended); false with no error means the lock was lost.
func (ll *LockLeaser) hold(ctx context.Context, fns []func(ctx context.Context) error) (done bool, err error) {
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	finished := make(chan error, 1)
	go func() {
		for _, f := range fns {
			if err := f(fctx); err != nil {
				finished <- fmt.Errorf("error executing protected function %w", err)
				return
			}
		}
		finished <- nil
	}()
	renew := time.NewTicker(ll.renewalPeriod)
	defer renew.Stop()
	for {
		select {
		case err := <-finished:
			return true, err
		case <-ctx.Done():
			<-finished
			return true, nil
		case <-renew.C:
			if err := ll.locker.Renew(ctx); err != nil {
				cancel()
				<-finished
				if errors.Is(err, ErrLockConflict) {
					return false, nil
				}
				return true, fmt.Errorf("error renewing the lease: %w", err)
			}
		}
	}
}
