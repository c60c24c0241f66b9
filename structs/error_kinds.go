package structs

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// Error kinds.
//
// Code inside one process tests what went wrong with errors.Is against
// the sentinels below, never by reading an error's text. Errors cross
// msgpack-RPC as text only, though, as they do in Nomad: net/rpc hands
// the caller an rpc.ServerError (a string), and a coded error travels as
// "RPC Error:: <code>,<message>". A kind survives the hop because its
// sentinel's text is fixed (Nomad's agents and clients match some of
// them, such as "No cluster leader" and "No path to region") and
// RecoverError, the one place that reads an error's text, recognises it
// there, or falls back on the status code. Nothing else parses error
// text (but RetryAfterOf, which reads back the wait that a
// BackpressureError's own text ends with): rpcnet.DecodeError builds the
// caller's error from RecoverError, and KindOf applies it to errors that
// arrive with no kind in their chain.
//
// Specific kinds (an unknown job, disabled registration) are also of a
// general one (ErrNotFound, ErrPermissionDenied), so errors.Is finds
// either; the HTTP status follows from the general kind (HTTPStatus).

// General kinds. Their texts are never recognised after a network hop
// (they are words any message may contain); the status code carries them.
var (
	// ErrNotFound is an object the request names that does not exist: 404.
	ErrNotFound = errors.New("not found")
	// ErrInvalid is a request that can never succeed as written: 400.
	// A *ValidationError is of this kind.
	ErrInvalid = errors.New("invalid request")
	// ErrConflict is a write whose precondition no longer holds (a
	// check-index mismatch, a deployment no longer active). It answers
	// 400, as these have always answered here; retrying with fresh state
	// may succeed.
	ErrConflict = errors.New("conflict")
	// ErrUnauthenticated is a credential presented to log in that does
	// not prove who the caller is (a JWT with a bad signature, expired,
	// for another audience): 401.
	ErrUnauthenticated = errors.New("unauthenticated")
)

// ErrPermissionDenied refuses a request its caller may not make: 403. Its
// text is Nomad's, and is recognised after a network hop.
var ErrPermissionDenied = errors.New("Permission denied")

// Specific kinds, recognised by their text after a network hop, which
// therefore must never change.
var (
	// ErrNoLeader: the servers have no leader now; retry later.
	ErrNoLeader = errors.New("No cluster leader")
	// ErrNoRegionPath: no server of the named region is known. The caller
	// named the region, so it answers 400.
	ErrNoRegionPath = errors.New("No path to region")
	// ErrBrokerDisabled: the eval broker is paused or this server is not
	// the leader.
	ErrBrokerDisabled = errors.New("eval broker disabled")
	// ErrPlanQueueDisabled: the plan queue is off (not the leader).
	ErrPlanQueueDisabled = errors.New("plan queue is disabled")
	// ErrSchedulerVersion: a worker speaks another scheduler version.
	ErrSchedulerVersion = errors.New("calling scheduler version is not supported")
	// ErrNotOutstanding, ErrTokenMismatch, ErrNackTimeoutReached: an
	// ack or nack for an eval the caller no longer holds.
	ErrNotOutstanding     = errors.New("evaluation is not outstanding")
	ErrTokenMismatch      = errors.New("evaluation token does not match")
	ErrNackTimeoutReached = errors.New("evaluation nack timeout reached")
	// ErrUnknownMethod: no endpoint serves the RPC method named.
	ErrUnknownMethod = errors.New("unknown RPC method")
	// ErrBackpressure: the leader holds more evaluations than the
	// scheduler configuration's EvalBacklogLimit and refuses writes that
	// would add one; nothing was written, retry later: 429. A
	// *BackpressureError, whose text opens with this one's, says when.
	ErrBackpressure = errors.New("too many evaluations waiting")
	// ErrMemoryPressure: a server's live heap passed the high-water mark
	// of its configured memory limit, and the leader refuses writes that
	// would add work until it falls back; of kind ErrBackpressure (429).
	// A *MemoryPressureError, whose text opens with this one's, says
	// which server and when to retry.
	ErrMemoryPressure error = &kindedSentinel{msg: "servers near their memory limit", kind: ErrBackpressure}

	// ErrJobRegistrationOff: the scheduler configuration refuses job
	// writes; of kind ErrPermissionDenied.
	ErrJobRegistrationOff error = &kindedSentinel{
		msg:  "Job registration, dispatch, and scale are disabled by the scheduler configuration",
		kind: ErrPermissionDenied,
	}
	// ErrUnknownNode, ErrUnknownJob, ErrUnknownEval, ErrUnknownAlloc,
	// ErrUnknownDeployment: the object named is not in state; of kind
	// ErrNotFound.
	ErrUnknownNode       error = &kindedSentinel{msg: "node not found", kind: ErrNotFound}
	ErrUnknownJob        error = &kindedSentinel{msg: "job not found", kind: ErrNotFound}
	ErrUnknownEval       error = &kindedSentinel{msg: "eval not found", kind: ErrNotFound}
	ErrUnknownAlloc      error = &kindedSentinel{msg: "alloc not found", kind: ErrNotFound}
	ErrUnknownDeployment error = &kindedSentinel{msg: "deployment not found", kind: ErrNotFound}
	// ErrJobSourceNotFound: no source is kept for the job version asked
	// for; of kind ErrNotFound, with Nomad's text.
	ErrJobSourceNotFound error = &kindedSentinel{msg: "job source not found", kind: ErrNotFound}

	// ErrJobModifyIndex: a registration's check-and-set on the job's
	// modify index failed; of kind ErrConflict. Its text opens the
	// message, the indexes follow: "Enforcing job modify index 5: job
	// exists with conflicting job modify index: 7", as Nomad words it.
	ErrJobModifyIndex error = &kindedSentinel{msg: "Enforcing job modify index", kind: ErrConflict, opensMessage: true}

	// ErrRootKeyNotFound: no root key has the ID; of kind ErrNotFound.
	ErrRootKeyNotFound error = &kindedSentinel{msg: "root key not found", kind: ErrNotFound}
	// ErrRootKeyActive: the active root key cannot be removed; of kind
	// ErrInvalid.
	ErrRootKeyActive error = &kindedSentinel{msg: "active root key cannot be deleted - call rotate first", kind: ErrInvalid}

	// ErrACLDisabled: an ACL endpoint called while ACLs are off; of kind
	// ErrInvalid (400), as Nomad answers.
	ErrACLDisabled error = &kindedSentinel{msg: "ACL support disabled", kind: ErrInvalid}
	// ErrACLTokenNotFound: the request's token is no token; of kind
	// ErrPermissionDenied (403).
	ErrACLTokenNotFound error = &kindedSentinel{msg: "ACL token not found", kind: ErrPermissionDenied}
	// ErrACLTokenExpired: the request's token has expired; of kind
	// ErrPermissionDenied (403; Nomad lets this one through as a 500).
	ErrACLTokenExpired error = &kindedSentinel{msg: "ACL token expired", kind: ErrPermissionDenied}
	// ErrACLPolicyNotFound, ErrACLRoleNotFound: the policy or role named
	// does not exist; of kind ErrNotFound.
	ErrACLPolicyNotFound error = &kindedSentinel{msg: "ACL policy not found", kind: ErrNotFound}
	ErrACLRoleNotFound   error = &kindedSentinel{msg: "ACL role not found", kind: ErrNotFound}
	// ErrACLAuthMethodNotFound, ErrACLBindingRuleNotFound: the auth
	// method or binding rule named does not exist; of kind ErrNotFound.
	ErrACLAuthMethodNotFound  error = &kindedSentinel{msg: "ACL auth-method not found", kind: ErrNotFound}
	ErrACLBindingRuleNotFound error = &kindedSentinel{msg: "ACL binding rule not found", kind: ErrNotFound}
	// ErrACLBootstrapDone: the one bootstrap was made and no reset file
	// allows another; of kind ErrInvalid. Its text opens the message,
	// "ACL bootstrap already done (reset index: 7)".
	ErrACLBootstrapDone error = &kindedSentinel{msg: "ACL bootstrap already done", kind: ErrInvalid, opensMessage: true}
	// ErrNamespaceNotFound: the namespace named does not exist; of kind
	// ErrNotFound.
	ErrNamespaceNotFound error = &kindedSentinel{msg: "namespace not found", kind: ErrNotFound}
	// ErrNodePoolNotFound: the node pool named does not exist; of kind
	// ErrNotFound.
	ErrNodePoolNotFound error = &kindedSentinel{msg: "node pool not found", kind: ErrNotFound}
)

// recognised are the kinds RecoverError finds by text, most specific
// first.
var recognised = []error{
	ErrNoLeader, ErrNoRegionPath, ErrBrokerDisabled, ErrPlanQueueDisabled, ErrSchedulerVersion,
	ErrNotOutstanding, ErrTokenMismatch, ErrNackTimeoutReached, ErrUnknownMethod, ErrMemoryPressure, ErrBackpressure,
	ErrJobRegistrationOff, ErrJobModifyIndex, ErrUnknownNode, ErrUnknownJob, ErrUnknownEval, ErrUnknownAlloc,
	ErrUnknownDeployment, ErrRootKeyNotFound, ErrRootKeyActive, ErrACLDisabled, ErrACLTokenNotFound,
	ErrACLTokenExpired, ErrACLPolicyNotFound, ErrACLRoleNotFound, ErrACLAuthMethodNotFound,
	ErrACLBindingRuleNotFound, ErrACLBootstrapDone, ErrNamespaceNotFound, ErrNodePoolNotFound, ErrPermissionDenied,
	ErrJobSourceNotFound,
}

// kinds is every kind, most specific first: KindOf returns the first err
// is.
var kinds = append(append([]error{}, recognised...), ErrNotFound, ErrInvalid, ErrConflict, ErrUnauthenticated)

// kindedSentinel is a specific kind that is also of a general one.
// opensMessage marks a sentinel whose text starts a message that goes on
// with details after a space, which RecoverError accepts too.
type kindedSentinel struct {
	msg          string
	kind         error
	opensMessage bool
}

func (e *kindedSentinel) Error() string        { return e.msg }
func (e *kindedSentinel) Is(target error) bool { return target == e.kind }

// kindError gives an error a kind without changing its text.
type kindError struct {
	kind error
	err  error
}

func (e *kindError) Error() string   { return e.err.Error() }
func (e *kindError) Unwrap() []error { return []error{e.err, e.kind} }

// WithKind returns err, same text, as of kind too: errors.Is(result, kind)
// holds. nil stays nil.
func WithKind(kind, err error) error {
	if err == nil {
		return nil
	}
	return &kindError{kind: kind, err: err}
}

// KindErrorf is fmt.Errorf with a kind: the text as formatted, and
// errors.Is(result, kind) holds.
func KindErrorf(kind error, format string, args ...interface{}) error {
	return WithKind(kind, fmt.Errorf(format, args...))
}

// Is makes a *ValidationError of kind ErrInvalid.
func (v *ValidationError) Is(target error) bool { return target == ErrInvalid }

// KindOf returns the most specific kind of err: one of the sentinels in
// this file, or nil for an error of no known kind. An error with a kind
// in its chain gives that one; any other error may have crossed the
// network (an rpc.ServerError, or one formatted with %v around it), so
// its text is read by RecoverError.
func KindOf(err error) error {
	if err == nil {
		return nil
	}
	for _, k := range kinds {
		if errors.Is(err, k) {
			return k
		}
	}
	kind, _, _ := RecoverError(err.Error())
	return kind
}

// IsKind reports whether err is of kind, in process or after a network
// hop: errors.Is that also works on an error that arrived as text.
func IsKind(err, kind error) bool {
	return err != nil && (errors.Is(err, kind) || errors.Is(KindOf(err), kind))
}

// HTTPStatus is the status an error of kind answers with, 0 when its kind
// has none (the agent answers 500).
func HTTPStatus(kind error) int {
	switch {
	case kind == nil:
		return 0
	case errors.Is(kind, ErrNotFound):
		return http.StatusNotFound
	case errors.Is(kind, ErrPermissionDenied):
		return http.StatusForbidden
	case errors.Is(kind, ErrInvalid), errors.Is(kind, ErrConflict), errors.Is(kind, ErrNoRegionPath):
		return http.StatusBadRequest
	case errors.Is(kind, ErrBackpressure):
		return http.StatusTooManyRequests
	case errors.Is(kind, ErrUnauthenticated):
		return http.StatusUnauthorized
	}
	return 0
}

// opensLine reports whether line is a message that sentinel k opens, at
// its start or after context ("registering: Enforcing job modify index
// 5: ...").
func opensLine(k error, line string) bool {
	ks, ok := k.(*kindedSentinel)
	if !ok || !ks.opensMessage {
		return false
	}
	return strings.HasPrefix(line, ks.msg+" ") || strings.Contains(line, ": "+ks.msg+" ")
}

// kindOfStatus is the general kind a status code carries across the
// network when the message names no specific one.
func kindOfStatus(code int) error {
	switch code {
	case http.StatusNotFound:
		return ErrNotFound
	case http.StatusForbidden:
		return ErrPermissionDenied
	case http.StatusBadRequest:
		return ErrInvalid
	case http.StatusTooManyRequests:
		return ErrBackpressure
	case http.StatusUnauthorized:
		return ErrUnauthenticated
	}
	return nil
}

// RecoverError reads the text of an error that crossed the network, the
// only place in the code that does. text is a server's error as the
// caller received it: plain ("No cluster leader"), coded ("RPC Error::
// 404,job not found"), or either wrapped in context by some caller
// ("looking up job: RPC Error:: 404,job not found").
//
// code is the status of the "RPC Error:: <code>," marker (400 to 599),
// 0 without one; msg is text without the marker. kind is the specific
// kind a line of msg names: its sentinel's text alone, or with context
// around it as "%s: %w" and "%w: %s" produce (errors.Join puts one
// error per line). A sentinel's words inside a longer phrase ("node not
// found somewhere") are not its kind. Failing that, kind is the general
// kind of code, or nil.
func RecoverError(text string) (kind error, code int, msg string) {
	msg = text
	if i := strings.Index(text, rpcCodedPrefix); i >= 0 {
		codeStr, rest, found := strings.Cut(text[i+len(rpcCodedPrefix):], ",")
		if c, err := strconv.Atoi(codeStr); found && err == nil && c >= 400 && c <= 599 {
			code, msg = c, text[:i]+rest
		}
	}
	for _, line := range strings.Split(msg, "\n") {
		for _, k := range recognised {
			t := k.Error()
			if line == t || strings.HasSuffix(line, ": "+t) || strings.HasPrefix(line, t+": ") ||
				strings.Contains(line, ": "+t+": ") || opensLine(k, line) {
				return k, code, msg
			}
		}
	}
	return kindOfStatus(code), code, msg
}
