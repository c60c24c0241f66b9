package endpoints

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/go-memdb"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// The ACL token methods: tokens, one-time tokens and the removal of
// expired ones.

// UpsertTokens creates or updates tokens; management only. A token
// without AccessorID is created: the server picks its IDs (SecretID may
// be given), its creation time and, from ExpirationTTL, its expiration.
// An update keeps the secret, the creation time and the expiration. A
// client token with an AccessorID no token has is uploaded as given when
// both IDs are UUIDs. Role links by name or ID are stored by ID.
func (a *ACL) UpsertTokens(args *structs.ACLTokenUpsertRequest, reply *structs.ACLTokenUpsertResponse) error {
	if err := a.routeTokenUpsert(args); err != nil {
		return err
	}
	if done, err := a.srv.Forward("ACL.UpsertTokens", args, args, reply); done {
		return err
	}
	if err := a.requireManagement(args.AuthToken); err != nil {
		return err
	}
	if len(args.Tokens) == 0 {
		return structs.KindErrorf(structs.ErrInvalid, "must specify as least one token")
	}
	minTTL, maxTTL := a.tokenTTLBounds()
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
	if err := a.routeTokenDelete(args); err != nil {
		return err
	}
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
	return flooredBlockingQuery(a.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
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
	return flooredBlockingQuery(a.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
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
	return flooredBlockingQuery(a.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
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
