package planapply

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/opennomad/nomad/nomad/clock"
	"github.com/opennomad/nomad/nomad/metricstest"
	"github.com/opennomad/nomad/structs"
)

// planQueueTestEpoch is where the plan queue tests' fake clock starts.
var planQueueTestEpoch = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func newTestPlanQueue(t testing.TB) (*Queue, *clock.Fake) {
	t.Helper()
	c := clock.NewFake(planQueueTestEpoch)
	q := NewQueue(c)
	q.SetEnabled(true)
	return q, c
}

func newTestPlan(priority int, evalID string) *structs.Plan {
	return &structs.Plan{EvalID: evalID, Priority: priority}
}

func tryDequeuePlan(t testing.TB, q *Queue) *QueuedPlan {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p, err := q.Dequeue(ctx, 0)
	if err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("Dequeue: %v", err)
	}
	return p
}

func TestPlanQueue_PriorityThenFIFO(t *testing.T) {
	cases := []struct {
		name       string
		priorities []int
		wantOrder  []string // eval IDs "p<priority>-<arrival>"
	}{
		{name: "fifo within a priority", priorities: []int{50, 50, 50}, wantOrder: []string{"p50-0", "p50-1", "p50-2"}},
		{name: "higher priority first", priorities: []int{10, 90, 50}, wantOrder: []string{"p90-1", "p50-2", "p10-0"}},
		{name: "mixed", priorities: []int{50, 70, 50, 70, 30}, wantOrder: []string{"p70-1", "p70-3", "p50-0", "p50-2", "p30-4"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q, _ := newTestPlanQueue(t)
			for i, p := range tc.priorities {
				if _, err := q.Enqueue(newTestPlan(p, fmt.Sprintf("p%d-%d", p, i))); err != nil {
					t.Fatal(err)
				}
			}
			if d := q.Stats().Depth; d != len(tc.priorities) {
				t.Fatalf("depth %d", d)
			}
			for i, want := range tc.wantOrder {
				p := tryDequeuePlan(t, q)
				if p == nil || p.Plan.EvalID != want {
					t.Fatalf("dequeue #%d = %v, want %s", i, p, want)
				}
			}
			if p := tryDequeuePlan(t, q); p != nil {
				t.Fatal("queue not empty")
			}
		})
	}
}

func TestPlanQueue_FutureGetsResponse(t *testing.T) {
	q, c := newTestPlanQueue(t)
	c.Advance(time.Second)
	fut, err := q.Enqueue(newTestPlan(50, "e1"))
	if err != nil {
		t.Fatal(err)
	}
	p := tryDequeuePlan(t, q)
	if !p.EnqueueTime.Equal(planQueueTestEpoch.Add(time.Second)) {
		t.Fatalf("EnqueueTime %v not on the queue's clock", p.EnqueueTime)
	}
	select {
	case <-fut.Done():
		t.Fatal("future done before Respond")
	default:
	}
	want := &structs.PlanResult{AllocIndex: 42}
	p.Respond(want, nil)
	p.Respond(nil, errors.New("ignored")) // only the first answer counts
	got, err := fut.Wait()
	if err != nil || got != want {
		t.Fatalf("Wait = %v, %v", got, err)
	}
}

func TestPlanQueue_Disabled(t *testing.T) {
	q := NewQueue(nil)
	if q.Enabled() {
		t.Fatal("new queue enabled")
	}
	_, err := q.Enqueue(newTestPlan(50, "e"))
	if !errors.Is(err, structs.ErrPlanQueueDisabled) || err.Error() != "plan queue is disabled" {
		t.Fatalf("Enqueue on a disabled queue: %v", err)
	}
	if _, err := q.Dequeue(context.Background(), time.Second); !errors.Is(err, structs.ErrPlanQueueDisabled) {
		t.Fatalf("Dequeue on a disabled queue: %v", err)
	}
	q.SetEnabled(true)
	if _, err := q.Enqueue(nil); err == nil {
		t.Fatal("nil plan accepted")
	}
}

func TestPlanQueue_DisableFlushesAndWakes(t *testing.T) {
	q, _ := newTestPlanQueue(t)
	var futs []Future
	for i := range 3 {
		f, err := q.Enqueue(newTestPlan(50, fmt.Sprint(i)))
		if err != nil {
			t.Fatal(err)
		}
		futs = append(futs, f)
	}
	q.SetEnabled(false)
	for i, f := range futs {
		res, err := f.Wait()
		if res != nil || !errors.Is(err, ErrQueueFlushed) || err.Error() != "plan queue flushed" {
			t.Fatalf("plan %d after flush: %v, %v", i, res, err)
		}
	}
	if d := q.Stats().Depth; d != 0 {
		t.Fatalf("depth %d after flush", d)
	}

	// A blocked applier learns that the queue went away.
	q.SetEnabled(true)
	errCh := make(chan error, 1)
	go func() {
		_, err := q.Dequeue(context.Background(), 0)
		errCh <- err
	}()
	waitForPlanWaiter(t, q)
	q.SetEnabled(false)
	if err := <-errCh; !errors.Is(err, structs.ErrPlanQueueDisabled) {
		t.Fatalf("blocked Dequeue after disable: %v", err)
	}
}

// waitForPlanWaiter yields until a Dequeue is blocked on q.
func waitForPlanWaiter(t *testing.T, q *Queue) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		q.mu.Lock()
		n := q.waiting
		q.mu.Unlock()
		if n > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no Dequeue blocked")
		}
		runtime.Gosched()
	}
}

func TestPlanQueue_DequeueTimeoutAndCancel(t *testing.T) {
	q, c := newTestPlanQueue(t)
	res := make(chan error, 1)
	go func() {
		p, err := q.Dequeue(context.Background(), time.Second)
		if p != nil {
			err = fmt.Errorf("got plan %v", p)
		}
		res <- err
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.BlockUntil(ctx, 1); err != nil {
		t.Fatal(err)
	}
	c.Advance(time.Second)
	if err := <-res; err != nil {
		t.Fatalf("Dequeue on timeout: %v", err)
	}

	cctx, ccancel := context.WithCancel(context.Background())
	go func() {
		_, err := q.Dequeue(cctx, 0)
		res <- err
	}()
	waitForPlanWaiter(t, q)
	ccancel()
	if err := <-res; !errors.Is(err, context.Canceled) {
		t.Fatalf("Dequeue after cancel: %v", err)
	}
}

func TestPlanQueue_ConcurrentSubmitters(t *testing.T) {
	q, _ := newTestPlanQueue(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// The applier: one goroutine answering each plan with its own index.
	applied := make(chan struct{})
	go func() {
		defer close(applied)
		for {
			p, err := q.Dequeue(ctx, 0)
			if err != nil {
				return
			}
			n, err := strconv.ParseUint(p.Plan.EvalID, 10, 64)
			p.Respond(&structs.PlanResult{AllocIndex: n}, err)
		}
	}()

	const submitters, each = 8, 200
	var wg sync.WaitGroup
	errs := make(chan error, submitters*each)
	for s := range submitters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				n := uint64(s*each + i)
				fut, err := q.Enqueue(newTestPlan(i%5, fmt.Sprint(n)))
				if err != nil {
					errs <- err
					return
				}
				res, err := fut.Wait()
				if err != nil || res.AllocIndex != n {
					errs <- fmt.Errorf("plan %d: got %v, %v", n, res, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	cancel()
	<-applied
}

func TestPlanQueue_Metrics(t *testing.T) {
	sink := metricstest.WithInmem(t)
	q, _ := newTestPlanQueue(t)
	for range 3 {
		if _, err := q.Enqueue(newTestPlan(50, "e")); err != nil {
			t.Fatal(err)
		}
	}
	q.emitStats()
	if v, ok := metricstest.Gauge(t, sink, "nomad.nomad.plan.queue_depth"); !ok || v != 3 {
		t.Fatalf("queue_depth = %v (present %v), want 3", v, ok)
	}
}
