package coresched

import (
	"errors"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

// The ACL expiry collection asks the server to reap, on its own and in a
// forced collection; ACLs being off is nothing to collect, any other
// failure is reported.
func TestCoreScheduler_ACLExpiredGC(t *testing.T) {
	cases := []struct {
		name    string
		kind    string
		answer  error
		wantErr bool
	}{
		{"reaps", structs.CoreJobACLExpiredGC, nil, false},
		{"acls off", structs.CoreJobACLExpiredGC, structs.ErrACLDisabled, false},
		{"acls off after a network hop", structs.CoreJobACLExpiredGC,
			errors.New("RPC Error:: 400,ACL support disabled"), false},
		{"failure", structs.CoreJobACLExpiredGC, structs.ErrNoLeader, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var methods []string
			c := &CoreScheduler{rpc: func(method string, args, reply interface{}) error {
				methods = append(methods, method)
				return tc.answer
			}}
			err := c.Process(&structs.Evaluation{JobID: tc.kind + ":1"})
			must.Eq(t, tc.wantErr, err != nil, must.Sprintf("err %v", err))
			must.Eq(t, []string{"ACL.ReapExpired"}, methods)
		})
	}
}
