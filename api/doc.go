// Package api is a Go client for the scheduler's HTTP API, which speaks
// Nomad's v1 wire format: the same paths, PascalCase JSON field names,
// durations as integer nanoseconds, and the X-Nomad-* headers. It depends on
// the standard library only, so it can be vendored by tools that must not
// pull in the server.
//
// Typical use:
//
//	client, err := api.NewClient(api.DefaultConfig())
//	if err != nil { ... }
//	resp, _, err := client.Jobs().Register(job, nil)
//
// DefaultConfig reads NOMAD_ADDR, NOMAD_TOKEN, NOMAD_REGION and
// NOMAD_NAMESPACE. Reads accept *QueryOptions (blocking queries with
// WaitIndex/WaitTime, stale reads, prefix and filter) and return *QueryMeta
// from the response headers; writes accept *WriteOptions and return
// *WriteMeta. A non-2xx answer surfaces as *UnexpectedResponseError carrying
// the status code and the server's text.
//
// Pointer fields in the job types (Job, TaskGroup, Task and their blocks)
// distinguish "unset" from the zero value, exactly as Nomad's own api
// package does; Job.Canonicalize fills Nomad's defaults into unset fields.
package api
