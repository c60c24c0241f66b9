package structs

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// rpcCodedPrefix starts the text of an error that carries the HTTP
// status it answers with: "RPC Error:: 404,job not found". Errors cross
// the network as text only; the prefix is how the status survives, and
// Nomad's agents recognise the same form.
const rpcCodedPrefix = "RPC Error:: "

// CodedError is an error that knows the HTTP status it answers with.
// Endpoints return one for errors that are the caller's fault (400 bad
// input, 403 refused, 404 unknown object, 409 conflict); the HTTP agent
// answers with Code. Its Error text has the "RPC Error:: <code>,<msg>"
// form, so a caller on the other side of a network hop can recover both
// with ErrorCode.
type CodedError interface {
	error
	Code() int
}

// RPCCodedError is the CodedError endpoints build. It wraps the error it
// describes, so errors.Is and errors.As still find a sentinel or a
// *ValidationError inside it.
type RPCCodedError struct {
	code int
	err  error
}

// NewErrRPCCoded returns an error with an HTTP status and a message.
func NewErrRPCCoded(code int, msg string) error {
	return &RPCCodedError{code: code, err: errors.New(msg)}
}

// NewErrRPCCodedf is NewErrRPCCoded with a format; %w wraps as in
// fmt.Errorf.
func NewErrRPCCodedf(code int, format string, args ...interface{}) error {
	return &RPCCodedError{code: code, err: fmt.Errorf(format, args...)}
}

// WithCode gives err an HTTP status. An error that already carries one
// keeps it; nil stays nil.
func WithCode(code int, err error) error {
	if err == nil {
		return nil
	}
	var c CodedError
	if errors.As(err, &c) {
		return err
	}
	return &RPCCodedError{code: code, err: err}
}

// Error is "RPC Error:: <code>,<message>".
func (e *RPCCodedError) Error() string {
	return rpcCodedPrefix + strconv.Itoa(e.code) + "," + e.err.Error()
}

// Code is the HTTP status.
func (e *RPCCodedError) Code() int { return e.code }

// Unwrap returns the error described.
func (e *RPCCodedError) Unwrap() error { return e.err }

// ErrorCode returns the HTTP status an error carries and its message
// without the "RPC Error:: <code>," marker; ok is false for an error
// that carries none. It finds the status in a CodedError anywhere in the
// chain, or in the text of an error that crossed the network, wrapped or
// not (RecoverError): "looking up job: RPC Error:: 404,job not found"
// gives 404 and "looking up job: job not found".
func ErrorCode(err error) (code int, msg string, ok bool) {
	if err == nil {
		return 0, "", false
	}
	var c CodedError
	if errors.As(err, &c) {
		marker := rpcCodedPrefix + strconv.Itoa(c.Code()) + ","
		return c.Code(), strings.Replace(err.Error(), marker, "", 1), true
	}
	if _, code, msg = RecoverError(err.Error()); code == 0 {
		return 0, "", false
	}
	return code, msg, true
}

// ClassifyError codes an error of a kind that has an HTTP status
// (HTTPStatus): invalid requests, including validation failures, and
// requests for a region there is no path to 400 (the caller named the
// region; the servers are fine), conflicts 400, unknown objects 404,
// refusals such as disabled registration 403. Others, and errors already
// coded, are returned unchanged. The RPC layer applies it to every
// endpoint's error, so endpoints return kinds and never choose a status.
func ClassifyError(err error) error {
	if err == nil {
		return nil
	}
	var c CodedError
	if errors.As(err, &c) {
		return err
	}
	for _, k := range kinds {
		if errors.Is(err, k) {
			if code := HTTPStatus(k); code != 0 {
				return WithCode(code, err)
			}
		}
	}
	return err
}
