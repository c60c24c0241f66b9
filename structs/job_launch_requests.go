package structs

// Launching children of job templates on demand: a forced launch of a
// periodic job, and a dispatch of a parameterized one.

// PeriodicForceRequest launches a child of a periodic job now.
type PeriodicForceRequest struct {
	JobID string
	WriteRequest
}

// PeriodicForceResponse names the launched child's eval.
type PeriodicForceResponse struct {
	EvalID          string
	EvalCreateIndex uint64
	WriteMeta
}

// DispatchPayloadSizeLimit bounds a dispatch payload (16 KiB, as Nomad).
const DispatchPayloadSizeLimit = 16 * 1024

// DispatchLaunchSuffix separates a parameterized job's ID from the rest
// of its children's IDs: "<parent>/dispatch-<unix>-<8 hex>".
const DispatchLaunchSuffix = "/dispatch-"

// JobDispatchRequest dispatches a parameterized job: a child with the
// payload and meta given. IdPrefixTemplate, when set, goes into the
// child's ID after the dispatch suffix; Priority, when not 0, overrides
// the template's.
type JobDispatchRequest struct {
	JobID            string
	Payload          []byte
	Meta             map[string]string
	IdPrefixTemplate string
	Priority         int
	WriteRequest
}

// JobDispatchResponse names the dispatched child and its eval.
type JobDispatchResponse struct {
	DispatchedJobID string
	EvalID          string
	EvalCreateIndex uint64
	JobCreateIndex  uint64
	WriteMeta
}
