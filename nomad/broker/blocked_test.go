package broker

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opennomad/nomad/nomad/clock"
	"github.com/opennomad/nomad/nomad/metricstest"
	"github.com/opennomad/nomad/structs"
)

// recordingBroker is the tracker's EvalEnqueuer in tests: it records every
// batch, and can be made to hold EnqueueAll until released.
type recordingBroker struct {
	mu      sync.Mutex
	batches []map[*structs.Evaluation]string
	gate    chan struct{} // when non-nil, EnqueueAll waits for it to close
	called  chan struct{} // receives once per EnqueueAll, if non-nil
}

func (r *recordingBroker) EnqueueAll(evals map[*structs.Evaluation]string) {
	if r.called != nil {
		r.called <- struct{}{}
	}
	if r.gate != nil {
		<-r.gate
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.batches = append(r.batches, evals)
}

// released returns and forgets everything enqueued so far.
func (r *recordingBroker) released() map[*structs.Evaluation]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[*structs.Evaluation]string{}
	for _, b := range r.batches {
		for e, tok := range b {
			out[e] = tok
		}
	}
	r.batches = nil
	return out
}

func newTestBlockedEvals(t *testing.T) (*BlockedEvals, *recordingBroker, *clock.Fake) {
	t.Helper()
	c := clock.NewFake(brokerTestEpoch)
	rb := &recordingBroker{}
	cfg := DefaultBlockedEvalsConfig()
	cfg.Clock = c
	b, err := NewBlockedEvals(rb, cfg)
	if err != nil {
		t.Fatalf("NewBlockedEvals: %v", err)
	}
	b.SetEnabled(true)
	t.Cleanup(func() { b.SetEnabled(false) })
	return b, rb, c
}

// newBlockedEval returns a blocked eval that saw no node class, unless opts
// say otherwise.
func newBlockedEval(opts ...evalOpt) *structs.Evaluation {
	defaults := func(e *structs.Evaluation) {
		e.Status = structs.EvalStatusBlocked
		e.TriggeredBy = structs.EvalTriggerQueuedAllocs
		e.ClassEligibility = map[string]bool{}
	}
	return newPendingEval(append([]evalOpt{defaults}, opts...)...)
}

func evEligibility(m map[string]bool) evalOpt {
	return func(e *structs.Evaluation) { e.ClassEligibility = m }
}
func evEscaped() evalOpt {
	return func(e *structs.Evaluation) { e.EscapedComputedClass, e.ClassEligibility = true, nil }
}
func evSnapshot(i uint64) evalOpt { return func(e *structs.Evaluation) { e.SnapshotIndex = i } }
func evQuota(q string) evalOpt    { return func(e *structs.Evaluation) { e.QuotaLimitReached = q } }
func evTrigger(tr string) evalOpt { return func(e *structs.Evaluation) { e.TriggeredBy = tr } }
func evNode(id string) evalOpt    { return func(e *structs.Evaluation) { e.NodeID = id } }
func evCreate(i uint64) evalOpt   { return func(e *structs.Evaluation) { e.CreateIndex = i } }
func evFailed(m map[string]*structs.AllocMetric) evalOpt {
	return func(e *structs.Evaluation) { e.FailedTGAllocs = m }
}

func wantBlockedStats(t *testing.T, b *BlockedEvals, blocked, escaped, quota int) {
	t.Helper()
	s := b.Stats()
	if s.TotalBlocked != blocked || s.TotalEscaped != escaped || s.TotalQuotaLimit != quota {
		t.Fatalf("stats blocked=%d escaped=%d quota=%d, want %d %d %d",
			s.TotalBlocked, s.TotalEscaped, s.TotalQuotaLimit, blocked, escaped, quota)
	}
}

// wantReleased checks exactly which evals were released, and their tokens.
func wantReleased(t *testing.T, rb *recordingBroker, want map[*structs.Evaluation]string) {
	t.Helper()
	got := rb.released()
	var missing, extra []string
	for e, tok := range want {
		if gotTok, ok := got[e]; !ok || gotTok != tok {
			missing = append(missing, fmt.Sprintf("%s(token %q, got %q present %v)", e.JobID, tok, gotTok, ok))
		}
	}
	for e := range got {
		if _, ok := want[e]; !ok {
			extra = append(extra, e.JobID)
		}
	}
	if len(missing)+len(extra) > 0 {
		t.Fatalf("released: missing %v, unexpected %v", missing, extra)
	}
}

func TestBlockedEvalsConfig_Validate(t *testing.T) {
	cases := []struct {
		name    string
		mod     func(*BlockedEvalsConfig)
		wantErr string
	}{
		{name: "defaults", mod: func(*BlockedEvalsConfig) {}},
		{name: "zero prune interval", mod: func(c *BlockedEvalsConfig) { c.PruneInterval = 0 }, wantErr: "PruneInterval must be positive"},
		{name: "zero prune threshold", mod: func(c *BlockedEvalsConfig) { c.PruneThreshold = 0 }, wantErr: "PruneThreshold must be positive"},
		{name: "zero failed interval", mod: func(c *BlockedEvalsConfig) { c.FailedUnblockInterval = 0 }, wantErr: "FailedUnblockInterval must be positive"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultBlockedEvalsConfig()
			tc.mod(&cfg)
			_, err := NewBlockedEvals(&recordingBroker{}, cfg)
			if tc.wantErr == "" && err != nil {
				t.Fatal(err)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
		})
	}
	if _, err := NewBlockedEvals(nil, DefaultBlockedEvalsConfig()); err == nil {
		t.Fatal("no error without a broker")
	}
}

func TestBlockedEvals_OneBlockedEvalPerJob(t *testing.T) {
	// The eval with the larger max(CreateIndex, SnapshotIndex) is kept;
	// on a tie the newcomer is kept.
	cases := []struct {
		name             string
		existing, newer  []evalOpt
		keepNew          bool
		existingSnapshot uint64
	}{
		{name: "newer create index wins", existing: []evalOpt{evCreate(10)}, newer: []evalOpt{evCreate(20)}, keepNew: true},
		{name: "older create index loses", existing: []evalOpt{evCreate(20)}, newer: []evalOpt{evCreate(10)}, keepNew: false},
		{name: "snapshot index counts: max(10,30)=30 beats max(20,0)=20", existing: []evalOpt{evCreate(10), evSnapshot(30)}, newer: []evalOpt{evCreate(20)}, keepNew: false},
		{name: "snapshot of the newcomer counts: max(5,40)=40 beats 30", existing: []evalOpt{evCreate(30)}, newer: []evalOpt{evCreate(5), evSnapshot(40)}, keepNew: true},
		{name: "tie keeps the newcomer", existing: []evalOpt{evCreate(15)}, newer: []evalOpt{evCreate(15)}, keepNew: true},
		{name: "escaped existing is replaced too", existing: []evalOpt{evCreate(10), evEscaped()}, newer: []evalOpt{evCreate(20)}, keepNew: true},
		{name: "escaped newcomer can lose", existing: []evalOpt{evCreate(20)}, newer: []evalOpt{evCreate(10), evEscaped()}, keepNew: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, rb, _ := newTestBlockedEvals(t)
			existing := newBlockedEval(append([]evalOpt{evJob("web")}, tc.existing...)...)
			newer := newBlockedEval(append([]evalOpt{evJob("web")}, tc.newer...)...)
			b.Block(existing)
			b.Block(newer)
			b.processInbox()

			kept, lost := existing, newer
			if tc.keepNew {
				kept, lost = newer, existing
			}
			dups := noWaitDuplicates(b)
			if len(dups) != 1 || dups[0] != lost {
				t.Fatalf("duplicates = %d evals, want just the loser", len(dups))
			}
			wantBlockedStats(t, b, 1, btoi(kept.EscapedComputedClass), 0)

			// Only the kept one is released by a capacity change.
			b.Unblock("v1:any", 100)
			b.processInbox()
			wantReleased(t, rb, map[*structs.Evaluation]string{kept: ""})
		})
	}
}

// noWaitDuplicates drains the duplicates without waiting for any.
func noWaitDuplicates(b *BlockedEvals) []*structs.Evaluation {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return b.GetDuplicates(ctx, 0)
}

func btoi(v bool) int {
	if v {
		return 1
	}
	return 0
}

func TestBlockedEvals_SameEvalBlockedAgainIsNotADuplicate(t *testing.T) {
	b, rb, _ := newTestBlockedEvals(t)
	e := newBlockedEval(evCreate(10))
	b.Reblock(e, "worker-token")
	updated := e.Copy()
	updated.ModifyIndex = 12
	b.Block(updated) // the FSM applying the worker's UpdateEval
	b.processInbox()
	if d := noWaitDuplicates(b); d != nil {
		t.Fatalf("an eval was reported as a duplicate of itself: %v", d)
	}
	wantBlockedStats(t, b, 1, 0, 0)
	b.Unblock("v1:c", 50)
	b.processInbox()
	wantReleased(t, rb, map[*structs.Evaluation]string{updated: "worker-token"})
}

func TestBlockedEvals_UnblockByClass(t *testing.T) {
	b, rb, _ := newTestBlockedEvals(t)
	eligible := newBlockedEval(evJob("eligible"), evEligibility(map[string]bool{"v1:a": true}))
	ineligible := newBlockedEval(evJob("ineligible"), evEligibility(map[string]bool{"v1:a": false, "v1:b": true}))
	unknown := newBlockedEval(evJob("unknown"), evEligibility(map[string]bool{"v1:b": true}))
	empty := newBlockedEval(evJob("never-saw-a-class"))
	escaped := newBlockedEval(evJob("escaped"), evEscaped())
	quota := newBlockedEval(evJob("quota"), evQuota("team-a"), evEligibility(map[string]bool{"v1:a": true}))
	for _, e := range []*structs.Evaluation{eligible, ineligible, unknown, empty, escaped, quota} {
		b.Block(e)
	}
	b.processInbox()
	wantBlockedStats(t, b, 6, 1, 1)

	// A capacity change in class a releases everything but the eval that
	// ruled class a out: unknown classes count as eligible, escaped evals
	// go on any change, and a plain class unblock ignores quotas.
	b.Unblock("v1:a", 100)
	b.processInbox()
	wantReleased(t, rb, map[*structs.Evaluation]string{
		eligible: "", unknown: "", empty: "", escaped: "", quota: "",
	})
	wantBlockedStats(t, b, 1, 0, 0)

	b.Unblock("v1:b", 101)
	b.processInbox()
	wantReleased(t, rb, map[*structs.Evaluation]string{ineligible: ""})
	wantBlockedStats(t, b, 0, 0, 0)
}

func TestBlockedEvals_UnblockQuota(t *testing.T) {
	b, rb, _ := newTestBlockedEvals(t)
	teamA := newBlockedEval(evJob("a"), evQuota("team-a"))
	teamB := newBlockedEval(evJob("b"), evQuota("team-b"))
	plain := newBlockedEval(evJob("plain"))
	escaped := newBlockedEval(evJob("escaped"), evEscaped())
	for _, e := range []*structs.Evaluation{teamA, teamB, plain, escaped} {
		b.Block(e)
	}
	b.UnblockQuota("", 5) // no-op
	b.UnblockQuota("team-a", 10)
	b.processInbox()
	// A quota change alone helps only evals blocked on that quota.
	wantReleased(t, rb, map[*structs.Evaluation]string{teamA: ""})

	// Class and quota together: escaped evals and the quota's evals.
	b.UnblockClassAndQuota("v1:x", "team-b", 11)
	b.processInbox()
	wantReleased(t, rb, map[*structs.Evaluation]string{teamB: "", escaped: ""})

	// Without a quota it is a plain class unblock.
	b.UnblockClassAndQuota("v1:x", "", 12)
	b.processInbox()
	wantReleased(t, rb, map[*structs.Evaluation]string{plain: ""})
}

func TestBlockedEvals_MissedUnblock(t *testing.T) {
	type tc struct {
		name    string
		eval    *structs.Evaluation
		release bool
	}
	// Recorded changes: class a at index 100, quota team-a at 100.
	cases := []tc{
		{"eligible class changed after snapshot", newBlockedEval(evSnapshot(90), evEligibility(map[string]bool{"v1:a": true})), true},
		{"eligible class changed before snapshot", newBlockedEval(evSnapshot(100), evEligibility(map[string]bool{"v1:a": true})), false},
		{"ineligible class changed after snapshot", newBlockedEval(evSnapshot(90), evEligibility(map[string]bool{"v1:a": false})), false},
		{"unseen class appeared after snapshot", newBlockedEval(evSnapshot(90), evEligibility(map[string]bool{"v1:b": true})), true},
		{"escaped, anything after snapshot", newBlockedEval(evSnapshot(99), evEscaped()), true},
		{"escaped, nothing after snapshot", newBlockedEval(evSnapshot(100), evEscaped()), false},
		{"quota changed after snapshot", newBlockedEval(evSnapshot(90), evQuota("team-a"), evEligibility(map[string]bool{"v1:a": false})), true},
		{"quota changed before snapshot", newBlockedEval(evSnapshot(100), evQuota("team-a")), false},
		{"other quota: class changes do not count", newBlockedEval(evSnapshot(90), evQuota("team-b"), evEligibility(map[string]bool{"v1:a": true})), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, rb, _ := newTestBlockedEvals(t)
			b.Unblock("v1:a", 100)
			b.UnblockQuota("team-a", 100)
			b.processInbox()
			rb.released()

			b.Reblock(c.eval, "tok")
			b.processInbox()
			if c.release {
				wantReleased(t, rb, map[*structs.Evaluation]string{c.eval: "tok"})
				wantBlockedStats(t, b, 0, 0, 0)
			} else {
				wantReleased(t, rb, nil)
				if s := b.Stats(); s.TotalBlocked != 1 {
					t.Fatal("eval not tracked")
				}
			}
		})
	}
}

func TestBlockedEvals_SystemEvalsPerNode(t *testing.T) {
	b, rb, _ := newTestBlockedEvals(t)
	// Ineligible for the only class so that class changes leave it alone.
	sysA := newBlockedEval(evJob("sys-a"), evType(structs.JobTypeSystem), evNode("node-1"), evEligibility(map[string]bool{"v1:a": false}))
	sysB := newBlockedEval(evJob("sys-b"), evType(structs.JobTypeSystem), evNode("node-1"), evEligibility(map[string]bool{"v1:a": false}))
	sysC := newBlockedEval(evJob("sys-c"), evType(structs.JobTypeSystem), evNode("node-2"), evEligibility(map[string]bool{"v1:a": false}))
	for _, e := range []*structs.Evaluation{sysA, sysB, sysC} {
		b.Block(e)
	}
	b.Unblock("v1:a", 10)
	b.UnblockNode("node-3", 11)
	b.processInbox()
	wantReleased(t, rb, nil)

	b.UnblockNode("node-1", 12)
	b.processInbox()
	wantReleased(t, rb, map[*structs.Evaluation]string{sysA: "", sysB: ""})
	wantBlockedStats(t, b, 1, 0, 0)

	// A released system eval is gone from every index: a class unblock
	// it would match now finds only sys-c.
	b.Unblock("v1:b", 13)
	b.processInbox()
	wantReleased(t, rb, map[*structs.Evaluation]string{sysC: ""})
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.system.byNode) != 0 {
		t.Fatalf("node index not empty: %v", b.system.byNode)
	}
}

func TestBlockedEvals_Untrack(t *testing.T) {
	b, rb, _ := newTestBlockedEvals(t)
	web := newBlockedEval(evJob("web"), evQuota("q"))
	sys := newBlockedEval(evJob("sys"), evType(structs.JobTypeSystem), evNode("node-1"))
	prod := newBlockedEval(evJob("web"), evNamespace("prod"))
	for _, e := range []*structs.Evaluation{web, sys, prod} {
		b.Block(e)
	}
	b.Untrack("web", structs.DefaultNamespace)
	b.Untrack("sys", structs.DefaultNamespace)
	b.Untrack("missing", structs.DefaultNamespace)
	b.processInbox()
	wantBlockedStats(t, b, 1, 0, 0)

	b.UnblockNode("node-1", 10)
	b.Unblock("v1:a", 11)
	b.processInbox()
	wantReleased(t, rb, map[*structs.Evaluation]string{prod: ""})
}

func TestBlockedEvals_UnblockFailedOnTimer(t *testing.T) {
	b, rb, c := newTestBlockedEvals(t)
	maxPlans := newBlockedEval(evJob("conflicted"), evTrigger(structs.EvalTriggerMaxPlans),
		evEligibility(map[string]bool{"v1:a": false}))
	maxPlansEscaped := newBlockedEval(evJob("conflicted-escaped"), evTrigger(structs.EvalTriggerMaxPlans), evEscaped())
	capacity := newBlockedEval(evJob("capacity"))
	for _, e := range []*structs.Evaluation{maxPlans, maxPlansEscaped, capacity} {
		b.Block(e)
	}
	b.processInbox()

	c.Advance(time.Minute - time.Second)
	b.processInbox()
	wantReleased(t, rb, nil)
	c.Advance(time.Second)
	b.processInbox()
	wantReleased(t, rb, map[*structs.Evaluation]string{maxPlans: "", maxPlansEscaped: ""})
	wantBlockedStats(t, b, 1, 0, 0)

	// The timer keeps running.
	again := newBlockedEval(evJob("conflicted-again"), evTrigger(structs.EvalTriggerMaxPlans))
	b.Block(again)
	c.Advance(time.Minute)
	b.processInbox()
	wantReleased(t, rb, map[*structs.Evaluation]string{again: ""})
}

func TestBlockedEvals_PruneOldUnblockIndexes(t *testing.T) {
	b, rb, c := newTestBlockedEvals(t)
	b.Unblock("v1:a", 100)
	b.Block(newBlockedEval(evJob("gone"), evSnapshot(100), evFailed(map[string]*structs.AllocMetric{
		"web": {NodesAvailable: map[string]int{"dc1": 1}, ResourcesExhausted: map[string]*structs.Resources{"web": {CPU: 100}}},
	})))
	b.processInbox()
	rb.released()
	b.Untrack("gone", structs.DefaultNamespace)
	b.processInbox()

	late := func() *structs.Evaluation {
		return newBlockedEval(evSnapshot(90), evEligibility(map[string]bool{"v1:a": true}))
	}
	// At 5 min the record is 5 min old, under the 15 min threshold.
	c.Advance(5 * time.Minute)
	e1 := late()
	b.Block(e1)
	b.processInbox()
	wantReleased(t, rb, map[*structs.Evaluation]string{e1: ""})
	if s := b.Stats(); len(s.BlockedResources.ByJob) != 1 {
		t.Fatal("zero resource entry pruned too early")
	}

	// At 20 min the prune drops both the 20-min-old record and the
	// zeroed resource entry.
	c.Advance(15 * time.Minute)
	e2 := late()
	b.Block(e2)
	b.processInbox()
	wantReleased(t, rb, nil)
	s := b.Stats()
	if s.TotalBlocked != 1 {
		t.Fatal("eval not tracked after the record was pruned")
	}
	if _, ok := s.BlockedResources.ByJob[structs.NamespacedID{ID: "gone", Namespace: structs.DefaultNamespace}]; ok {
		t.Fatal("zero resource entry not pruned")
	}
}

func TestBlockedEvals_DisabledAndFlush(t *testing.T) {
	b, rb, c := newTestBlockedEvals(t)
	b.Block(newBlockedEval(evJob("x"), evCreate(1)))
	b.Block(newBlockedEval(evJob("x"), evCreate(2)))
	b.Unblock("v1:a", 5)
	b.Block(newBlockedEval(evJob("y"), evSnapshot(1)))
	// Some of these may be applied by the tracker's goroutine before the
	// flush, the rest are dropped; either way nothing survives it.
	b.SetEnabled(false)
	if b.Enabled() {
		t.Fatal("enabled after SetEnabled(false)")
	}
	if n := c.Pending(); n != 0 {
		t.Fatalf("%d periodic timers still armed", n)
	}
	rb.released()
	wantBlockedStats(t, b, 0, 0, 0)
	b.Block(newBlockedEval())
	b.Unblock("v1:a", 6)
	b.processInbox()
	wantReleased(t, rb, nil)
	wantBlockedStats(t, b, 0, 0, 0)

	b.SetEnabled(true)
	b.SetEnabled(true) // idempotent
	if d := noWaitDuplicates(b); d != nil {
		t.Fatalf("duplicates survived the flush: %d", len(d))
	}
	// Unblock records were flushed: an old snapshot is not "missed".
	e := newBlockedEval(evSnapshot(1))
	b.Block(e)
	b.processInbox()
	wantReleased(t, rb, nil)
	wantBlockedStats(t, b, 1, 0, 0)
}

func TestBlockedEvals_GetDuplicatesWaits(t *testing.T) {
	b, _, c := newTestBlockedEvals(t)
	got := make(chan []*structs.Evaluation, 1)
	go func() { got <- b.GetDuplicates(context.Background(), 0) }()
	b.Block(newBlockedEval(evJob("x"), evCreate(1)))
	b.Block(newBlockedEval(evJob("x"), evCreate(2)))
	b.processInbox()
	if d := <-got; len(d) != 1 || d[0].CreateIndex != 1 {
		t.Fatalf("GetDuplicates = %v, want the older eval", d)
	}

	// Timeout on the tracker's clock.
	timedOut := make(chan []*structs.Evaluation, 1)
	go func() { timedOut <- b.GetDuplicates(context.Background(), time.Second) }()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// The prune and failed-unblock timers are armed too.
	if err := c.BlockUntil(ctx, 3); err != nil {
		t.Fatal(err)
	}
	c.Advance(time.Second)
	if d := <-timedOut; d != nil {
		t.Fatalf("GetDuplicates after timeout = %v", d)
	}
}

// TestBlockedEvals_ProcessedByOwnGoroutine runs without processInbox: the
// tracker's goroutine must apply calls and release evals by itself.
func TestBlockedEvals_ProcessedByOwnGoroutine(t *testing.T) {
	b, rb, _ := newTestBlockedEvals(t)
	rb.called = make(chan struct{}, 1)
	e := newBlockedEval()
	b.Block(e)
	b.Unblock("v1:a", 10)
	<-rb.called
	// called fires before the batch is recorded; sync on the goroutine's
	// processing lock before reading.
	b.processInbox()
	wantReleased(t, rb, map[*structs.Evaluation]string{e: ""})
}

// TestBlockedEvals_FSMCallsNeverBlock holds the broker inside EnqueueAll
// (so the tracker's goroutine is stuck) and checks that a flood of FSM
// calls still returns: a bounded channel would fill and stall Raft here.
func TestBlockedEvals_FSMCallsNeverBlock(t *testing.T) {
	b, rb, _ := newTestBlockedEvals(t)
	rb.gate = make(chan struct{})
	rb.called = make(chan struct{}, 1)
	first := newBlockedEval(evJob("first"))
	b.Block(first)
	b.Unblock("v1:a", 1)
	<-rb.called // the goroutine is now parked in EnqueueAll

	const calls = 20000 // more than Nomad's 8096-entry channel
	var evals []*structs.Evaluation
	for i := range calls / 2 {
		e := newBlockedEval(evJob(fmt.Sprintf("job-%d", i)), evSnapshot(uint64(i+10)))
		evals = append(evals, e)
		b.Block(e)
		b.Unblock("v1:a", uint64(i+10))
	}
	rb.called = nil
	close(rb.gate)
	b.processInbox()

	got := rb.released()
	if len(got) != len(evals)+1 {
		t.Fatalf("released %d evals, want %d", len(got), len(evals)+1)
	}
	for _, e := range evals {
		if _, ok := got[e]; !ok {
			t.Fatalf("eval of %s not released", e.JobID)
		}
	}
}

func TestBlockedEvals_CoalescesCapacityChanges(t *testing.T) {
	b, rb, _ := newTestBlockedEvals(t)
	// Park the tracker's goroutine inside EnqueueAll, so that everything
	// posted below is taken from the inbox in one swap.
	rb.gate = make(chan struct{})
	rb.called = make(chan struct{}, 1)
	b.Block(newBlockedEval(evJob("parker")))
	b.Unblock("v1:park", 1)
	<-rb.called
	rb.called = nil

	var evals []*structs.Evaluation
	for i := range 5 {
		class := fmt.Sprintf("v1:%d", i)
		e := newBlockedEval(evJob("job-"+class), evSnapshot(5), evEligibility(map[string]bool{class: true, "v1:other": false}))
		evals = append(evals, e)
		b.Block(e)
	}
	for i := range 5 {
		b.Unblock(fmt.Sprintf("v1:%d", i), uint64(10+i))
	}
	close(rb.gate)
	b.processInbox()
	rb.mu.Lock()
	batches := len(rb.batches)
	rb.mu.Unlock()
	// The parker's batch, then one for the five changes.
	if batches != 2 {
		t.Fatalf("%d EnqueueAll calls, want 2", batches)
	}
	if got := rb.released(); len(got) != 6 {
		t.Fatalf("released %d, want 6", len(got))
	}
	// The records of every change were kept for missed-unblock checks.
	b.mu.Lock()
	defer b.mu.Unlock()
	idx := []uint64{}
	for i := range 5 {
		idx = append(idx, b.classUnblocks[fmt.Sprintf("v1:%d", i)].index)
	}
	if !slices.Equal(idx, []uint64{10, 11, 12, 13, 14}) {
		t.Fatalf("recorded indexes %v", idx)
	}
}

// TestBlockedEvals_ReblockThroughBroker wires the tracker to a real broker:
// a worker reblocks the eval it holds, the eval is released before the
// worker acks, and the broker delivers it again only after the ack.
func TestBlockedEvals_ReblockThroughBroker(t *testing.T) {
	broker, _ := newTestEvalBroker(t)
	c := clock.NewFake(brokerTestEpoch)
	cfg := DefaultBlockedEvalsConfig()
	cfg.Clock = c
	blocked, err := NewBlockedEvals(broker, cfg)
	if err != nil {
		t.Fatal(err)
	}
	blocked.SetEnabled(true)
	defer blocked.SetEnabled(false)

	e := newBlockedEval(evEligibility(map[string]bool{"v1:a": true}))
	broker.Enqueue(e)
	got, token := mustDequeue(t, broker, structs.JobTypeService)

	blocked.Reblock(got, token)
	blocked.Unblock("v1:a", 10)
	blocked.processInbox()
	wantStats(t, broker, 0, 1, 0, 0, 0)

	if err := broker.Ack(got.ID, token); err != nil {
		t.Fatal(err)
	}
	again, _ := mustDequeue(t, broker, structs.JobTypeService)
	if again.ID != e.ID {
		t.Fatal("the reblocked eval was not redelivered after the ack")
	}
}

func TestBlockedEvals_StatsAndMetrics(t *testing.T) {
	sink := metricstest.WithInmem(t)
	b, _, _ := newTestBlockedEvals(t)
	failed := map[string]*structs.AllocMetric{
		"web": {
			NodesAvailable:     map[string]int{"dc1": 3, "dc2": 1},
			ClassExhausted:     map[string]int{"large": 2},
			ResourcesExhausted: map[string]*structs.Resources{"web": {CPU: 500, MemoryMB: 256}},
		},
		"db": {
			NodesAvailable:     map[string]int{"dc1": 3},
			ResourcesExhausted: map[string]*structs.Resources{"db": {CPU: 1000, MemoryMB: 1024}},
		},
	}
	b.Block(newBlockedEval(evJob("shop"), evFailed(failed), evQuota("q")))
	b.Block(newBlockedEval(evJob("esc"), evEscaped()))
	b.processInbox()

	s := b.Stats()
	if s.TotalBlocked != 2 || s.TotalEscaped != 1 || s.TotalQuotaLimit != 1 {
		t.Fatalf("stats %+v", s)
	}
	shop := s.BlockedResources.ByJob[structs.NamespacedID{ID: "shop", Namespace: structs.DefaultNamespace}]
	// 500 + 1000 MHz, 256 + 1024 MB over both task groups.
	if shop.CPU != 1500 || shop.MemoryMB != 1280 {
		t.Fatalf("job shop blocked %+v, want 1500 MHz 1280 MB", shop)
	}
	// dcs {dc1, dc2} x classes {large, ""}: each pair carries the total.
	for _, k := range []ClassInDC{{"dc1", "large"}, {"dc1", ""}, {"dc2", "large"}, {"dc2", ""}} {
		if v := s.BlockedResources.ByClassInDC[k]; v.CPU != 1500 || v.MemoryMB != 1280 {
			t.Fatalf("class %+v blocked %+v", k, v)
		}
	}

	b.emitStats()
	for name, want := range map[string]float32{
		"nomad.nomad.blocked_evals.total_blocked":                         2,
		"nomad.nomad.blocked_evals.total_escaped":                         1,
		"nomad.nomad.blocked_evals.total_quota_limit":                     1,
		"nomad.nomad.blocked_evals.job.cpu;namespace=default;job=shop":    1500,
		"nomad.nomad.blocked_evals.job.memory;namespace=default;job=shop": 1280,
		"nomad.nomad.blocked_evals.cpu;datacenter=dc1;node_class=large":   1500,
		"nomad.nomad.blocked_evals.memory;datacenter=dc2;node_class=":     1280,
	} {
		if v, ok := metricstest.Gauge(t, sink, name); !ok || v != want {
			t.Errorf("gauge %s = %v (present %v), want %v", name, v, ok, want)
		}
	}

	// Unblocking subtracts: the entries read zero until pruned.
	b.Unblock("v1:a", 10)
	b.processInbox()
	s = b.Stats()
	if v := s.BlockedResources.ByJob[structs.NamespacedID{ID: "shop", Namespace: structs.DefaultNamespace}]; !v.IsZero() {
		t.Fatalf("after release job shop still blocks %+v", v)
	}
}
