package agent

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/opennomad/nomad/nomad"
	"github.com/opennomad/nomad/structs"
)

// CodedError is an error with the HTTP status it answers with.
type CodedError struct {
	Code int
	Msg  string
}

func (e *CodedError) Error() string { return e.Msg }

// codedError is a shorthand for handlers.
func codedError(code int, msg string) error { return &CodedError{Code: code, Msg: msg} }

// rpcCodedPrefix marks a server error that carries its HTTP status across
// the RPC boundary: "RPC Error:: 400,message".
const rpcCodedPrefix = "RPC Error:: "

// notFoundErrors are server errors about missing objects. They are matched
// by suffix because errors crossing the network arrive as text, often
// wrapped with context ("job \"x\": job not found").
var notFoundErrors = []error{
	structs.ErrUnknownJob, structs.ErrUnknownNode, structs.ErrUnknownEval, structs.ErrUnknownAlloc,
}

// errorStatus maps an error to its HTTP status and plain-text body.
//
//   - *CodedError: its code.
//   - *structs.ValidationError anywhere in the chain: 400 with every
//     problem. (Nomad answers 500 here; a client error is a 400.)
//   - "RPC Error:: <code>,<message>": that code and message.
//   - a missing-object error (job/node/eval/alloc not found): 404.
//   - job registration disabled by the scheduler configuration: 403.
//   - a registration whose EnforceIndex check failed: 400.
//   - anything else, including "No cluster leader": 500.
func errorStatus(err error) (int, string) {
	var coded *CodedError
	if errors.As(err, &coded) {
		return coded.Code, coded.Msg
	}
	var verr *structs.ValidationError
	if errors.As(err, &verr) {
		return http.StatusBadRequest, err.Error()
	}
	msg := err.Error()
	if i := strings.Index(msg, rpcCodedPrefix); i >= 0 {
		codeStr, rest, ok := strings.Cut(msg[i+len(rpcCodedPrefix):], ",")
		if code, cerr := strconv.Atoi(codeStr); ok && cerr == nil && code >= 400 && code < 600 {
			return code, rest
		}
	}
	for _, nf := range notFoundErrors {
		if errors.Is(err, nf) || strings.HasSuffix(msg, nf.Error()) {
			return http.StatusNotFound, msg
		}
	}
	if errors.Is(err, structs.ErrJobRegistrationOff) || strings.HasSuffix(msg, structs.ErrJobRegistrationOff.Error()) {
		return http.StatusForbidden, msg
	}
	// A registration whose check-index no longer matches is the client's
	// stale view, not a server failure.
	if strings.Contains(msg, nomad.EnforceIndexErrPrefix) {
		return http.StatusBadRequest, msg
	}
	return http.StatusInternalServerError, msg
}
