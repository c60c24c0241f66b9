package endpoints

import (
	"context"
	"time"

	"github.com/opennomad/nomad/nomad/login"
	"github.com/opennomad/nomad/structs"
)

// The login methods: a caller without a token trades a credential from an
// identity provider for one, through an auth method and its binding
// rules. They are open to anyone (a login is how a caller gets a token)
// and are writes, served by the leader: the token is created through
// Raft like any other, and the OIDC logins begun wait in the leader's
// memory (login.Pending) for their second step.

const (
	// loginTimeout bounds the calls a login makes to the provider
	// (discovery, keys, the token exchange, UserInfo).
	loginTimeout = 30 * time.Second
	// oidcLoginTTL is how long a user has between the start of an OIDC
	// login and its completion: time to log in at the provider.
	oidcLoginTTL = 6 * time.Minute
	// maxPendingOIDCLogins bounds the OIDC logins held at once, as
	// anyone may begin one.
	maxPendingOIDCLogins = 10000
)

// newPendingLogins is the ACL endpoint's store of OIDC logins begun.
func newPendingLogins() *login.Pending { return login.NewPending(oidcLoginTTL, maxPendingOIDCLogins) }

// Login logs in through a JWT auth method: the token is validated with
// the method's keys and bounds, its claims mapped, the method's binding
// rules evaluated, and a token created with what they bind.
func (a *ACL) Login(args *structs.ACLLoginRequest, reply *structs.ACLLoginResponse) error {
	if done, err := a.srv.Forward("ACL.Login", args, args, reply); done {
		return err
	}
	if err := a.enabled(); err != nil {
		return err
	}
	if err := args.Validate(); err != nil {
		return structs.KindErrorf(structs.ErrInvalid, "invalid login request: %v", err)
	}
	method, err := a.loginMethod(args.AuthMethodName, structs.ACLAuthMethodTypeJWT)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(a.srv.ShutdownContext(), loginTimeout)
	defer cancel()
	claims, err := login.ValidateJWT(ctx, args.LoginToken, method.Config, a.srv.Clock().Now())
	if err != nil {
		return structs.KindErrorf(structs.ErrUnauthenticated, "unable to validate provided token: %v", err)
	}
	tok, index, err := a.loginToken(method, claims, nil)
	if err != nil {
		return err
	}
	reply.ACLToken, reply.Index = tok, index
	return nil
}

// OIDCAuthURL begins a login through an OIDC auth method: it answers the
// provider's authorization URL and holds the login until
// OIDCCompleteAuth, or for oidcLoginTTL.
func (a *ACL) OIDCAuthURL(args *structs.ACLOIDCAuthURLRequest, reply *structs.ACLOIDCAuthURLResponse) error {
	if done, err := a.srv.Forward("ACL.OIDCAuthURL", args, args, reply); done {
		return err
	}
	if err := a.enabled(); err != nil {
		return err
	}
	if err := args.Validate(); err != nil {
		return structs.KindErrorf(structs.ErrInvalid, "invalid OIDC auth-url request: %v", err)
	}
	method, err := a.loginMethod(args.AuthMethodName, structs.ACLAuthMethodTypeOIDC)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(a.srv.ShutdownContext(), loginTimeout)
	defer cancel()
	url, req, err := login.StartOIDC(ctx, method, args.RedirectURI, args.ClientNonce, a.pending.TTL())
	if err != nil {
		return err
	}
	pending := &login.PendingLogin{Method: method.Name, ClientNonce: args.ClientNonce, RedirectURI: args.RedirectURI, Request: req}
	if err := a.pending.Put(pending, time.Now()); err != nil {
		return err
	}
	reply.AuthURL = url
	return nil
}

// OIDCCompleteAuth completes an OIDC login begun by OIDCAuthURL with the
// state and code the provider sent back: the caller must present the
// same method, nonce and redirect URI; the code is exchanged, the ID
// token verified, its claims (and UserInfo's) mapped and bound, and a
// token created. A login completes once.
func (a *ACL) OIDCCompleteAuth(args *structs.ACLOIDCCompleteAuthRequest, reply *structs.ACLLoginResponse) error {
	if done, err := a.srv.Forward("ACL.OIDCCompleteAuth", args, args, reply); done {
		return err
	}
	if err := a.enabled(); err != nil {
		return err
	}
	if err := args.Validate(); err != nil {
		return structs.KindErrorf(structs.ErrInvalid, "invalid OIDC complete-auth request: %v", err)
	}
	method, err := a.loginMethod(args.AuthMethodName, structs.ACLAuthMethodTypeOIDC)
	if err != nil {
		return err
	}
	// The wall clock, not the server's: cap times the request with it.
	pending := a.pending.Take(args.State, time.Now())
	if pending == nil || pending.Method != method.Name || pending.ClientNonce != args.ClientNonce ||
		pending.RedirectURI != args.RedirectURI {
		return structs.KindErrorf(structs.ErrInvalid,
			"no OIDC login in progress for this state, method and nonce: it expired, was completed, or began on a former leader")
	}
	ctx, cancel := context.WithTimeout(a.srv.ShutdownContext(), loginTimeout)
	defer cancel()
	idClaims, userClaims, err := login.CompleteOIDC(ctx, method, pending.Request, args.State, args.Code)
	if err != nil {
		return err
	}
	tok, index, err := a.loginToken(method, idClaims, userClaims)
	if err != nil {
		return err
	}
	reply.ACLToken, reply.Index = tok, index
	return nil
}

// loginMethod is the auth method of a login, which must be of type typ.
func (a *ACL) loginMethod(name, typ string) (*structs.ACLAuthMethod, error) {
	method, err := a.srv.State().ACLAuthMethodByName(nil, name)
	if err != nil {
		return nil, err
	}
	if method == nil {
		return nil, structs.KindErrorf(structs.ErrInvalid, "auth-method %q not found", name)
	}
	if method.Type != typ || method.Config == nil {
		return nil, structs.KindErrorf(structs.ErrInvalid, "unsupported auth-method type: %s", method.Type)
	}
	return method, nil
}

// loginToken maps a verified login's claims, binds them with the method's
// rules, and creates the token they earn: management, or a client token
// with the bound policies and roles, named by the method's format,
// living for its MaxTokenTTL, global when its tokens are. A login that
// binds nothing is refused, with Nomad's text.
func (a *ACL) loginToken(method *structs.ACLAuthMethod, claims, userClaims map[string]interface{}) (*structs.ACLToken, uint64, error) {
	set, err := login.MapClaims(method.Config, claims, userClaims)
	if err != nil {
		return nil, 0, structs.KindErrorf(structs.ErrInvalid, "mapping claims: %v", err)
	}
	store := a.srv.State()
	bound, err := login.Bind(store, method, set)
	if err != nil {
		return nil, 0, err
	}
	if bound.None() {
		return nil, 0, structs.KindErrorf(structs.ErrInvalid, "no role or policy bindings matched")
	}
	name, err := login.TokenName(method.TokenNameFormat, method.Type, method.Name, set)
	if err != nil {
		return nil, 0, structs.KindErrorf(structs.ErrInvalid, "%v", err)
	}
	tok := &structs.ACLToken{Name: name, Type: structs.ACLClientToken, Policies: bound.Policies, Roles: bound.Roles,
		Global: method.TokenLocality == structs.ACLAuthMethodTokenLocalityGlobal, ExpirationTTL: method.MaxTokenTTL}
	if bound.Management {
		tok.Type, tok.Policies, tok.Roles = structs.ACLManagementToken, nil, nil
	}
	tok.Canonicalize(a.srv.Clock().Now())
	minTTL, maxTTL := a.tokenTTLBounds()
	if err := tok.Validate(minTTL, maxTTL, nil); err != nil {
		return nil, 0, structs.KindErrorf(structs.ErrInvalid, "token invalid: %v", err)
	}
	tok.SetHash()
	_, index, err := a.srv.RaftApply(structs.ACLTokensUpsertRequestType,
		&structs.ACLTokenUpsertRequest{Tokens: []*structs.ACLToken{tok}})
	if err != nil {
		return nil, 0, err
	}
	store = a.srv.State()
	stored, err := store.ACLTokenByAccessorID(nil, tok.AccessorID)
	if err != nil {
		return nil, 0, err
	}
	out, err := withRoleNames(store, nil, stored)
	return out, index, err
}
