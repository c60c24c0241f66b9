package client

import (
	"fmt"

	"github.com/opennomad/nomad/structs"
)

// Kinds of refusal of the client's file, log and alloc operations: the
// structs error kinds, so the HTTP agent answers them as it does the
// servers' (404, 400 and 403, structs.HTTPStatus). Test with errors.Is;
// the error's text is the message alone.
var (
	ErrNotFound  = structs.ErrNotFound
	ErrInvalid   = structs.ErrInvalid
	ErrForbidden = structs.ErrPermissionDenied
)

// opError is a refused operation of one kind.
type opError struct {
	kind error
	msg  string
	// cause, when set, is what the error also matches.
	cause error
}

func (e *opError) Error() string        { return e.msg }
func (e *opError) Is(target error) bool { return target == e.kind }
func (e *opError) Unwrap() error        { return e.cause }

func notFound(format string, args ...interface{}) error {
	return &opError{kind: ErrNotFound, msg: fmt.Sprintf(format, args...)}
}

func invalid(format string, args ...interface{}) error {
	return &opError{kind: ErrInvalid, msg: fmt.Sprintf(format, args...)}
}

func forbidden(format string, args ...interface{}) error {
	return &opError{kind: ErrForbidden, msg: fmt.Sprintf(format, args...)}
}

// unknownAlloc is the error for an allocation this client does not run;
// it also matches structs.ErrUnknownAlloc.
func unknownAlloc(id string) error {
	return &opError{kind: ErrNotFound, msg: fmt.Sprintf("alloc %q: %v on this client", id, structs.ErrUnknownAlloc),
		cause: structs.ErrUnknownAlloc}
}
