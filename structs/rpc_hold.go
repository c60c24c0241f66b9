package structs

import "time"

// TimeToBlock is how long a server may hold this query before answering:
// the blocking wait (MaxQueryTime, default DefaultBlockingWait, capped at
// MaxBlockingWait) plus the jitter a server adds (up to 1/16 of it), or 0
// for a query that answers at once. Network callers extend their
// deadline by it.
func (q *QueryOptions) TimeToBlock() time.Duration {
	if q.MinQueryIndex == 0 {
		return 0
	}
	wait := q.MaxQueryTime
	if wait <= 0 {
		wait = DefaultBlockingWait
	}
	if wait > MaxBlockingWait {
		wait = MaxBlockingWait
	}
	return wait + wait/16
}

// TimeToBlock is 0: writes answer once committed.
func (w *WriteRequest) TimeToBlock() time.Duration { return 0 }

// TimeToBlock is the dequeue's own wait for an eval.
func (r *EvalDequeueRequest) TimeToBlock() time.Duration { return r.Timeout }
