package structs

import (
	"errors"
	"fmt"
	"testing"

	"github.com/shoenig/test/must"
)

func TestRPCCodedError_TextAndUnwrap(t *testing.T) {
	err := NewErrRPCCodedf(404, "job %q: %w", "web", ErrUnknownJob)
	must.EqError(t, err, `RPC Error:: 404,job "web": job not found`)
	must.ErrorIs(t, err, ErrUnknownJob)
	var c CodedError
	must.True(t, errors.As(err, &c))
	must.Eq(t, 404, c.Code())
}

func TestErrorCode(t *testing.T) {
	cases := []struct {
		name     string
		err      error
		wantCode int
		wantMsg  string
		wantOK   bool
	}{
		{"nil", nil, 0, "", false},
		{"plain", errors.New("boom"), 0, "", false},
		{"coded", NewErrRPCCoded(400, "bad"), 400, "bad", true},
		{"wrapped coded", fmt.Errorf("looking up: %w", NewErrRPCCoded(404, "job not found")),
			404, "looking up: job not found", true},
		{"text from the network", errors.New("RPC Error:: 403,Job registration off"), 403, "Job registration off", true},
		{"wrapped text", errors.New("ctx: RPC Error:: 409,conflict"), 409, "ctx: conflict", true},
		{"text with a bad code", errors.New("RPC Error:: abc,oops"), 0, "", false},
		{"text with a code out of range", errors.New("RPC Error:: 200,fine"), 0, "", false},
		{"text without a comma", errors.New("RPC Error:: 404"), 0, "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, msg, ok := ErrorCode(tc.err)
			must.Eq(t, tc.wantOK, ok)
			must.Eq(t, tc.wantCode, code)
			must.Eq(t, tc.wantMsg, msg)
		})
	}
}

func TestClassifyError(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want int // 0: left uncoded
	}{
		{"validation", &ValidationError{Problems: []string{"a", "b"}}, 400},
		{"wrapped validation", fmt.Errorf("job: %w", &ValidationError{Problems: []string{"a"}}), 400},
		{"unknown job", fmt.Errorf("job %q: %w", "x", ErrUnknownJob), 404},
		{"unknown node", ErrUnknownNode, 404},
		{"unknown eval", ErrUnknownEval, 404},
		{"unknown alloc", ErrUnknownAlloc, 404},
		{"unknown deployment", ErrUnknownDeployment, 404},
		{"registration off", ErrJobRegistrationOff, 403},
		{"no path to region", fmt.Errorf("%w %q", ErrNoRegionPath, "nowhere"), 400},
		{"already coded keeps its code", NewErrRPCCoded(409, "conflict"), 409},
		{"no leader stays a server error", ErrNoLeader, 0},
		{"anything else", errors.New("disk on fire"), 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := ClassifyError(tc.err)
			must.ErrorIs(t, got, tc.err)
			code, _, ok := ErrorCode(got)
			must.Eq(t, tc.want != 0, ok)
			must.Eq(t, tc.want, code)
		})
	}
	must.NoError(t, ClassifyError(nil))
}
