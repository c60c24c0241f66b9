package rpcnet

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/opennomad/nomad/structs"
)

// codedPrefix starts an error text that carries an HTTP-style status
// across the network: "RPC Error:: 404,job not found".
const codedPrefix = "RPC Error:: "

// knownErrors are the structs errors callers test with errors.Is. A server
// sends only text, so the pool recognises them by it; their texts are
// fixed for this reason (see structs/rpc.go).
var knownErrors = []error{
	structs.ErrNoLeader,
	structs.ErrNotOutstanding,
	structs.ErrTokenMismatch,
	structs.ErrNackTimeoutReached,
	structs.ErrPlanQueueDisabled,
	structs.ErrBrokerDisabled,
	structs.ErrJobRegistrationOff,
	structs.ErrUnknownNode,
	structs.ErrUnknownJob,
	structs.ErrUnknownEval,
	structs.ErrUnknownAlloc,
	structs.ErrUnknownDeployment,
	structs.ErrUnknownMethod,
	structs.ErrSchedulerVersion,
}

// RemoteError is an error a server returned for a call. Its text is
// exactly the server's, so an error relayed again (a server forwarding a
// client's call) reads the same at every hop. Unwrap yields the structs
// error the text names, if any, so errors.Is(err, structs.ErrNoLeader)
// holds for a remote "No cluster leader" as it does in process.
type RemoteError struct {
	// Message is the server's text (after the status, for a coded one).
	Message string
	known   error
}

// Error returns the server's text.
func (e *RemoteError) Error() string { return e.Message }

// Unwrap returns the structs error the text names, or nil.
func (e *RemoteError) Unwrap() error { return e.known }

// DecodeError turns the text of a server's error back into an error. A
// coded text ("RPC Error:: <code>,<msg>") becomes a structs.CodedError
// with that code around a *RemoteError of msg; a text naming one of the
// structs errors (alone, or with context around it as "%s: %w" and
// "%w: %s" produce) unwraps to it. The error's text is the server's.
func DecodeError(text string) error {
	if rest, ok := strings.CutPrefix(text, codedPrefix); ok {
		codeStr, msg, found := strings.Cut(rest, ",")
		if code, err := strconv.Atoi(codeStr); found && err == nil && code > 0 {
			return structs.NewErrRPCCodedf(code, "%w", &RemoteError{Message: msg, known: namedError(msg)})
		}
	}
	return &RemoteError{Message: text, known: namedError(text)}
}

// namedError returns the known error whose text is a line of msg or a
// colon-separated part of one (errors.Join puts one error per line).
func namedError(msg string) error {
	for _, line := range strings.Split(msg, "\n") {
		for _, k := range knownErrors {
			t := k.Error()
			if line == t || strings.HasSuffix(line, ": "+t) || strings.HasPrefix(line, t+": ") ||
				strings.Contains(line, ": "+t+": ") {
				return k
			}
		}
	}
	return nil
}

// ErrConnection marks a call that failed for want of a working
// connection: the server could not be dialled, the connection broke, or
// no answer came before the deadline. Whether the server ran the call is
// unknown unless the request was never sent. Callers with other servers
// to try move on; errors.Is also finds the underlying network error.
var ErrConnection = errors.New("rpc connection failed")

// ErrNotSent marks a connection failure that happened before the
// request left (the dial failed, or the connection was found broken):
// the server cannot have run the call, so even a write may be retried.
var ErrNotSent = errors.New("request not sent")

// connError wraps a transport failure of a call to addr; sent reports
// whether the request may have reached the server.
func connError(addr, method string, err error, sent bool) error {
	if !sent {
		return fmt.Errorf("%w (%w): %s to %s: %w", ErrConnection, ErrNotSent, method, addr, err)
	}
	return fmt.Errorf("%w: %s to %s: %w", ErrConnection, method, addr, err)
}
