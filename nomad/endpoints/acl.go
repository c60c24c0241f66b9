package endpoints

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/go-memdb"

	"github.com/opennomad/nomad/acl"
	"github.com/opennomad/nomad/nomad/login"
	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// ACLBootstrapResetFile is the file, in the leader's server data
// directory, where an operator writes the reset index (decimal) to allow
// one more ACL bootstrap.
const ACLBootstrapResetFile = "acl-bootstrap-reset"

// ACL serves the ACL.* RPCs: the bootstrap and policies (this file),
// tokens, one-time tokens and the removal of expired ones
// (acl_tokens.go), roles (acl_roles.go), auth methods and binding rules
// (acl_auth_methods.go). While ACLs are off every method
// but WhoAmI answers structs.ErrACLDisabled.
//
// Who may call what: writes, token lists and token reads of other tokens
// are for management tokens; a client token reads itself, the policies
// and roles it holds; anyone reads the "anonymous" policy; Bootstrap and
// WhoAmI need no token. Because what a token may read here depends on
// the object asked for, these methods' rules (aclRules) are Self: they
// check through caller and requireManagement below, which look the
// request's token itself up in state, rather than through the registry's
// step that every other endpoint relies on.
type ACL struct {
	srv Server
	// pending holds the OIDC logins begun on this server (the leader)
	// and not yet completed (acl_login.go).
	pending *login.Pending
}

// aclRules: the ACL endpoints authorize their requests themselves, as
// what a token may read depends on the object asked for (its own token,
// the policies it holds); writes need a management token. Bootstrap and
// the exchange of a one-time token are open to anyone: they hand out a
// token only to whoever holds the secret that earns it.
var aclRules = Rules{
	"Bootstrap":          Public(),
	"UpsertPolicies":     Self("a management token"),
	"DeletePolicies":     Self("a management token"),
	"ListPolicies":       Self("a management token, or lists the caller's own policies"),
	"GetPolicy":          Self("a management token, a token holding the policy, or the anonymous policy"),
	"GetPolicies":        Self("a management token, or the caller's own policies"),
	"UpsertRoles":        Self("a management token"),
	"DeleteRoles":        Self("a management token"),
	"ListRoles":          Self("a management token, or lists the caller's own roles"),
	"GetRole":            Self("a management token, or a token linked to the role"),
	"GetRoleByName":      Self("a management token, or a token linked to the role"),
	"UpsertAuthMethods":  Self("a management token"),
	"DeleteAuthMethods":  Self("a management token"),
	"ListAuthMethods":    Self("any caller, ACLs on"),
	"GetAuthMethod":      Self("a management token"),
	"UpsertBindingRules": Self("a management token"),
	"DeleteBindingRules": Self("a management token"),
	"ListBindingRules":   Self("a management token"),
	"GetBindingRule":     Self("a management token"),
	// Introducing a node is a node write, as registering one is.
	"CreateClientIntroductionToken": NodeWrite(),
	"UpsertTokens":                  Self("a management token"),
	"DeleteTokens":                  Self("a management token"),
	"ListTokens":                    Self("a management token"),
	"GetToken":                      Self("a management token, or the token's own secret"),
	"ResolveToken":                  Self("the token's own secret"),
	"WhoAmI":                        Self("any token"),
	"UpsertOneTimeToken":            Self("a token stored in state"),
	"ExchangeOneTimeToken":          Public(),
	"ReapExpired":                   Internal(),
	// Logging in is how a caller without a token gets one: anyone may
	// try; what they earn is the auth method's binding rules' to say.
	"Login":            Public(),
	"OIDCAuthURL":      Public(),
	"OIDCCompleteAuth": Public(),
}

// enabled refuses calls while ACLs are off.
func (a *ACL) enabled() error {
	if !a.srv.Settings().ACLEnabled {
		return structs.ErrACLDisabled
	}
	return nil
}

// caller resolves the token a request carries: the anonymous token when
// it carries none; structs.ErrPermissionDenied for a secret no token has,
// structs.ErrACLTokenExpired for an expired token.
func (a *ACL) caller(store *state.StateStore, secret string) (*structs.ACLToken, error) {
	if secret == "" {
		return structs.AnonymousACLToken, nil
	}
	tok, err := store.ACLTokenBySecretID(nil, secret)
	if err != nil {
		return nil, err
	}
	if tok == nil {
		return nil, structs.ErrPermissionDenied
	}
	if tok.IsExpired(a.srv.Clock().Now()) {
		return nil, structs.ErrACLTokenExpired
	}
	return tok, nil
}

// requireManagement admits management tokens only; ACLs must be on.
func (a *ACL) requireManagement(secret string) error {
	if err := a.enabled(); err != nil {
		return err
	}
	tok, err := a.caller(a.srv.State(), secret)
	if err != nil {
		return err
	}
	if !tok.IsManagement() {
		return structs.ErrPermissionDenied
	}
	return nil
}

// validatePolicyRules checks a policy's rules with the policy parser, as
// strictly as a write requires.
func validatePolicyRules(rules string) error {
	_, err := acl.Parse(rules)
	return err
}

// tokenPolicies are the names of the policies a token holds, directly and
// through its roles.
func tokenPolicies(store *state.StateStore, ws memdb.WatchSet, tok *structs.ACLToken) ([]string, error) {
	names := slices.Clone(tok.Policies)
	for _, link := range tok.Roles {
		role, err := store.ACLRoleByID(ws, link.ID)
		if err != nil {
			return nil, err
		}
		if role != nil {
			names = append(names, role.PolicyNames()...)
		}
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

// withRoleNames returns a copy of tok whose role links carry each role's
// current name, without links to roles that no longer exist.
func withRoleNames(store *state.StateStore, ws memdb.WatchSet, tok *structs.ACLToken) (*structs.ACLToken, error) {
	if tok == nil {
		return nil, nil
	}
	out := tok.Copy()
	out.Roles = nil
	for _, link := range tok.Roles {
		role, err := store.ACLRoleByID(ws, link.ID)
		if err != nil {
			return nil, err
		}
		if role != nil {
			out.Roles = append(out.Roles, &structs.ACLTokenRoleLink{ID: role.ID, Name: role.Name})
		}
	}
	return out, nil
}

// ---- bootstrap

// Bootstrap makes the first management token. It succeeds once; after
// that only when the leader's reset file names the current reset index,
// which the new bootstrap then moves.
func (a *ACL) Bootstrap(args *structs.ACLTokenBootstrapRequest, reply *structs.ACLTokenUpsertResponse) error {
	a.toAuthoritative(&args.WriteRequest)
	if done, err := a.srv.Forward("ACL.Bootstrap", args, args, reply); done {
		return err
	}
	if err := a.enabled(); err != nil {
		return err
	}
	if args.BootstrapSecret != "" && !structs.IsUUID(args.BootstrapSecret) {
		return structs.KindErrorf(structs.ErrInvalid, "invalid acl token")
	}
	store := a.srv.State()
	current, err := store.ACLBootstrapIndex()
	if err != nil {
		return err
	}
	var resetIndex uint64
	if current != 0 {
		specified := a.resetFileIndex()
		if specified == 0 {
			return fmt.Errorf("%w (reset index: %d)", structs.ErrACLBootstrapDone, current)
		}
		if specified != current {
			return structs.KindErrorf(structs.ErrInvalid,
				"Invalid bootstrap reset index (specified %d, reset index: %d)", specified, current)
		}
		resetIndex = current
	}
	tok := &structs.ACLToken{Name: "Bootstrap Token", Type: structs.ACLManagementToken, Global: true,
		SecretID: args.BootstrapSecret}
	tok.Canonicalize(a.srv.Clock().Now())
	tok.SetHash()
	req := &structs.ACLTokenBootstrapRequest{Token: tok, ResetIndex: resetIndex, WriteRequest: args.WriteRequest}
	_, index, err := a.srv.RaftApply(structs.ACLTokenBootstrapRequestType, req)
	if err != nil {
		return err
	}
	stored, err := a.srv.State().ACLTokenByAccessorID(nil, tok.AccessorID)
	if err != nil {
		return err
	}
	if stored == nil {
		return fmt.Errorf("bootstrap token %s: %w", tok.AccessorID, structs.ErrACLTokenNotFound)
	}
	a.srv.Logger().Info("ACL bootstrap done", "accessor_id", stored.AccessorID, "reset_index", resetIndex)
	reply.Tokens = []*structs.ACLToken{stored.Copy()}
	reply.Index = index
	return nil
}

// resetFileIndex reads the reset index from the reset file; 0 when there
// is none or it does not hold a number.
func (a *ACL) resetFileIndex() uint64 {
	dir := a.srv.Settings().DataDir
	if dir == "" {
		return 0
	}
	path := filepath.Join(dir, ACLBootstrapResetFile)
	raw, err := os.ReadFile(path)
	if err != nil {
		if !os.IsNotExist(err) {
			a.srv.Logger().Error("reading the ACL bootstrap reset file", "path", path, "error", err)
		}
		return 0
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(raw)), 10, 64)
	if err != nil {
		a.srv.Logger().Error("the ACL bootstrap reset file must hold a reset index", "path", path)
		return 0
	}
	return n
}

// ---- policies

// UpsertPolicies creates or replaces policies; management only.
func (a *ACL) UpsertPolicies(args *structs.ACLPolicyUpsertRequest, reply *structs.GenericResponse) error {
	a.toAuthoritative(&args.WriteRequest)
	if done, err := a.srv.Forward("ACL.UpsertPolicies", args, args, reply); done {
		return err
	}
	if err := a.requireManagement(args.AuthToken); err != nil {
		return err
	}
	if len(args.Policies) == 0 {
		return structs.KindErrorf(structs.ErrInvalid, "must specify as least one policy")
	}
	policies := make([]*structs.ACLPolicy, 0, len(args.Policies))
	for i, p := range args.Policies {
		if p == nil {
			return structs.KindErrorf(structs.ErrInvalid, "policy %d invalid: missing policy", i)
		}
		p = p.Copy()
		err := p.Validate()
		if rulesErr := validatePolicyRules(p.Rules); rulesErr != nil {
			rulesErr = fmt.Errorf("failed to parse rules: %v", rulesErr)
			if err == nil {
				err = rulesErr
			} else {
				err = fmt.Errorf("%v; %v", err, rulesErr)
			}
		}
		if err != nil {
			return structs.KindErrorf(structs.ErrInvalid, "policy %d invalid: %v", i, err)
		}
		p.SetHash()
		policies = append(policies, p)
	}
	req := &structs.ACLPolicyUpsertRequest{Policies: policies, WriteRequest: args.WriteRequest}
	_, index, err := a.srv.RaftApply(structs.ACLPoliciesUpsertRequestType, req)
	if err != nil {
		return err
	}
	reply.Index = index
	return nil
}

// DeletePolicies removes policies by name; names that do not exist are
// no error. Management only.
func (a *ACL) DeletePolicies(args *structs.ACLPolicyDeleteRequest, reply *structs.GenericResponse) error {
	a.toAuthoritative(&args.WriteRequest)
	if done, err := a.srv.Forward("ACL.DeletePolicies", args, args, reply); done {
		return err
	}
	if err := a.requireManagement(args.AuthToken); err != nil {
		return err
	}
	if len(args.Names) == 0 {
		return structs.KindErrorf(structs.ErrInvalid, "must specify as least one policy")
	}
	req := &structs.ACLPolicyDeleteRequest{Names: args.Names, WriteRequest: args.WriteRequest}
	_, index, err := a.srv.RaftApply(structs.ACLPoliciesDeleteRequestType, req)
	if err != nil {
		return err
	}
	reply.Index = index
	return nil
}

// ListPolicies lists the policies whose names start with the prefix: all
// of them for a management token, those the caller's token holds (itself
// or through its roles) otherwise.
func (a *ACL) ListPolicies(args *structs.ACLPolicyListRequest, reply *structs.ACLPolicyListResponse) error {
	if done, err := a.srv.Forward("ACL.ListPolicies", args, args, reply); done {
		return err
	}
	if err := a.enabled(); err != nil {
		return err
	}
	return flooredBlockingQuery(a.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		tok, err := a.caller(store, args.AuthToken)
		if err != nil {
			return 0, err
		}
		var held []string
		if !tok.IsManagement() {
			if held, err = tokenPolicies(store, ws, tok); err != nil {
				return 0, err
			}
		}
		policies, err := store.ACLPolicies(ws, args.Prefix)
		if err != nil {
			return 0, err
		}
		reply.Policies = make([]*structs.ACLPolicyListStub, 0, len(policies))
		for _, p := range policies {
			if tok.IsManagement() || slices.Contains(held, p.Name) {
				reply.Policies = append(reply.Policies, p.Stub())
			}
		}
		return store.Index(state.TableACLPolicies)
	})
}

// GetPolicy reads one policy: for a management token, a token that holds
// it, or anyone when it is the anonymous policy. Policy is nil when it
// does not exist.
func (a *ACL) GetPolicy(args *structs.ACLPolicySpecificRequest, reply *structs.SingleACLPolicyResponse) error {
	if done, err := a.srv.Forward("ACL.GetPolicy", args, args, reply); done {
		return err
	}
	if err := a.enabled(); err != nil {
		return err
	}
	return flooredBlockingQuery(a.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		if err := a.mayReadPolicies(store, ws, args.AuthToken, []string{args.Name}); err != nil {
			return 0, err
		}
		p, err := store.ACLPolicyByName(ws, args.Name)
		if err != nil {
			return 0, err
		}
		reply.Policy = p.Copy()
		if p != nil {
			return p.ModifyIndex, nil
		}
		return store.Index(state.TableACLPolicies)
	})
}

// GetPolicies reads several policies, by the same rule as GetPolicy;
// names that do not exist are left out.
func (a *ACL) GetPolicies(args *structs.ACLPolicySetRequest, reply *structs.ACLPolicySetResponse) error {
	if done, err := a.srv.Forward("ACL.GetPolicies", args, args, reply); done {
		return err
	}
	if err := a.enabled(); err != nil {
		return err
	}
	return flooredBlockingQuery(a.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		if err := a.mayReadPolicies(store, ws, args.AuthToken, args.Names); err != nil {
			return 0, err
		}
		reply.Policies = make(map[string]*structs.ACLPolicy, len(args.Names))
		for _, name := range args.Names {
			p, err := store.ACLPolicyByName(ws, name)
			if err != nil {
				return 0, err
			}
			if p != nil {
				reply.Policies[name] = p.Copy()
			}
		}
		return store.Index(state.TableACLPolicies)
	})
}

// mayReadPolicies admits a management token, or a token holding every
// one of names; the anonymous policy anyone may read.
func (a *ACL) mayReadPolicies(store *state.StateStore, ws memdb.WatchSet, secret string, names []string) error {
	tok, err := a.caller(store, secret)
	if err != nil || tok.IsManagement() {
		return err
	}
	held, err := tokenPolicies(store, ws, tok)
	if err != nil {
		return err
	}
	for _, name := range names {
		if name != structs.AnonymousPolicyName && !slices.Contains(held, name) {
			return structs.ErrPermissionDenied
		}
	}
	return nil
}
