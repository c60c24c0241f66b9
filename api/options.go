package api

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Response headers the server sets on reads (and X-Nomad-Index on writes).
const (
	HeaderIndex       = "X-Nomad-Index"
	HeaderKnownLeader = "X-Nomad-KnownLeader"
	HeaderLastContact = "X-Nomad-LastContact"
	HeaderNextToken   = "X-Nomad-NextToken"
	// HeaderToken carries the ACL token's secret on every request.
	HeaderToken = "X-Nomad-Token"
)

// QueryOptions tunes a read. The zero value is a plain, consistent,
// non-blocking read in the client's configured region and namespace.
type QueryOptions struct {
	// Region and Namespace override the client's configuration for this
	// request. Namespace "*" lists across all namespaces.
	Region    string
	Namespace string

	// AllowStale lets any server answer from its local state instead of
	// forwarding the read to the leader.
	AllowStale bool

	// WaitIndex makes the read a blocking query: the server answers once
	// the result's index is greater than WaitIndex, or after WaitTime.
	WaitIndex uint64
	// WaitTime bounds a blocking query (the server caps it at 5 minutes).
	WaitTime time.Duration

	// Prefix filters list results by ID prefix.
	Prefix string
	// Filter is a server-side filter expression applied to list results.
	Filter string

	// PerPage and NextToken page through list results; Reverse inverts
	// their order.
	PerPage   int32
	NextToken string
	Reverse   bool

	// Params are extra query-string parameters (e.g. "all": "true").
	Params map[string]string
	// Headers are extra request headers.
	Headers map[string]string
	// AuthToken overrides the client's token for this request.
	AuthToken string

	ctx context.Context
}

// WithContext returns a copy of the options whose requests are bound to ctx;
// cancelling ctx aborts the request (including a blocking query).
func (o *QueryOptions) WithContext(ctx context.Context) *QueryOptions {
	var n QueryOptions
	if o != nil {
		n = *o
	}
	n.ctx = ctx
	return &n
}

// Context returns the context requests are bound to, Background if none.
func (o *QueryOptions) Context() context.Context {
	if o != nil && o.ctx != nil {
		return o.ctx
	}
	return context.Background()
}

// apply writes the options into the request's query string and headers.
func (o *QueryOptions) apply(r *request) {
	if o == nil {
		return
	}
	setIf(r.params, "region", o.Region)
	setIf(r.params, "namespace", o.Namespace)
	if o.AllowStale {
		r.params.Set("stale", "")
	}
	if o.WaitIndex != 0 {
		r.params.Set("index", strconv.FormatUint(o.WaitIndex, 10))
	}
	if o.WaitTime != 0 {
		r.params.Set("wait", strconv.FormatInt(o.WaitTime.Milliseconds(), 10)+"ms")
	}
	setIf(r.params, "prefix", o.Prefix)
	setIf(r.params, "filter", o.Filter)
	if o.PerPage != 0 {
		r.params.Set("per_page", strconv.FormatInt(int64(o.PerPage), 10))
	}
	setIf(r.params, "next_token", o.NextToken)
	if o.Reverse {
		r.params.Set("reverse", "true")
	}
	for k, v := range o.Params {
		r.params.Set(k, v)
	}
	for k, v := range o.Headers {
		r.header.Set(k, v)
	}
	if o.AuthToken != "" {
		r.token = o.AuthToken
	}
	r.ctx = o.Context()
}

// WriteOptions tunes a write.
type WriteOptions struct {
	// Region and Namespace override the client's configuration.
	Region    string
	Namespace string
	// AuthToken overrides the client's token for this request.
	AuthToken string
	// IdempotencyToken lets the server recognise a retried write.
	IdempotencyToken string
	// Params are extra query-string parameters.
	Params map[string]string
	// Headers are extra request headers.
	Headers map[string]string

	ctx context.Context
}

// WithContext returns a copy of the options whose requests are bound to ctx.
func (o *WriteOptions) WithContext(ctx context.Context) *WriteOptions {
	var n WriteOptions
	if o != nil {
		n = *o
	}
	n.ctx = ctx
	return &n
}

// Context returns the context requests are bound to, Background if none.
func (o *WriteOptions) Context() context.Context {
	if o != nil && o.ctx != nil {
		return o.ctx
	}
	return context.Background()
}

func (o *WriteOptions) apply(r *request) {
	if o == nil {
		return
	}
	setIf(r.params, "region", o.Region)
	setIf(r.params, "namespace", o.Namespace)
	setIf(r.params, "idempotency_token", o.IdempotencyToken)
	for k, v := range o.Params {
		r.params.Set(k, v)
	}
	for k, v := range o.Headers {
		r.header.Set(k, v)
	}
	if o.AuthToken != "" {
		r.token = o.AuthToken
	}
	r.ctx = o.Context()
}

// QueryMeta is what the server said about a read, taken from its headers.
type QueryMeta struct {
	// LastIndex is the Raft index of the result (X-Nomad-Index); pass it as
	// WaitIndex to block until something changes.
	LastIndex uint64
	// LastContact is how long ago the answering server heard from the
	// leader (zero on the leader).
	LastContact time.Duration
	// KnownLeader reports whether the answering server knew of a leader.
	KnownLeader bool
	// RequestTime is the round-trip time of the request.
	RequestTime time.Duration
	// NextToken is set when more pages of results exist.
	NextToken string
}

// WriteMeta is what the server said about a write.
type WriteMeta struct {
	// LastIndex is the Raft index of the write (X-Nomad-Index).
	LastIndex uint64
	// RequestTime is the round-trip time of the request.
	RequestTime time.Duration
}

// parseQueryMeta reads the X-Nomad-* headers. Missing headers leave zero
// values; a malformed one is reported, since it means the server (or a
// proxy) is not speaking this API.
func parseQueryMeta(h http.Header, qm *QueryMeta) error {
	if v := h.Get(HeaderIndex); v != "" {
		idx, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return &headerError{name: HeaderIndex, value: v, err: err}
		}
		qm.LastIndex = idx
	}
	if v := h.Get(HeaderLastContact); v != "" {
		ms, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return &headerError{name: HeaderLastContact, value: v, err: err}
		}
		qm.LastContact = time.Duration(ms) * time.Millisecond
	}
	qm.KnownLeader = strings.EqualFold(h.Get(HeaderKnownLeader), "true")
	qm.NextToken = h.Get(HeaderNextToken)
	return nil
}

func parseWriteMeta(h http.Header, wm *WriteMeta) error {
	if v := h.Get(HeaderIndex); v != "" {
		idx, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return &headerError{name: HeaderIndex, value: v, err: err}
		}
		wm.LastIndex = idx
	}
	return nil
}

func setIf(v url.Values, key, val string) {
	if val != "" {
		v.Set(key, val)
	}
}
