package broker

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/opennomad/nomad/structs"
)

type dequeueResult struct {
	eval  *structs.Evaluation
	token string
	err   error
}

func dequeueAsync(b *Broker, ctx context.Context, timeout time.Duration, schedulers ...string) <-chan dequeueResult {
	ch := make(chan dequeueResult, 1)
	go func() {
		e, token, err := b.Dequeue(ctx, schedulers, timeout)
		ch <- dequeueResult{e, token, err}
	}()
	return ch
}

func TestEvalBroker_DequeueWakesOnEnqueue(t *testing.T) {
	b, _ := newTestEvalBroker(t)
	res := dequeueAsync(b, context.Background(), 0, structs.JobTypeService, structs.JobTypeBatch)
	waitForWaiters(t, b, 1)

	e := newPendingEval(evType(structs.JobTypeBatch))
	b.Enqueue(e)
	r := <-res
	if r.err != nil || r.eval != e || r.token == "" {
		t.Fatalf("Dequeue = %v, %q, %v; want the enqueued eval", r.eval, r.token, r.err)
	}
	if tok, ok := b.Outstanding(e.ID); !ok || tok != r.token {
		t.Fatal("delivery not outstanding under the returned token")
	}
}

func TestEvalBroker_DequeueTimeoutOnClock(t *testing.T) {
	b, c := newTestEvalBroker(t)
	res := dequeueAsync(b, context.Background(), 500*time.Millisecond, structs.JobTypeService)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.BlockUntil(ctx, 1); err != nil {
		t.Fatalf("the Dequeue timeout was never armed: %v", err)
	}
	c.Advance(499 * time.Millisecond)
	select {
	case r := <-res:
		t.Fatalf("Dequeue returned before its timeout: %+v", r)
	default:
	}
	c.Advance(time.Millisecond)
	r := <-res
	if r.eval != nil || r.token != "" || r.err != nil {
		t.Fatalf("Dequeue on timeout = %+v, want nothing and no error", r)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.nWaiters != 0 || len(b.waiters) != 0 {
		t.Fatalf("timed-out waiter still registered: %d", b.nWaiters)
	}
}

func TestEvalBroker_DequeueContextCancel(t *testing.T) {
	b, _ := newTestEvalBroker(t)
	ctx, cancel := context.WithCancel(context.Background())
	res := dequeueAsync(b, ctx, time.Minute, structs.JobTypeService)
	waitForWaiters(t, b, 1)
	cancel()
	r := <-res
	if !errors.Is(r.err, context.Canceled) || r.eval != nil {
		t.Fatalf("Dequeue after cancel = %+v, want context.Canceled", r)
	}
	// Work enqueued now is not lost to the departed waiter.
	b.Enqueue(newPendingEval())
	mustDequeue(t, b, structs.JobTypeService)
}

func TestEvalBroker_WakesOnlyWaitersOfTheQueue(t *testing.T) {
	b, _ := newTestEvalBroker(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	batchOnly := dequeueAsync(b, ctx, 0, structs.JobTypeBatch)
	waitForWaiters(t, b, 1)
	serviceOnly := dequeueAsync(b, ctx, 0, structs.JobTypeService)
	waitForWaiters(t, b, 2)

	e := newPendingEval(evType(structs.JobTypeService))
	b.Enqueue(e)
	if r := <-serviceOnly; r.eval != e {
		t.Fatalf("service waiter got %+v", r)
	}
	select {
	case r := <-batchOnly:
		t.Fatalf("batch waiter woke for a service eval: %+v", r)
	default:
	}
	cancel()
	if r := <-batchOnly; !errors.Is(r.err, context.Canceled) {
		t.Fatalf("batch waiter after cancel: %+v", r)
	}
}

// TestEvalBroker_ManyDequeuersLoseNoWork checks the wake-one scheme: with
// workers listening on overlapping sets of queues, every enqueued eval is
// delivered exactly once, and none is left ready with a worker asleep.
func TestEvalBroker_ManyDequeuersLoseNoWork(t *testing.T) {
	b, _ := newTestEvalBroker(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	sets := [][]string{
		{structs.JobTypeService},
		{structs.JobTypeBatch},
		{structs.JobTypeService, structs.JobTypeBatch},
		{structs.JobTypeSystem, structs.JobTypeBatch},
		{structs.JobTypeSystem},
		{structs.JobTypeService, structs.JobTypeBatch, structs.JobTypeSystem},
	}
	const perType = 150
	total := 3 * perType

	var (
		mu   sync.Mutex
		seen = map[string]int{}
		wg   sync.WaitGroup
	)
	got := make(chan struct{}, total)
	for _, set := range sets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				e, token, err := b.Dequeue(ctx, set, 0)
				if err != nil {
					return
				}
				mu.Lock()
				seen[e.ID]++
				mu.Unlock()
				if err := b.Ack(e.ID, token); err != nil {
					t.Errorf("Ack: %v", err)
				}
				got <- struct{}{}
			}
		}()
	}
	waitForWaiters(t, b, len(sets))
	for i := range perType {
		for _, typ := range []string{structs.JobTypeService, structs.JobTypeBatch, structs.JobTypeSystem} {
			b.Enqueue(newPendingEval(evType(typ), evPriority(1+i%100)))
		}
	}
	for range total {
		<-got
	}
	cancel()
	wg.Wait()

	if len(seen) != total {
		t.Fatalf("%d distinct evals delivered, want %d", len(seen), total)
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("eval %s delivered %d times", id, n)
		}
	}
	wantStats(t, b, 0, 0, 0, 0, 0)
}
