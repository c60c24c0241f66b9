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
	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// ACLBootstrapResetFile is the file, in the leader's server data
// directory, where an operator writes the reset index (decimal) to allow
// one more ACL bootstrap.
const ACLBootstrapResetFile = "acl-bootstrap-reset"

// ACL serves the ACL.* RPCs: policies, tokens, roles and the bootstrap.
// While ACLs are off every method but WhoAmI answers
// structs.ErrACLDisabled.
//
// Who may call what: writes, token lists and token reads of other tokens
// are for management tokens; a client token reads itself, the policies
// and roles it holds; anyone reads the "anonymous" policy; Bootstrap and
// WhoAmI need no token. These checks go through caller and
// requireManagement below, which look the request's token up in state;
// the server's shared authorization step, when it exists, replaces those
// two helpers and nothing else here.
type ACL struct {
	srv Server
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
	return blockingQuery(a.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
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
	return blockingQuery(a.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
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
	return blockingQuery(a.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
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

// ---- tokens

// UpsertTokens creates or updates tokens; management only. A token
// without AccessorID is created: the server picks its IDs (SecretID may
// be given), its creation time and, from ExpirationTTL, its expiration.
// An update keeps the secret, the creation time and the expiration. A
// client token with an AccessorID no token has is uploaded as given when
// both IDs are UUIDs. Role links by name or ID are stored by ID.
func (a *ACL) UpsertTokens(args *structs.ACLTokenUpsertRequest, reply *structs.ACLTokenUpsertResponse) error {
	if done, err := a.srv.Forward("ACL.UpsertTokens", args, args, reply); done {
		return err
	}
	if err := a.requireManagement(args.AuthToken); err != nil {
		return err
	}
	if len(args.Tokens) == 0 {
		return structs.KindErrorf(structs.ErrInvalid, "must specify as least one token")
	}
	settings := a.srv.Settings()
	minTTL, maxTTL := settings.ACLTokenMinExpirationTTL, settings.ACLTokenMaxExpirationTTL
	if minTTL <= 0 {
		minTTL = structs.DefaultACLTokenMinExpirationTTL
	}
	if maxTTL <= 0 {
		maxTTL = structs.DefaultACLTokenMaxExpirationTTL
	}
	store := a.srv.State()
	now := a.srv.Clock().Now()
	tokens := make([]*structs.ACLToken, 0, len(args.Tokens))
	for i, in := range args.Tokens {
		if in == nil {
			return structs.KindErrorf(structs.ErrInvalid, "token %d invalid: missing token", i)
		}
		tok := in.Copy()
		var existing *structs.ACLToken
		if tok.AccessorID != "" {
			var err error
			if existing, err = store.ACLTokenByAccessorID(nil, tok.AccessorID); err != nil {
				return err
			}
			switch {
			case existing != nil:
				tok.SecretID = existing.SecretID
				tok.CreateTime = existing.CreateTime
			case structs.IsUUID(tok.AccessorID) && structs.IsUUID(tok.SecretID) && tok.Type != structs.ACLManagementToken:
				// An upload: created with the IDs given.
				tok.CreateTime = now.UTC()
				tok.ExpirationTime = nil
				if tok.ExpirationTTL != 0 {
					e := tok.CreateTime.Add(tok.ExpirationTTL)
					tok.ExpirationTime = &e
				}
			default:
				return structs.KindErrorf(structs.ErrInvalid, "cannot find token %s", tok.AccessorID)
			}
		} else {
			if tok.SecretID != "" && !structs.IsUUID(tok.SecretID) {
				return structs.KindErrorf(structs.ErrInvalid, "token %d invalid: SecretID must be a UUID", i)
			}
			tok.Canonicalize(now)
		}
		if err := tok.Validate(minTTL, maxTTL, existing); err != nil {
			return structs.KindErrorf(structs.ErrInvalid, "token %d invalid: %v", i, err)
		}
		roles, err := resolveRoleLinks(store, tok.Roles)
		if err != nil {
			return err
		}
		tok.Roles = roles
		tok.Hash = nil
		tok.SetHash()
		tokens = append(tokens, tok)
	}
	req := &structs.ACLTokenUpsertRequest{Tokens: tokens, WriteRequest: args.WriteRequest}
	_, index, err := a.srv.RaftApply(structs.ACLTokensUpsertRequestType, req)
	if err != nil {
		return err
	}
	store = a.srv.State()
	reply.Tokens = make([]*structs.ACLToken, 0, len(tokens))
	for _, t := range tokens {
		stored, err := store.ACLTokenByAccessorID(nil, t.AccessorID)
		if err != nil {
			return err
		}
		if stored == nil {
			return fmt.Errorf("token %s: %w", t.AccessorID, structs.ErrACLTokenNotFound)
		}
		out, err := withRoleNames(store, nil, stored)
		if err != nil {
			return err
		}
		reply.Tokens = append(reply.Tokens, out)
	}
	reply.Index = index
	return nil
}

// resolveRoleLinks turns role links by ID or name into links by ID,
// without repeats; a role that does not exist is an error.
func resolveRoleLinks(store *state.StateStore, links []*structs.ACLTokenRoleLink) ([]*structs.ACLTokenRoleLink, error) {
	var out []*structs.ACLTokenRoleLink
	for _, link := range links {
		if link == nil {
			continue
		}
		var role *structs.ACLRole
		var err error
		if link.ID != "" {
			role, err = store.ACLRoleByID(nil, link.ID)
		} else {
			role, err = store.ACLRoleByName(nil, link.Name)
		}
		if err != nil {
			return nil, err
		}
		if role == nil {
			name := link.ID
			if name == "" {
				name = link.Name
			}
			return nil, structs.KindErrorf(structs.ErrInvalid, "cannot find role %s", name)
		}
		if !slices.ContainsFunc(out, func(l *structs.ACLTokenRoleLink) bool { return l.ID == role.ID }) {
			out = append(out, &structs.ACLTokenRoleLink{ID: role.ID})
		}
	}
	return out, nil
}

// DeleteTokens removes tokens by AccessorID; management only. Naming a
// token that does not exist refuses the whole request.
func (a *ACL) DeleteTokens(args *structs.ACLTokenDeleteRequest, reply *structs.GenericResponse) error {
	if done, err := a.srv.Forward("ACL.DeleteTokens", args, args, reply); done {
		return err
	}
	if err := a.requireManagement(args.AuthToken); err != nil {
		return err
	}
	if len(args.AccessorIDs) == 0 {
		return structs.KindErrorf(structs.ErrInvalid, "must specify as least one token")
	}
	var missing []string
	for _, id := range args.AccessorIDs {
		tok, err := a.srv.State().ACLTokenByAccessorID(nil, id)
		if err != nil {
			return err
		}
		if tok == nil {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		return structs.KindErrorf(structs.ErrInvalid, "Cannot delete nonexistent tokens: %s", strings.Join(missing, ", "))
	}
	req := &structs.ACLTokenDeleteRequest{AccessorIDs: args.AccessorIDs, WriteRequest: args.WriteRequest}
	_, index, err := a.srv.RaftApply(structs.ACLTokensDeleteRequestType, req)
	if err != nil {
		return err
	}
	reply.Index = index
	return nil
}

// ListTokens lists tokens, without their secrets, oldest first;
// management only. Prefix filters AccessorIDs.
func (a *ACL) ListTokens(args *structs.ACLTokenListRequest, reply *structs.ACLTokenListResponse) error {
	if done, err := a.srv.Forward("ACL.ListTokens", args, args, reply); done {
		return err
	}
	if err := a.requireManagement(args.AuthToken); err != nil {
		return err
	}
	return blockingQuery(a.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		tokens, err := store.ACLTokens(ws, args.Prefix)
		if err != nil {
			return 0, err
		}
		reply.Tokens = make([]*structs.ACLTokenListStub, 0, len(tokens))
		for _, t := range tokens {
			if args.GlobalOnly && !t.Global {
				continue
			}
			named, err := withRoleNames(store, ws, t)
			if err != nil {
				return 0, err
			}
			reply.Tokens = append(reply.Tokens, named.Stub())
		}
		return store.Index(state.TableACLTokens)
	})
}

// GetToken reads one token by AccessorID, secret included: for a
// management token or the token itself. Token is nil when it does not
// exist.
func (a *ACL) GetToken(args *structs.ACLTokenSpecificRequest, reply *structs.SingleACLTokenResponse) error {
	if done, err := a.srv.Forward("ACL.GetToken", args, args, reply); done {
		return err
	}
	if err := a.enabled(); err != nil {
		return err
	}
	return blockingQuery(a.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		caller, err := a.caller(store, args.AuthToken)
		if err != nil {
			return 0, err
		}
		if !caller.IsManagement() && caller.AccessorID != args.AccessorID {
			return 0, structs.ErrPermissionDenied
		}
		tok, err := store.ACLTokenByAccessorID(ws, args.AccessorID)
		if err != nil {
			return 0, err
		}
		if reply.Token, err = withRoleNames(store, ws, tok); err != nil {
			return 0, err
		}
		if tok != nil {
			return tok.ModifyIndex, nil
		}
		return store.Index(state.TableACLTokens)
	})
}

// ResolveToken returns the token a secret belongs to, nil when none does:
// the lookup the authorization of a request starts with.
func (a *ACL) ResolveToken(args *structs.ResolveACLTokenRequest, reply *structs.ResolveACLTokenResponse) error {
	if done, err := a.srv.Forward("ACL.ResolveToken", args, args, reply); done {
		return err
	}
	if err := a.enabled(); err != nil {
		return err
	}
	return blockingQuery(a.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		tok, err := store.ACLTokenBySecretID(ws, args.SecretID)
		if err != nil {
			return 0, err
		}
		if reply.Token, err = withRoleNames(store, ws, tok); err != nil {
			return 0, err
		}
		return store.Index(state.TableACLTokens)
	})
}

// WhoAmI returns the token the request carries, secret included: the
// anonymous token without one, and while ACLs are off the token that
// says so.
func (a *ACL) WhoAmI(args *structs.ACLWhoAmIRequest, reply *structs.SingleACLTokenResponse) error {
	if done, err := a.srv.Forward("ACL.WhoAmI", args, args, reply); done {
		return err
	}
	if !a.srv.Settings().ACLEnabled {
		reply.Token = structs.ACLsDisabledToken.Copy()
		a.srv.SetQueryMeta(&reply.QueryMeta)
		return nil
	}
	store := a.srv.State()
	tok, err := a.caller(store, args.AuthToken)
	if err != nil {
		return err
	}
	if reply.Token, err = withRoleNames(store, nil, tok); err != nil {
		return err
	}
	reply.Index = tok.ModifyIndex
	if reply.Index == 0 {
		if reply.Index, err = store.Index(state.TableACLTokens); err != nil {
			return err
		}
	}
	a.srv.SetQueryMeta(&reply.QueryMeta)
	return nil
}

// ---- roles

// UpsertRoles creates or updates roles; management only. A role without
// ID is created with a new one; one with an ID must exist.
func (a *ACL) UpsertRoles(args *structs.ACLRolesUpsertRequest, reply *structs.ACLRolesUpsertResponse) error {
	if done, err := a.srv.Forward("ACL.UpsertRoles", args, args, reply); done {
		return err
	}
	if err := a.requireManagement(args.AuthToken); err != nil {
		return err
	}
	if len(args.Roles) == 0 {
		return structs.KindErrorf(structs.ErrInvalid, "must specify at least one role")
	}
	store := a.srv.State()
	roles := make([]*structs.ACLRole, 0, len(args.Roles))
	for i, in := range args.Roles {
		if in == nil {
			return structs.KindErrorf(structs.ErrInvalid, "role %d invalid: missing role", i)
		}
		r := in.Copy()
		if r.ID != "" {
			existing, err := store.ACLRoleByID(nil, r.ID)
			if err != nil {
				return err
			}
			if existing == nil {
				return structs.KindErrorf(structs.ErrInvalid, "cannot find role %s", r.ID)
			}
		}
		r.Canonicalize()
		if err := r.Validate(); err != nil {
			return structs.KindErrorf(structs.ErrInvalid, "role %d invalid: %v", i, err)
		}
		named, err := store.ACLRoleByName(nil, r.Name)
		if err != nil {
			return err
		}
		if named != nil && named.ID != r.ID {
			return structs.KindErrorf(structs.ErrInvalid, "role with name %s already exists", r.Name)
		}
		for _, link := range r.Policies {
			p, err := store.ACLPolicyByName(nil, link.Name)
			if err != nil {
				return err
			}
			if p == nil {
				return structs.KindErrorf(structs.ErrInvalid, "cannot find policy %s", link.Name)
			}
		}
		r.Hash = nil
		r.SetHash()
		roles = append(roles, r)
	}
	req := &structs.ACLRolesUpsertRequest{Roles: roles, WriteRequest: args.WriteRequest}
	_, index, err := a.srv.RaftApply(structs.ACLRolesUpsertRequestType, req)
	if err != nil {
		return err
	}
	store = a.srv.State()
	reply.Roles = make([]*structs.ACLRole, 0, len(roles))
	for _, r := range roles {
		stored, err := store.ACLRoleByID(nil, r.ID)
		if err != nil {
			return err
		}
		if stored == nil {
			return fmt.Errorf("%w: %s", structs.ErrACLRoleNotFound, r.ID)
		}
		reply.Roles = append(reply.Roles, stored.Copy())
	}
	reply.Index = index
	return nil
}

// DeleteRoles removes roles by ID; management only. A role that does not
// exist refuses the whole request.
func (a *ACL) DeleteRoles(args *structs.ACLRolesDeleteByIDRequest, reply *structs.GenericResponse) error {
	if done, err := a.srv.Forward("ACL.DeleteRoles", args, args, reply); done {
		return err
	}
	if err := a.requireManagement(args.AuthToken); err != nil {
		return err
	}
	if len(args.ACLRoleIDs) == 0 {
		return structs.KindErrorf(structs.ErrInvalid, "must specify at least one role")
	}
	for _, id := range args.ACLRoleIDs {
		r, err := a.srv.State().ACLRoleByID(nil, id)
		if err != nil {
			return err
		}
		if r == nil {
			return fmt.Errorf("%w: %s", structs.ErrACLRoleNotFound, id)
		}
	}
	req := &structs.ACLRolesDeleteByIDRequest{ACLRoleIDs: args.ACLRoleIDs, WriteRequest: args.WriteRequest}
	_, index, err := a.srv.RaftApply(structs.ACLRolesDeleteRequestType, req)
	if err != nil {
		return err
	}
	reply.Index = index
	return nil
}

// ListRoles lists the roles whose IDs start with the prefix: all of them
// for a management token, those the caller's token links to otherwise.
func (a *ACL) ListRoles(args *structs.ACLRolesListRequest, reply *structs.ACLRolesListResponse) error {
	if done, err := a.srv.Forward("ACL.ListRoles", args, args, reply); done {
		return err
	}
	if err := a.enabled(); err != nil {
		return err
	}
	return blockingQuery(a.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		tok, err := a.caller(store, args.AuthToken)
		if err != nil {
			return 0, err
		}
		roles, err := store.ACLRoles(ws, args.Prefix)
		if err != nil {
			return 0, err
		}
		reply.ACLRoles = make([]*structs.ACLRoleListStub, 0, len(roles))
		for _, r := range roles {
			if tok.IsManagement() || tok.HasRole(r.ID) {
				reply.ACLRoles = append(reply.ACLRoles, r.Stub())
			}
		}
		return store.Index(state.TableACLRoles)
	})
}

// GetRole reads one role by ID: for a management token or a token linked
// to it. ACLRole is nil when it does not exist.
func (a *ACL) GetRole(args *structs.ACLRoleByIDRequest, reply *structs.ACLRoleByIDResponse) error {
	if done, err := a.srv.Forward("ACL.GetRole", args, args, reply); done {
		return err
	}
	return a.getRole(&args.QueryOptions, reply, func(ws memdb.WatchSet, store *state.StateStore) (*structs.ACLRole, error) {
		return store.ACLRoleByID(ws, args.RoleID)
	})
}

// GetRoleByName reads one role by name, by the same rule as GetRole.
func (a *ACL) GetRoleByName(args *structs.ACLRoleByNameRequest, reply *structs.ACLRoleByIDResponse) error {
	if done, err := a.srv.Forward("ACL.GetRoleByName", args, args, reply); done {
		return err
	}
	return a.getRole(&args.QueryOptions, reply, func(ws memdb.WatchSet, store *state.StateStore) (*structs.ACLRole, error) {
		return store.ACLRoleByName(ws, args.RoleName)
	})
}

func (a *ACL) getRole(opts *structs.QueryOptions, reply *structs.ACLRoleByIDResponse,
	lookup func(memdb.WatchSet, *state.StateStore) (*structs.ACLRole, error)) error {
	if err := a.enabled(); err != nil {
		return err
	}
	return blockingQuery(a.srv, opts, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		tok, err := a.caller(store, opts.AuthToken)
		if err != nil {
			return 0, err
		}
		r, err := lookup(ws, store)
		if err != nil {
			return 0, err
		}
		if !tok.IsManagement() && (r == nil || !tok.HasRole(r.ID)) {
			return 0, structs.ErrPermissionDenied
		}
		reply.ACLRole = r.Copy()
		if r != nil {
			return r.ModifyIndex, nil
		}
		return store.Index(state.TableACLRoles)
	})
}

// ---- one-time tokens

// UpsertOneTimeToken makes a one-time token for the request's own token,
// exchangeable once within structs.OneTimeTokenTTL. The anonymous caller
// has no token to hand on.
func (a *ACL) UpsertOneTimeToken(args *structs.OneTimeTokenUpsertRequest, reply *structs.OneTimeTokenUpsertResponse) error {
	if done, err := a.srv.Forward("ACL.UpsertOneTimeToken", args, args, reply); done {
		return err
	}
	if err := a.enabled(); err != nil {
		return err
	}
	tok, err := a.caller(a.srv.State(), args.AuthToken)
	if err != nil {
		return err
	}
	if tok == structs.AnonymousACLToken {
		return structs.ErrPermissionDenied
	}
	ott := &structs.OneTimeToken{
		OneTimeSecretID: structs.GenerateUUID(),
		AccessorID:      tok.AccessorID,
		ExpiresAt:       a.srv.Clock().Now().UTC().Add(structs.OneTimeTokenTTL),
	}
	req := &structs.OneTimeTokenUpsertRequest{OneTimeToken: ott, WriteRequest: args.WriteRequest}
	_, index, err := a.srv.RaftApply(structs.OneTimeTokenUpsertRequestType, req)
	if err != nil {
		return err
	}
	stored, err := a.srv.State().OneTimeTokenBySecret(nil, ott.OneTimeSecretID)
	if err != nil {
		return err
	}
	if stored == nil {
		return fmt.Errorf("one-time token for %s: %w", ott.AccessorID, structs.ErrACLTokenNotFound)
	}
	reply.OneTimeToken = stored.Copy()
	reply.Index = index
	return nil
}

// ExchangeOneTimeToken gives the ACL token a one-time token was made
// for, secret included, and removes the one-time token. An unknown or
// expired one-time token, or one whose ACL token is gone, is refused;
// no token is needed to call it.
func (a *ACL) ExchangeOneTimeToken(args *structs.OneTimeTokenExchangeRequest, reply *structs.OneTimeTokenExchangeResponse) error {
	if done, err := a.srv.Forward("ACL.ExchangeOneTimeToken", args, args, reply); done {
		return err
	}
	if err := a.enabled(); err != nil {
		return err
	}
	store := a.srv.State()
	ott, err := store.OneTimeTokenBySecret(nil, args.OneTimeSecretID)
	if err != nil {
		return err
	}
	if ott == nil || ott.ExpiresAt.Before(a.srv.Clock().Now()) {
		return structs.ErrPermissionDenied
	}
	tok, err := store.ACLTokenByAccessorID(nil, ott.AccessorID)
	if err != nil {
		return err
	}
	if tok == nil || tok.IsExpired(a.srv.Clock().Now()) {
		return structs.ErrPermissionDenied
	}
	req := &structs.OneTimeTokenDeleteRequest{OneTimeSecretIDs: []string{ott.OneTimeSecretID}, WriteRequest: args.WriteRequest}
	_, index, err := a.srv.RaftApply(structs.OneTimeTokenDeleteRequestType, req)
	if structs.IsKind(err, structs.ErrNotFound) {
		// Another exchange of the same token came first.
		return structs.ErrPermissionDenied
	}
	if err != nil {
		return err
	}
	if reply.Token, err = withRoleNames(a.srv.State(), nil, tok); err != nil {
		return err
	}
	reply.Index = index
	return nil
}

// ReapExpired removes every ACL token and one-time token that has expired
// on the leader's clock, in batches. It needs no token: it only removes
// what can no longer be used, and decides that itself. The garbage
// collector calls it.
func (a *ACL) ReapExpired(args *structs.ACLReapExpiredRequest, reply *structs.GenericResponse) error {
	if done, err := a.srv.Forward("ACL.ReapExpired", args, args, reply); done {
		return err
	}
	if err := a.enabled(); err != nil {
		return err
	}
	store := a.srv.State()
	now := a.srv.Clock().Now()
	tokens, err := store.ACLTokens(nil, "")
	if err != nil {
		return err
	}
	var expired []string
	for _, t := range tokens {
		if t.IsExpired(now) {
			expired = append(expired, t.AccessorID)
		}
	}
	otts, err := store.OneTimeTokens(nil)
	if err != nil {
		return err
	}
	var used []string
	for _, o := range otts {
		if o.ExpiresAt.Before(now) {
			used = append(used, o.OneTimeSecretID)
		}
	}
	const batch = 1000
	for len(used) > 0 {
		n := min(batch, len(used))
		req := &structs.OneTimeTokenDeleteRequest{OneTimeSecretIDs: used[:n], WriteRequest: args.WriteRequest}
		used = used[n:]
		if _, reply.Index, err = a.srv.RaftApply(structs.OneTimeTokenDeleteRequestType, req); err != nil {
			return fmt.Errorf("removing expired one-time tokens: %w", err)
		}
	}
	for len(expired) > 0 {
		n := min(batch, len(expired))
		req := &structs.ACLTokenDeleteRequest{AccessorIDs: expired[:n], WriteRequest: args.WriteRequest}
		expired = expired[n:]
		if _, reply.Index, err = a.srv.RaftApply(structs.ACLTokensDeleteRequestType, req); err != nil {
			return fmt.Errorf("removing expired ACL tokens: %w", err)
		}
	}
	return nil
}
