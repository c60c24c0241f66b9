// Package schedtest holds test fixtures for the scheduler: builders for
// nodes, jobs, allocations and evaluations. It imports only structs, so
// the scheduler's own tests and any other package's tests can use it
// without an import cycle.
package schedtest
