// Package periodic is the leader's periodic dispatcher: it launches the
// children of periodic jobs on their cron schedule. A child is a copy of
// its template (the periodic job) with the ID "<template>/periodic-<unix
// launch time>", ParentID set and no periodic block, registered together
// with a "periodic-job" evaluation in one Raft entry; the state store
// records the launch in the same entry.
//
// # When a template launches
//
// From the later of its last recorded launch and the submission of its
// current version, a template's next launch is the first time its cron
// specs (read in its time zone, UTC by default) name after that. When
// the time comes:
//
//   - one launch is due: the child is launched with that launch time;
//   - several are due (no leader while they passed): a single child is
//     launched, now, and the missed ones are skipped;
//   - the template prohibits overlap and a child of it is not dead yet:
//     the launch is skipped and the next one awaited.
//
// Stopped templates, and periodic templates that are also parameterized,
// launch nothing. Because launches are recorded in state, a new leader
// knows what was launched and catches up on a missed launch at once; only
// the memory of launches skipped for overlap is the leader's own, and a
// new leader may launch one of those late.
package periodic
