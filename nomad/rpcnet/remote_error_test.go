package rpcnet

import (
	"errors"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

func TestDecodeError(t *testing.T) {
	cases := []struct {
		text  string
		code  int
		msg   string
		known error
	}{
		{text: "No cluster leader", msg: "No cluster leader", known: structs.ErrNoLeader},
		{text: "Job.Register: No cluster leader", msg: "Job.Register: No cluster leader", known: structs.ErrNoLeader},
		{text: "No cluster leader: JobRegister: leadership lost", msg: "No cluster leader: JobRegister: leadership lost", known: structs.ErrNoLeader},
		{text: "plan queue is disabled", msg: "plan queue is disabled", known: structs.ErrPlanQueueDisabled},
		{text: `job "web": job not found`, msg: `job "web": job not found`, known: structs.ErrUnknownJob},
		{text: "RPC Error:: 404,eval not found", code: 404, msg: "eval not found", known: structs.ErrUnknownEval},
		{text: "RPC Error:: 400,job \"x\": count must be >= 0", code: 400, msg: "job \"x\": count must be >= 0", known: structs.ErrInvalid},
		{text: "RPC Error:: abc,not a code", msg: "RPC Error:: abc,not a code"},
		{text: "no cluster leaders here", msg: "no cluster leaders here"},
		{text: "node not found somewhere", msg: "node not found somewhere"},
		{text: "several problems\nNo cluster leader", msg: "several problems\nNo cluster leader", known: structs.ErrNoLeader},
	}
	for _, tc := range cases {
		t.Run(tc.text, func(t *testing.T) {
			err := DecodeError(tc.text)
			var remote *RemoteError
			must.True(t, errors.As(err, &remote))
			must.Eq(t, tc.msg, remote.Message)
			must.Eq(t, tc.text, err.Error(), must.Sprint("the text survives the round trip"))
			var coded structs.CodedError
			if tc.code != 0 {
				must.True(t, errors.As(err, &coded))
				must.Eq(t, tc.code, coded.Code())
			} else {
				must.False(t, errors.As(err, &coded))
			}
			if tc.known != nil {
				must.ErrorIs(t, err, tc.known)
			} else {
				must.Nil(t, errors.Unwrap(remote))
			}
		})
	}
}
