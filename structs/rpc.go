package structs

import "time"

// SchedulerVersion is bumped when workers and the broker stop agreeing on
// the eval protocol; a worker with another version is refused work.
const SchedulerVersion uint16 = 1

// Blocking query limits.
const (
	DefaultBlockingWait = 5 * time.Minute
	MaxBlockingWait     = 300 * time.Second
)

// QueryOptions is embedded in every read request.
type QueryOptions struct {
	Region    string
	Namespace string
	// MinQueryIndex makes the query block until the result's index is
	// greater than it, or MaxQueryTime passes.
	MinQueryIndex uint64
	MaxQueryTime  time.Duration
	// AllowStale lets any server answer from its local state.
	AllowStale bool
	Prefix     string
	Filter     string
	PerPage    int32
	NextToken  string
	Reverse    bool
	AuthToken  string
	// Forwarded marks a request already forwarded once, to stop loops.
	Forwarded bool
}

// RequestRegion returns the region the request targets.
func (q *QueryOptions) RequestRegion() string { return q.Region }

// IsRead reports that queries are reads.
func (q *QueryOptions) IsRead() bool { return true }

// AllowStaleRead reports whether a follower may answer.
func (q *QueryOptions) AllowStaleRead() bool { return q.AllowStale }

// SetForwarded marks the request as forwarded.
func (q *QueryOptions) SetForwarded() { q.Forwarded = true }

// IsForwarded reports whether the request was forwarded.
func (q *QueryOptions) IsForwarded() bool { return q.Forwarded }

// RequestNamespace returns the namespace, the default one when unset.
func (q *QueryOptions) RequestNamespace() string {
	if q.Namespace == "" {
		return DefaultNamespace
	}
	return q.Namespace
}

// RequestToken returns the caller's ACL token (its secret ID), "" for
// none.
func (q *QueryOptions) RequestToken() string { return q.AuthToken }

// WriteRequest is embedded in every write request.
type WriteRequest struct {
	Region           string
	Namespace        string
	AuthToken        string
	IdempotencyToken string
	Forwarded        bool
}

// RequestRegion returns the region the request targets.
func (w *WriteRequest) RequestRegion() string { return w.Region }

// IsRead reports that writes are not reads.
func (w *WriteRequest) IsRead() bool { return false }

// AllowStaleRead is always false for writes.
func (w *WriteRequest) AllowStaleRead() bool { return false }

// SetForwarded marks the request as forwarded.
func (w *WriteRequest) SetForwarded() { w.Forwarded = true }

// IsForwarded reports whether the request was forwarded.
func (w *WriteRequest) IsForwarded() bool { return w.Forwarded }

// RequestNamespace returns the namespace, the default one when unset.
func (w *WriteRequest) RequestNamespace() string {
	if w.Namespace == "" {
		return DefaultNamespace
	}
	return w.Namespace
}

// RequestToken returns the caller's ACL token (its secret ID), "" for
// none.
func (w *WriteRequest) RequestToken() string { return w.AuthToken }

// AuthInfo is implemented by every request that carries a caller's
// token (those embedding QueryOptions or WriteRequest): the RPC layer
// authorizes it for the namespace it targets.
type AuthInfo interface {
	RequestNamespace() string
	RequestToken() string
}

// RPCInfo is implemented by every request so the RPC layer can decide
// where it must be served.
type RPCInfo interface {
	RequestRegion() string
	IsRead() bool
	AllowStaleRead() bool
	IsForwarded() bool
	SetForwarded()
}

// QueryMeta is returned with every read.
type QueryMeta struct {
	// Index is the Raft index the result reflects.
	Index uint64
	// LastContact is how long ago this server heard from the leader; zero
	// on the leader itself.
	LastContact time.Duration
	KnownLeader bool
	NextToken   string
}

// WriteMeta is returned with every write.
type WriteMeta struct {
	Index uint64
}

// GenericRequest is a request with no arguments beyond the options.
type GenericRequest struct {
	QueryOptions
}

// GenericResponse is a write response with only the index.
type GenericResponse struct {
	WriteMeta
}
