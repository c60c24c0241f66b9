package rpcnet

import (
	"errors"
	"fmt"

	"github.com/opennomad/nomad/structs"
)

// RemoteError is an error a server returned for a call. Its text is
// exactly the server's, so an error relayed again (a server forwarding a
// client's call) reads the same at every hop. Unwrap yields the kind
// structs.RecoverError finds in the text, if any, so
// errors.Is(err, structs.ErrNoLeader) holds for a remote "No cluster
// leader" as it does in process.
type RemoteError struct {
	// Message is the server's text (after the status, for a coded one).
	Message string
	known   error
}

// Error returns the server's text.
func (e *RemoteError) Error() string { return e.Message }

// Unwrap returns the kind the text names, or nil.
func (e *RemoteError) Unwrap() error { return e.known }

// DecodeError turns the text of a server's error back into an error, its
// kind recovered by structs.RecoverError. A coded text ("RPC Error::
// <code>,<msg>") becomes a structs.CodedError with that code around a
// *RemoteError of msg. The error's text is the server's.
func DecodeError(text string) error {
	kind, code, msg := structs.RecoverError(text)
	if code != 0 {
		coded := structs.NewErrRPCCodedf(code, "%w", &RemoteError{Message: msg, known: kind})
		// Only a marker that leads the text is the server's own coding;
		// one in the middle is context a hop added, and the text must
		// read the same.
		if coded.Error() == text {
			return coded
		}
	}
	return &RemoteError{Message: text, known: kind}
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
