package agent

import (
	"sync"
	"time"

	"github.com/opennomad/nomad/acl"
	"github.com/opennomad/nomad/structs"
)

// remoteACLs resolves tokens for a client-only agent through its servers
// (ACL.ResolveToken, ACL.GetRole, ACL.GetPolicies), keeping tokens for
// acl.token_ttl and compiled policies for acl.policy_ttl (roles follow
// the token's lifetime). A change on the servers is therefore seen here
// within those lifetimes, as on Nomad's client agents.
type remoteACLs struct {
	rpc       RPCer
	region    string
	tokenTTL  time.Duration
	policyTTL time.Duration
	now       func() time.Time

	mu       sync.Mutex
	tokens   map[string]cachedToken
	policies map[string]cachedPolicy
}

type cachedToken struct {
	management bool
	policies   []string
	expires    *time.Time // the token's own expiry
	fetched    time.Time
}

type cachedPolicy struct {
	policy  *acl.Policy // nil: no such policy, or unparsable
	fetched time.Time
}

// remoteCacheMax bounds each cache; past it, the cache starts over.
const remoteCacheMax = 4096

func newRemoteACLs(rpc RPCer, cfg *Config) *remoteACLs {
	r := &remoteACLs{rpc: rpc, region: cfg.Region, tokenTTL: cfg.ACL.TokenTTL, policyTTL: cfg.ACL.PolicyTTL,
		now: time.Now, tokens: map[string]cachedToken{}, policies: map[string]cachedPolicy{}}
	if r.tokenTTL <= 0 {
		r.tokenTTL = 30 * time.Second
	}
	if r.policyTTL <= 0 {
		r.policyTTL = 30 * time.Second
	}
	return r
}

// resolve returns what the token with secret may do: the anonymous
// policy for "", structs.ErrPermissionDenied for a secret no token has,
// structs.ErrACLTokenExpired for an expired token.
func (r *remoteACLs) resolve(secret string) (*acl.ACL, error) {
	tok, err := r.token(secret)
	if err != nil {
		return nil, err
	}
	if tok.expires != nil && !r.now().Before(*tok.expires) {
		return nil, structs.ErrACLTokenExpired
	}
	if tok.management {
		return acl.ManagementACL, nil
	}
	policies, err := r.policySet(secret, tok.policies)
	if err != nil {
		return nil, err
	}
	return acl.NewACL(false, policies)
}

// token is the cached token of secret, fetched when missing or stale.
func (r *remoteACLs) token(secret string) (cachedToken, error) {
	now := r.now()
	r.mu.Lock()
	tok, ok := r.tokens[secret]
	r.mu.Unlock()
	if ok && now.Sub(tok.fetched) < r.tokenTTL {
		return tok, nil
	}
	tok = cachedToken{fetched: now, policies: []string{structs.AnonymousPolicyName}}
	if secret != "" {
		var reply structs.ResolveACLTokenResponse
		args := structs.ResolveACLTokenRequest{SecretID: secret,
			QueryOptions: structs.QueryOptions{Region: r.region, AuthToken: secret, AllowStale: true}}
		if err := r.rpc.RPC("ACL.ResolveToken", &args, &reply); err != nil {
			return cachedToken{}, err
		}
		if reply.Token == nil {
			return cachedToken{}, structs.ErrPermissionDenied
		}
		t := reply.Token
		tok.management = t.IsManagement()
		tok.expires = t.ExpirationTime
		tok.policies = append([]string(nil), t.Policies...)
		for _, link := range t.Roles {
			var role structs.ACLRoleByIDResponse
			args := structs.ACLRoleByIDRequest{RoleID: link.ID,
				QueryOptions: structs.QueryOptions{Region: r.region, AuthToken: secret, AllowStale: true}}
			if err := r.rpc.RPC("ACL.GetRole", &args, &role); err != nil {
				return cachedToken{}, err
			}
			if role.ACLRole != nil {
				for _, p := range role.ACLRole.Policies {
					tok.policies = append(tok.policies, p.Name)
				}
			}
		}
	}
	r.mu.Lock()
	if len(r.tokens) >= remoteCacheMax {
		r.tokens = map[string]cachedToken{}
	}
	r.tokens[secret] = tok
	r.mu.Unlock()
	return tok, nil
}

// policySet returns the parsed policies of names, fetching (with the
// caller's token, which may read its own policies) those missing or
// stale. Policies that do not exist grant nothing.
func (r *remoteACLs) policySet(secret string, names []string) ([]*acl.Policy, error) {
	now := r.now()
	var missing []string
	out := make([]*acl.Policy, 0, len(names))
	r.mu.Lock()
	for _, name := range names {
		p, ok := r.policies[name]
		if !ok || now.Sub(p.fetched) >= r.policyTTL {
			missing = append(missing, name)
			continue
		}
		out = append(out, p.policy)
	}
	r.mu.Unlock()
	if len(missing) == 0 {
		return out, nil
	}
	var reply structs.ACLPolicySetResponse
	args := structs.ACLPolicySetRequest{Names: missing,
		QueryOptions: structs.QueryOptions{Region: r.region, AuthToken: secret, AllowStale: true}}
	if err := r.rpc.RPC("ACL.GetPolicies", &args, &reply); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.policies) >= remoteCacheMax {
		r.policies = map[string]cachedPolicy{}
	}
	for _, name := range missing {
		var parsed *acl.Policy
		if p := reply.Policies[name]; p != nil {
			// Stored rules were checked when written; one that no
			// longer parses grants nothing.
			parsed, _ = acl.Parse(p.Rules)
		}
		r.policies[name] = cachedPolicy{policy: parsed, fetched: now}
		out = append(out, parsed)
	}
	return out, nil
}
