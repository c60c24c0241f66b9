package nomad

import (
	"reflect"

	"github.com/opennomad/nomad/acl"
	"github.com/opennomad/nomad/nomad/endpoints"
	"github.com/opennomad/nomad/structs"
)

// authorize is the one authorization step of every RPC: the method's rule
// (declared beside its endpoint) checked against the caller's token for
// the namespace the request targets, before the method runs. A refusal
// is structs.ErrPermissionDenied and says nothing about why, so that it
// gives nothing away about tokens or objects.
func (s *Server) authorize(rule endpoints.Rule, argv reflect.Value) error {
	if !rule.ChecksToken() {
		return nil
	}
	info, ok := rpcAuthInfo(argv)
	if !ok {
		// The registry refuses such a method at start; never reached.
		return structs.ErrPermissionDenied
	}
	aclObj, err := s.ResolveACL(info.RequestToken())
	if err != nil {
		return err
	}
	if !rule.Allows(aclObj, info.RequestNamespace()) {
		return structs.ErrPermissionDenied
	}
	return nil
}

// rpcInfo is the routing an RPC argument carries (its region, whether it
// is a read), if its type carries it (a value argument through its
// address).
func rpcInfo(argv reflect.Value) (structs.RPCInfo, bool) {
	info, ok := argv.Interface().(structs.RPCInfo)
	if !ok && argv.CanAddr() {
		info, ok = argv.Addr().Interface().(structs.RPCInfo)
	}
	return info, ok
}

// rpcAuthInfo is the token and namespace an RPC argument carries, if its
// type carries them (a value argument through its address).
func rpcAuthInfo(argv reflect.Value) (structs.AuthInfo, bool) {
	info, ok := argv.Interface().(structs.AuthInfo)
	if !ok && argv.CanAddr() {
		info, ok = argv.Addr().Interface().(structs.AuthInfo)
	}
	return info, ok
}

// ResolveACL returns what the token with secretID may do: everything
// (acl.ACLsDisabled) while ACLs are off, otherwise what its policies grant
// (package auth, cached), structs.ErrPermissionDenied for a secret no
// token has and structs.ErrACLTokenExpired for an expired one. The agent
// uses it for the routes it answers itself.
func (s *Server) ResolveACL(secretID string) (*acl.ACL, error) {
	if !s.config.ACLEnabled {
		return acl.ACLsDisabled, nil
	}
	return s.tokens.Resolve(s.State(), secretID)
}
