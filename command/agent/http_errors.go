package agent

import (
	"errors"
	"net/http"

	"github.com/opennomad/nomad/jobspec"
	"github.com/opennomad/nomad/structs"
)

// CodedError is an error with the HTTP status it answers with, made by
// the agent itself (bad query parameters, an endpoint a client agent does
// not serve).
type CodedError struct {
	Code int
	Msg  string
}

func (e *CodedError) Error() string { return e.Msg }

// codedError is a shorthand for handlers.
func codedError(code int, msg string) error { return &CodedError{Code: code, Msg: msg} }

// errorStatus maps an error to its HTTP status and plain-text body.
//
//   - *CodedError: its code.
//   - *jobspec.LimitError, a job file over one of the parser's limits:
//     413 for its size, 400 for its nesting or evaluation.
//   - an error carrying a status (structs.ErrorCode: a server's coded
//     error, in process or as "RPC Error:: <code>,<message>" text after a
//     network hop): that status and the message without the marker. The
//     status follows from the error's kind (structs.HTTPStatus): invalid
//     requests, validation failures and conflicts such as failed
//     check-index writes 400, unknown objects 404, permission denied
//     (disabled registration among them) 403, too many evaluations
//     waiting (backpressure) 429, with Retry-After set by wrap; errors of
//     those kinds that arrive uncoded (structs.ClassifyError) get the
//     same. A validation
//     error is answered with every problem (Nomad answers 500 here; a
//     client error is a 400).
//   - anything else, including "No cluster leader": 500.
func errorStatus(err error) (int, string) {
	var coded *CodedError
	if errors.As(err, &coded) {
		return coded.Code, coded.Msg
	}
	var limit *jobspec.LimitError
	if errors.As(err, &limit) {
		if limit.Kind == jobspec.LimitSize {
			return http.StatusRequestEntityTooLarge, limit.Error()
		}
		return http.StatusBadRequest, limit.Error()
	}
	// In process an RPCer may hand back the server's sentinel errors
	// themselves; classify them as the server's RPC layer does.
	if code, msg, ok := structs.ErrorCode(structs.ClassifyError(err)); ok {
		return code, msg
	}
	if structs.IsValidationError(err) {
		return http.StatusBadRequest, err.Error()
	}
	return http.StatusInternalServerError, err.Error()
}
