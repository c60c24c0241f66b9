package agent

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/acl"
	"github.com/opennomad/nomad/structs"
)

// fakeACLServer answers the ACL RPCs a client-only agent makes, and
// counts them.
type fakeACLServer struct {
	mu       sync.Mutex
	tokens   map[string]*structs.ACLToken
	policies map[string]string
	calls    map[string]int
}

func (f *fakeACLServer) RPC(method string, args, reply interface{}) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[method]++
	switch method {
	case "ACL.ResolveToken":
		a := args.(*structs.ResolveACLTokenRequest)
		if a.AuthToken != a.SecretID {
			return errors.New("the agent must ask with the token itself")
		}
		reply.(*structs.ResolveACLTokenResponse).Token = f.tokens[a.SecretID]
	case "ACL.GetPolicies":
		out := map[string]*structs.ACLPolicy{}
		for _, n := range args.(*structs.ACLPolicySetRequest).Names {
			if rules, ok := f.policies[n]; ok {
				out[n] = &structs.ACLPolicy{Name: n, Rules: rules}
			}
		}
		reply.(*structs.ACLPolicySetResponse).Policies = out
	default:
		return errors.New("unexpected " + method)
	}
	return nil
}

func (f *fakeACLServer) count(method string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[method]
}

// TestRemoteACLs_CacheAndExpiry: tokens and policies are fetched once per
// lifetime; unknown and expired tokens are refused; the anonymous token
// holds the anonymous policy.
func TestRemoteACLs_CacheAndExpiry(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	expired := now.Add(-time.Minute)
	srv := &fakeACLServer{
		tokens: map[string]*structs.ACLToken{
			"reader": {SecretID: "reader", Type: structs.ACLClientToken, Policies: []string{"agent-read", "missing"}},
			"mgmt":   {SecretID: "mgmt", Type: structs.ACLManagementToken},
			"old":    {SecretID: "old", Type: structs.ACLClientToken, Policies: []string{"agent-read"}, ExpirationTime: &expired},
		},
		policies: map[string]string{"agent-read": `agent { policy = "read" }`, "anonymous": `node { policy = "read" }`},
		calls:    map[string]int{},
	}
	cfg := DefaultConfig()
	cfg.ACL.TokenTTL = time.Minute
	cfg.ACL.PolicyTTL = 2 * time.Minute
	r := newRemoteACLs(srv, cfg)
	r.now = func() time.Time { return now }

	for i := 0; i < 3; i++ {
		a, err := r.resolve("reader")
		must.NoError(t, err)
		must.True(t, a.AllowAgentRead())
		must.False(t, a.AllowNodeRead())
	}
	must.Eq(t, 1, srv.count("ACL.ResolveToken"))
	must.Eq(t, 1, srv.count("ACL.GetPolicies"))

	a, err := r.resolve("mgmt")
	must.NoError(t, err)
	must.Eq(t, acl.ManagementACL, a)

	a, err = r.resolve("")
	must.NoError(t, err)
	must.True(t, a.AllowNodeRead())
	must.False(t, a.AllowAgentRead())

	_, err = r.resolve("nope")
	must.ErrorIs(t, err, structs.ErrPermissionDenied)
	_, err = r.resolve("old")
	must.ErrorIs(t, err, structs.ErrACLTokenExpired)

	// Past the token lifetime the token is fetched again; the policy,
	// still fresh, is not.
	now = now.Add(90 * time.Second)
	before, tokensBefore := srv.count("ACL.GetPolicies"), srv.count("ACL.ResolveToken")
	_, err = r.resolve("reader")
	must.NoError(t, err)
	must.Eq(t, tokensBefore+1, srv.count("ACL.ResolveToken"))
	must.Eq(t, before, srv.count("ACL.GetPolicies"))
	now = now.Add(time.Minute)
	_, err = r.resolve("reader")
	must.NoError(t, err)
	must.Eq(t, before+1, srv.count("ACL.GetPolicies"))
}
