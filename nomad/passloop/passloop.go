// Package passloop runs the loop shared by the leader's watchers (node
// drainer, deployment watcher, periodic dispatcher): a pass reads state
// and acts, then the loop sleeps until something the pass read changes,
// the time the pass asked to be woken at comes, or someone pokes it.
// Passes never overlap. Between enables the loop keeps nothing: every
// pass decides from state alone.
package passloop

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-memdb"

	"github.com/opennomad/nomad/nomad/clock"
)

// PassFunc is one pass at now. It registers in ws every read whose change
// should cause another pass, and returns when to pass again if nothing
// changes (zero: only a change), and the state index it read.
type PassFunc func(ws memdb.WatchSet, now time.Time) (wakeAt time.Time, index uint64, err error)

// Config configures a Loop.
type Config struct {
	// Name names the loop in logs.
	Name string
	// Logger receives failed passes; nil discards them.
	Logger hclog.Logger
	// Clock drives wake-ups; nil means the wall clock.
	Clock clock.Clock
	// Pass is the pass. Required.
	Pass PassFunc
	// MinInterval is the least time between the starts of two passes, so
	// that a burst of changes is handled by one pass (0: none).
	MinInterval time.Duration
	// RetryInterval is when a failed pass is retried if nothing else
	// wakes the loop first.
	RetryInterval time.Duration
	// MaxShare bounds the share of the time passes may take (0: no
	// bound): after a pass that took d, the next starts no sooner than
	// d/MaxShare after it started. A pass over state that grew large
	// (every active deployment of a flood) then runs less often instead
	// of taking the leader's CPU from everything else; a short pass is
	// held back by MinInterval alone.
	MaxShare float64
}

// Loop runs passes on its own goroutine while enabled. Its methods are
// safe for concurrent use.
type Loop struct {
	cfg   Config
	clock clock.Clock

	mu      sync.Mutex
	enabled bool
	stop    chan struct{}
	done    chan struct{}
	onPass  OnPassFunc

	// pokes signals a poke; pokeSeq numbers them, so a caller can tell
	// the pass that started after its poke.
	pokes   chan struct{}
	pokeSeq atomic.Uint64
}

// OnPassFunc observes a finished pass: the state index it read, the
// number of the last poke made before it started, and its error.
type OnPassFunc func(index, poke uint64, err error)

// SetOnPass sets a function the loop calls on its goroutine after every
// pass, once the wake-up timer is armed and just before it blocks: tests
// follow passes with it. It applies from the next SetEnabled(true).
func (l *Loop) SetOnPass(f OnPassFunc) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.onPass = f
}

// New returns a disabled loop.
func New(cfg Config) *Loop {
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	return &Loop{cfg: cfg, clock: cfg.Clock, pokes: make(chan struct{}, 1)}
}

// SetEnabled starts (true) or stops (false) the loop. Stopping waits for
// the pass in progress to end, so nothing the loop does follows the return.
func (l *Loop) SetEnabled(enabled bool) {
	l.mu.Lock()
	if l.enabled == enabled {
		l.mu.Unlock()
		return
	}
	l.enabled = enabled
	if enabled {
		l.stop, l.done = make(chan struct{}), make(chan struct{})
		go l.run(l.stop, l.done, l.onPass)
		l.mu.Unlock()
		return
	}
	stop, done := l.stop, l.done
	l.mu.Unlock()
	close(stop)
	<-done
}

// Enabled reports whether the loop runs.
func (l *Loop) Enabled() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.enabled
}

// Poke makes the loop pass at once, or right after the pass in progress,
// and returns the poke's number: the first pass whose OnPassFunc sees a
// number at least as high started after the poke.
func (l *Loop) Poke() uint64 {
	seq := l.pokeSeq.Add(1)
	select {
	case l.pokes <- struct{}{}:
	default:
	}
	return seq
}

func (l *Loop) run(stop <-chan struct{}, done chan<- struct{}, onPass OnPassFunc) {
	defer close(done)
	var last time.Time
	var took time.Duration
	for {
		if gap := l.gap(took); gap > 0 && !last.IsZero() {
			if !l.wait(stop, nil, last.Add(gap), nil) {
				return
			}
		}
		// A pass starting now answers every poke made so far.
		select {
		case <-l.pokes:
		default:
		}
		poked := l.pokeSeq.Load()
		last = l.clock.Now()
		ws := memdb.NewWatchSet()
		wakeAt, index, err := l.cfg.Pass(ws, last)
		took = l.clock.Now().Sub(last)
		if err != nil {
			l.cfg.Logger.Error("pass failed", "loop", l.cfg.Name, "error", err)
			if l.cfg.RetryInterval > 0 {
				if retry := last.Add(l.cfg.RetryInterval); wakeAt.IsZero() || retry.Before(wakeAt) {
					wakeAt = retry
				}
			}
		}
		var armed func()
		if onPass != nil {
			armed = func() { onPass(index, poked, err) }
		}
		if !l.wait(stop, ws, wakeAt, armed) {
			return
		}
	}
}

// gap is the least time between the start of a pass that took took and
// the start of the next: MinInterval, or more under MaxShare.
func (l *Loop) gap(took time.Duration) time.Duration {
	gap := l.cfg.MinInterval
	if l.cfg.MaxShare > 0 {
		gap = max(gap, time.Duration(float64(took)/l.cfg.MaxShare))
	}
	return gap
}

// wait blocks until something in ws changes, the clock reaches at (when
// not zero), a poke, or stop; it reports false for stop. armed, if set,
// is called once the timer is armed, just before blocking.
func (l *Loop) wait(stop <-chan struct{}, ws memdb.WatchSet, at time.Time, armed func()) bool {
	var wsCh <-chan error
	if ws != nil {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		wsCh = ws.WatchCh(ctx)
	}
	var timerCh chan struct{}
	if !at.IsZero() {
		timerCh = make(chan struct{}, 1)
		if d := at.Sub(l.clock.Now()); d > 0 {
			t := l.clock.AfterFunc(d, func() { timerCh <- struct{}{} })
			defer t.Stop()
		} else {
			timerCh <- struct{}{} // already due
		}
	}
	if armed != nil {
		armed()
	}
	select {
	case <-stop:
		return false
	case <-wsCh:
	case <-timerCh:
	case <-l.pokes:
	}
	return true
}
