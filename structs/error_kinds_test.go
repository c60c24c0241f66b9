package structs

import (
	"fmt"
	"net/http"
	"net/rpc"
	"testing"

	"github.com/shoenig/test/must"
)

// TestErrorKinds walks every kind: in process it is found with errors.Is
// through %w wrapping; after a network hop, where only its text travels
// (net/rpc's rpc.ServerError, perhaps coded "RPC Error:: <code>,", perhaps
// wrapped again by a caller), RecoverError gives it back; and it answers
// with its HTTP status.
func TestErrorKinds(t *testing.T) {
	cases := []struct {
		kind error
		// status is the HTTP status; 0 means none (the agent answers 500).
		status int
		// remote is the kind recovered after the hop, when not kind itself:
		// a general kind's words are not recognised, its status is.
		remote error
	}{
		{kind: ErrNoLeader},
		{kind: ErrNoRegionPath, status: http.StatusBadRequest},
		{kind: ErrBrokerDisabled},
		{kind: ErrPlanQueueDisabled},
		{kind: ErrSchedulerVersion},
		{kind: ErrNotOutstanding},
		{kind: ErrTokenMismatch},
		{kind: ErrNackTimeoutReached},
		{kind: ErrUnknownMethod},
		{kind: ErrBackpressure, status: http.StatusTooManyRequests},
		{kind: ErrMemoryPressure, status: http.StatusTooManyRequests},
		{kind: ErrJobRegistrationOff, status: http.StatusForbidden},
		{kind: ErrUnknownNode, status: http.StatusNotFound},
		{kind: ErrUnknownJob, status: http.StatusNotFound},
		{kind: ErrUnknownEval, status: http.StatusNotFound},
		{kind: ErrUnknownAlloc, status: http.StatusNotFound},
		{kind: ErrUnknownDeployment, status: http.StatusNotFound},
		{kind: ErrJobModifyIndex, status: http.StatusBadRequest},
		{kind: ErrRootKeyNotFound, status: http.StatusNotFound},
		{kind: ErrRootKeyActive, status: http.StatusBadRequest},
		{kind: ErrACLDisabled, status: http.StatusBadRequest},
		{kind: ErrACLTokenNotFound, status: http.StatusForbidden},
		{kind: ErrACLTokenExpired, status: http.StatusForbidden},
		{kind: ErrACLPolicyNotFound, status: http.StatusNotFound},
		{kind: ErrACLRoleNotFound, status: http.StatusNotFound},
		{kind: ErrACLAuthMethodNotFound, status: http.StatusNotFound},
		{kind: ErrACLBindingRuleNotFound, status: http.StatusNotFound},
		{kind: ErrACLBootstrapDone, status: http.StatusBadRequest},
		{kind: ErrNamespaceNotFound, status: http.StatusNotFound},
		{kind: ErrNodePoolNotFound, status: http.StatusNotFound},
		{kind: ErrJobSourceNotFound, status: http.StatusNotFound},
		{kind: ErrPermissionDenied, status: http.StatusForbidden},
		{kind: ErrNotFound, status: http.StatusNotFound},
		{kind: ErrInvalid, status: http.StatusBadRequest},
		// A conflict answers 400 like an invalid request, and reads as
		// one after the hop.
		{kind: ErrConflict, status: http.StatusBadRequest, remote: ErrInvalid},
		{kind: ErrUnauthenticated, status: http.StatusUnauthorized},
	}
	covered := map[error]bool{}
	for _, tc := range cases {
		covered[tc.kind] = true
		t.Run(tc.kind.Error(), func(t *testing.T) {
			remote := tc.remote
			if remote == nil {
				remote = tc.kind
			}

			// In process, wrapped with %w, or carrying a kind on other text.
			inProcess := fmt.Errorf("job %q: %w", "web", tc.kind)
			must.ErrorIs(t, inProcess, tc.kind)
			must.Eq(t, tc.kind, KindOf(inProcess))
			must.True(t, IsKind(inProcess, tc.kind))
			must.Eq(t, tc.kind, KindOf(KindErrorf(tc.kind, "job %q: refused", "web")))
			must.Eq(t, tc.status, HTTPStatus(tc.kind))
			must.Eq(t, tc.status, HTTPStatus(KindOf(inProcess)))

			// The server codes the error (the RPC layer's ClassifyError)
			// and sends its text.
			sent := ClassifyError(inProcess)
			code, msg, ok := ErrorCode(sent)
			must.Eq(t, tc.status != 0, ok)
			must.Eq(t, tc.status, code)
			if ok {
				must.Eq(t, fmt.Sprintf("RPC Error:: %d,%s", tc.status, inProcess), sent.Error())
				must.Eq(t, inProcess.Error(), msg)
			} else {
				must.Eq(t, inProcess.Error(), sent.Error())
			}

			// A status of 0 travels as 500: it carries no kind, the words do.
			wireCode := tc.status
			if wireCode == 0 {
				wireCode = http.StatusInternalServerError
			}
			texts := map[string]error{
				"as sent":               rpc.ServerError(sent.Error()),
				"wrapped with %w":       fmt.Errorf("calling Job.Register: %w", rpc.ServerError(sent.Error())),
				"wrapped with %v":       fmt.Errorf("calling Job.Register: %v", rpc.ServerError(sent.Error())),
				"coded, wrapped again":  fmt.Errorf("forwarding: %w", rpc.ServerError(fmt.Sprintf("RPC Error:: %d,%s", wireCode, inProcess))),
				"several lines, joined": rpc.ServerError("2 problems:\nsomething else\n" + sent.Error()),
			}
			// The sentinel's own words, with no status, name the kinds
			// recognised by text; a general kind's words alone name none.
			if tc.kind == ErrNotFound || tc.kind == ErrInvalid || tc.kind == ErrConflict || tc.kind == ErrUnauthenticated {
				must.Nil(t, KindOf(rpc.ServerError(tc.kind.Error())))
			} else {
				texts["plain text"] = rpc.ServerError(tc.kind.Error())
			}
			for name, err := range texts {
				must.Eq(t, remote, KindOf(err), must.Sprint(name))
				must.True(t, IsKind(err, remote), must.Sprint(name))
				must.Eq(t, tc.status, HTTPStatus(KindOf(err)), must.Sprint(name))
			}
			if tc.status != 0 {
				wrapped := fmt.Errorf("calling Job.Register: %w", rpc.ServerError(sent.Error()))
				code, msg, ok := ErrorCode(wrapped)
				must.True(t, ok)
				must.Eq(t, tc.status, code)
				must.Eq(t, "calling Job.Register: "+inProcess.Error(), msg)
			}
		})
	}
	for _, k := range kinds {
		must.True(t, covered[k], must.Sprintf("kind %q has no case", k))
	}
}

// TestRecoverError_OnlyWholeWords: a sentinel's words inside a longer
// phrase are not its kind, and a malformed marker is no status.
func TestRecoverError_OnlyWholeWords(t *testing.T) {
	for _, text := range []string{
		"node not found somewhere",
		"no cluster leaders here",
		"RPC Error:: abc,not a code",
		"RPC Error:: 200,fine",
		"Permission denied for now",
	} {
		kind, code, msg := RecoverError(text)
		must.Nil(t, kind, must.Sprint(text))
		must.Eq(t, 0, code, must.Sprint(text))
		must.Eq(t, text, msg, must.Sprint(text))
	}
}

// TestRecoverError_MessageOpeners: a kind whose text opens a message is
// recognised with its details after it, and only there.
func TestRecoverError_MessageOpeners(t *testing.T) {
	cases := []struct {
		text string
		want error
	}{
		{"Enforcing job modify index 5: job exists with conflicting job modify index: 7", ErrJobModifyIndex},
		{"RPC Error:: 400,Enforcing job modify index 0: job already exists", ErrJobModifyIndex},
		{"registering: Enforcing job modify index 3: job does not exist", ErrJobModifyIndex},
		{"not Enforcing job modify index 3", nil},
		{"Enforcing job modify indexes", nil},
	}
	for _, tc := range cases {
		kind, _, _ := RecoverError(tc.text)
		must.Eq(t, tc.want, kind, must.Sprint(tc.text))
	}
}

// TestValidationErrorIsInvalid: a validation failure is of kind
// ErrInvalid, and so answers 400.
func TestValidationErrorIsInvalid(t *testing.T) {
	err := fmt.Errorf("job %q: %w", "web", &ValidationError{Problems: []string{"count must be >= 0"}})
	must.ErrorIs(t, err, ErrInvalid)
	must.Eq(t, http.StatusBadRequest, HTTPStatus(KindOf(err)))
	code, msg, ok := ErrorCode(ClassifyError(err))
	must.True(t, ok)
	must.Eq(t, http.StatusBadRequest, code)
	must.Eq(t, `job "web": count must be >= 0`, msg)
}
