package structs

import "errors"

// The login requests: a caller trades a credential from an identity
// provider for a Nomad token, through an auth method. A JWT method takes
// the provider's token as it is (ACL.Login); an OIDC method first sends
// the user to the provider (ACL.OIDCAuthURL) and then trades the code the
// provider hands back (ACL.OIDCCompleteAuth). Logins are writes: they
// create a token.

// ACLLoginRequest logs in through a JWT auth method with LoginToken.
type ACLLoginRequest struct {
	AuthMethodName string
	LoginToken     string
	WriteRequest
}

// Validate names the fields a login needs.
func (r *ACLLoginRequest) Validate() error {
	var errs []error
	if r.AuthMethodName == "" {
		errs = append(errs, errors.New("missing auth method name"))
	}
	if r.LoginToken == "" {
		errs = append(errs, errors.New("missing login token"))
	}
	return joinProblems(errs)
}

// ACLLoginResponse is the token a login created.
type ACLLoginResponse struct {
	ACLToken *ACLToken
	WriteMeta
}

// ACLOIDCAuthURLRequest starts an OIDC login: the provider will send the
// user back to RedirectURI. ClientNonce is the caller's secret, which it
// presents again to complete the login.
type ACLOIDCAuthURLRequest struct {
	AuthMethodName string
	RedirectURI    string
	ClientNonce    string
	WriteRequest
}

// Validate names the fields the start of an OIDC login needs.
func (r *ACLOIDCAuthURLRequest) Validate() error {
	var errs []error
	if r.AuthMethodName == "" {
		errs = append(errs, errors.New("missing auth method name"))
	}
	if r.RedirectURI == "" {
		errs = append(errs, errors.New("missing redirect URI"))
	}
	if r.ClientNonce == "" {
		errs = append(errs, errors.New("missing client nonce"))
	}
	return joinProblems(errs)
}

// ACLOIDCAuthURLResponse is the provider's URL the user goes to.
type ACLOIDCAuthURLResponse struct {
	AuthURL string
	WriteMeta
}

// ACLOIDCCompleteAuthRequest completes an OIDC login with what the
// provider sent to the redirect URI (State, Code) and the caller's nonce.
type ACLOIDCCompleteAuthRequest struct {
	AuthMethodName string
	ClientNonce    string
	State          string
	Code           string
	RedirectURI    string
	WriteRequest
}

// Validate names the fields the completion of an OIDC login needs.
func (r *ACLOIDCCompleteAuthRequest) Validate() error {
	var errs []error
	if r.AuthMethodName == "" {
		errs = append(errs, errors.New("missing auth method name"))
	}
	if r.ClientNonce == "" {
		errs = append(errs, errors.New("missing client nonce"))
	}
	if r.State == "" {
		errs = append(errs, errors.New("missing state"))
	}
	if r.Code == "" {
		errs = append(errs, errors.New("missing code"))
	}
	if r.RedirectURI == "" {
		errs = append(errs, errors.New("missing redirect URI"))
	}
	return joinProblems(errs)
}

// ACLAuthClaims are a login's claims as binding rule selectors read them:
// value.<name> for each claim mapping, list.<name> for each list claim
// mapping (selector "engineering in list.groups").
type ACLAuthClaims struct {
	Value map[string]string   `bexpr:"value"`
	List  map[string][]string `bexpr:"list"`
}
