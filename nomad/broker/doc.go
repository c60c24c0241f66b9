// Package broker holds the leader's two in-memory queues of evaluations:
// the eval broker (Broker), which hands pending evals to scheduler workers,
// and the blocked-evals tracker (BlockedEvals), which holds evals that
// could not place everything until the cluster changes in a way that can
// help, then releases them into the broker.
//
// # Where they sit
//
// Both live on the leader only and keep nothing worth persisting: every
// eval they hold is also in the state store. A new leader enables them
// (SetEnabled(true)) and rebuilds them from the store, Restore for each
// pending eval and Block for each blocked one; a server that loses
// leadership disables them, which forgets everything. The FSM feeds them
// from its apply goroutine (Enqueue, Block, Unblock*), so no method that
// the FSM calls ever blocks. Workers reach the broker through the Eval.*
// RPCs of package nomad: Dequeue, Ack, Nack, OutstandingReset and the
// nack-timer pause around a plan submission.
//
// # Guarantees
//
//   - Every eval is processed at least once. Each Dequeue hands out a
//     fresh delivery token and arms a nack timer (Config.NackTimeout); an
//     eval that is not acked in time is nacked automatically. A nacked
//     eval is ready again after a delay: Config.InitialNackDelay after its
//     first delivery, Config.SubsequentNackDelay times (deliveries-1)
//     after later ones.
//   - Delivery limit: an eval delivered Config.DeliveryLimit times without
//     an Ack moves to FailedQueue, which the leader drains to mark it
//     failed and create its follow-up.
//   - At most one eval per job is ready or outstanding. Later evals of the
//     job wait; when the one in flight is acked only the best of them goes
//     on, and the rest are handed to the leader (Cancelable) to be written
//     back as canceled.
//   - Priority: Dequeue returns the highest-priority ready eval of the
//     requested scheduler types, equal priorities in CreateIndex order.
//   - Blocked evals are unblocked by a capacity change that could help
//     them: a change in a computed node class they did not mark
//     ineligible (any class for an "escaped" eval), on a quota, or on the
//     node of a blocked system-job eval. An eval blocked on a snapshot
//     older than such a change is released at once. At most one blocked
//     eval per job is kept; the loser goes to the leader through
//     GetDuplicates to be canceled. Evals blocked after the scheduler ran
//     out of plan attempts are released every
//     BlockedEvalsConfig.FailedUnblockInterval regardless.
//   - A worker that reblocks the eval it still holds does not lose it: the
//     tracker releases it under the delivery token (EvalEnqueuer), and the
//     broker enqueues it only once that delivery is acked.
//
// # Time
//
// Every timer (nack timeouts, nack and Wait delays, WaitUntil, pruning,
// the failed-unblock interval, the stats loops) runs on the clock.Clock
// of the config, so the tests drive time with clock.Fake and never sleep.
//
// # Imports
//
// This package imports structs, nomad/clock and nomad/priorityheap, and
// never package nomad: the tracker reaches the broker only through the
// EvalEnqueuer interface (a recorder in the tests is its in-memory twin),
// and package nomad wires the two together.
//
// Metric names (nomad.broker.*, nomad.blocked_evals.*) and logger names
// (eval_broker, blocked_evals) are Nomad's and must not change.
package broker
