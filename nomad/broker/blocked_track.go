package broker

import (
	"time"

	"github.com/opennomad/nomad/structs"
)

// This file holds the tracker's rules, applied under its lock by
// processInbox, in call order.

// apply runs a batch of calls and returns the evals they released.
func (b *BlockedEvals) apply(ops []blockedOp) map[*structs.Evaluation]string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.on {
		return nil
	}
	released := make(map[*structs.Evaluation]string)
	for i := 0; i < len(ops); {
		op := ops[i]
		switch op.kind {
		case opUnblock:
			// Coalesce the run of capacity changes into one pass.
			j := i + 1
			for j < len(ops) && ops[j].kind == opUnblock {
				j++
			}
			b.unblockLocked(ops[i:j], released)
			i = j
			continue
		case opBlock:
			b.blockLocked(op.eval, op.token, released)
		case opUntrack:
			if id, ok := b.jobs[op.job]; ok {
				b.untrackLocked(id)
			}
		case opUnblockNode:
			for _, id := range b.system.evalsOn(op.nodeID) {
				b.releaseLocked(id, released)
			}
		case opUnblockFailed:
			b.unblockFailedLocked(released)
		}
		i++
	}
	return released
}

// blockLocked applies the one-per-job rule and the missed-unblock check,
// then tracks eval.
func (b *BlockedEvals) blockLocked(eval *structs.Evaluation, token string, released map[*structs.Evaluation]string) {
	job := eval.NamespacedJobID()
	if existingID, ok := b.jobs[job]; ok {
		existing, tracked := b.lookupLocked(existingID)
		switch {
		case !tracked:
			// jobs and the eval sets always change together; a miss is
			// a bug worth a log line, not a crash.
			b.logger.Error("blocked eval indexed by job is not tracked", "eval_id", existingID, "job_id", eval.JobID, "namespace", eval.Namespace)
			delete(b.jobs, job)
		case existingID == eval.ID:
			// The same eval blocked again: the FSM re-upserting it, or
			// a worker's Reblock after its UpdateEval. Replace it, and
			// keep the delivery token whichever call carried it.
			if token == "" {
				token = existing.token
			}
			b.untrackLocked(existingID)
		case latestEvalIndex(existing.eval) <= latestEvalIndex(eval):
			b.untrackLocked(existingID)
			b.addDuplicateLocked(existing.eval)
		default:
			b.addDuplicateLocked(eval)
			return
		}
	}

	if b.missedUnblockLocked(eval) {
		released[eval] = token
		return
	}
	b.trackLocked(eval, token)
}

// latestEvalIndex is the newest state an eval reflects.
func latestEvalIndex(e *structs.Evaluation) uint64 {
	return max(e.CreateIndex, e.SnapshotIndex)
}

func (b *BlockedEvals) addDuplicateLocked(e *structs.Evaluation) {
	b.duplicates = append(b.duplicates, e)
	select {
	case b.duplicateCh <- struct{}{}:
	default:
	}
}

// missedUnblockLocked reports whether a capacity change that would have
// released eval happened after the state the scheduler saw
// (SnapshotIndex): it ran on a snapshot taken before capacity appeared.
//   - An eval blocked on a quota missed an unblock if that quota changed
//     after its snapshot.
//   - Otherwise, if a class it could use (or never saw) changed after its
//     snapshot.
//   - An escaped eval, if anything changed after its snapshot.
func (b *BlockedEvals) missedUnblockLocked(eval *structs.Evaluation) bool {
	var latest uint64
	for _, ev := range b.classUnblocks {
		latest = max(latest, ev.index)
	}
	for _, ev := range b.quotaUnblocks {
		latest = max(latest, ev.index)
	}

	if q := eval.QuotaLimitReached; q != "" {
		if ev, ok := b.quotaUnblocks[q]; ok {
			return eval.SnapshotIndex < ev.index
		}
	} else {
		for class, ev := range b.classUnblocks {
			if eval.SnapshotIndex >= ev.index {
				continue
			}
			if elig, seen := eval.ClassEligibility[class]; !seen || elig {
				return true
			}
		}
	}
	return eval.EscapedComputedClass && eval.SnapshotIndex < latest
}

func (b *BlockedEvals) trackLocked(eval *structs.Evaluation, token string) {
	w := wrappedEval{eval: eval, token: token}
	b.jobs[eval.NamespacedJobID()] = eval.ID
	if eval.QuotaLimitReached != "" {
		b.totalQuotaLimit++
	}
	b.resources.add(eval, b.clock.Now())
	if eval.EscapedComputedClass {
		b.escaped[eval.ID] = w
		return
	}
	b.captured[eval.ID] = w
	if eval.Type == structs.JobTypeSystem && eval.NodeID != "" {
		b.system.add(eval)
	}
}

func (b *BlockedEvals) lookupLocked(id string) (wrappedEval, bool) {
	if w, ok := b.captured[id]; ok {
		return w, true
	}
	w, ok := b.escaped[id]
	return w, ok
}

// untrackLocked removes a tracked eval from every index. Unlike Nomad it
// also drops a system eval from the node index, so a canceled duplicate
// or an untracked job can never be released by UnblockNode later.
func (b *BlockedEvals) untrackLocked(id string) (wrappedEval, bool) {
	w, ok := b.lookupLocked(id)
	if !ok {
		return w, false
	}
	delete(b.captured, id)
	delete(b.escaped, id)
	b.system.remove(w.eval)
	job := w.eval.NamespacedJobID()
	if b.jobs[job] == id {
		delete(b.jobs, job)
	}
	if w.eval.QuotaLimitReached != "" {
		b.totalQuotaLimit--
	}
	b.resources.remove(w.eval, b.clock.Now())
	return w, true
}

// releaseLocked untracks an eval and adds it to the batch for the broker.
func (b *BlockedEvals) releaseLocked(id string, released map[*structs.Evaluation]string) {
	if w, ok := b.untrackLocked(id); ok {
		released[w.eval] = w.token
	}
}

// unblockPair is one capacity change: a class, a quota, or both.
type unblockPair struct{ class, quota string }

// matches reports whether the change can help a captured eval: it must be
// blocked on the change's quota (when the change names one), and must not
// have marked the class ineligible. A class the eval never saw counts as
// eligible: the scheduler did not know about it.
func (p unblockPair) matches(e *structs.Evaluation) bool {
	if p.quota != "" && e.QuotaLimitReached != p.quota {
		return false
	}
	if elig, seen := e.ClassEligibility[p.class]; seen && !elig {
		return false
	}
	return true
}

// unblockLocked records a run of capacity changes and releases, in one
// pass over the blocked set, every eval any of them can help.
func (b *BlockedEvals) unblockLocked(ops []blockedOp, released map[*structs.Evaluation]string) {
	pairs := make([]unblockPair, 0, len(ops))
	seen := make(map[unblockPair]struct{}, len(ops))
	anyClass := false
	for _, op := range ops {
		if op.class != "" {
			b.classUnblocks[op.class] = unblockEvent{index: op.index, at: op.at}
			anyClass = true
		}
		if op.quota != "" {
			b.quotaUnblocks[op.quota] = unblockEvent{index: op.index, at: op.at}
		}
		p := unblockPair{class: op.class, quota: op.quota}
		if _, dup := seen[p]; !dup {
			seen[p] = struct{}{}
			pairs = append(pairs, p)
		}
	}

	// Escaped evals could fit on a node of any class.
	if anyClass {
		for id := range b.escaped {
			b.releaseLocked(id, released)
		}
	}
	for id, w := range b.captured {
		for _, p := range pairs {
			if p.matches(w.eval) {
				b.releaseLocked(id, released)
				break
			}
		}
	}
}

func (b *BlockedEvals) unblockFailedLocked(released map[*structs.Evaluation]string) {
	for _, set := range []map[string]wrappedEval{b.captured, b.escaped} {
		for id, w := range set {
			if w.eval.TriggeredBy == structs.EvalTriggerMaxPlans {
				b.releaseLocked(id, released)
			}
		}
	}
}

// pruneLocked forgets unblock records and empty resource stats older than
// cutoff, so neither grows without bound. An eval whose snapshot predates
// a pruned record can no longer be caught by the missed-unblock check;
// the threshold is far beyond any eval's time in a scheduler.
func (b *BlockedEvals) pruneLocked(cutoff time.Time) {
	for class, ev := range b.classUnblocks {
		if ev.at.Before(cutoff) {
			delete(b.classUnblocks, class)
		}
	}
	for quota, ev := range b.quotaUnblocks {
		if ev.at.Before(cutoff) {
			delete(b.quotaUnblocks, quota)
		}
	}
	b.resources.prune(cutoff)
}
