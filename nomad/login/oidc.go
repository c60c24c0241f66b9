package login

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	capoidc "github.com/hashicorp/cap/oidc"

	"github.com/opennomad/nomad/structs"
)

// An OIDC login has two steps. StartOIDC makes the provider's
// authorization URL the user visits; the provider then sends the user's
// browser to the redirect URI with a state and a code, and CompleteOIDC
// trades the code for the provider's ID token. What ties the two steps
// together (the state, the nonce, the PKCE verifier) is kept between them
// in Pending.

// newProvider reads the provider's discovery document. The caller calls
// Done on the provider it gets.
func newProvider(cfg *structs.ACLAuthMethodConfig) (*capoidc.Provider, error) {
	if cfg.OIDCClientAssertion != nil {
		return nil, structs.KindErrorf(structs.ErrInvalid, "Config.OIDCClientAssertion is not supported by this server")
	}
	algs := make([]capoidc.Alg, 0, len(cfg.SigningAlgs))
	for _, a := range cfg.SigningAlgs {
		algs = append(algs, capoidc.Alg(a))
	}
	var opts []capoidc.Option
	if len(cfg.DiscoveryCaPem) > 0 {
		opts = append(opts, capoidc.WithProviderCA(strings.Join(cfg.DiscoveryCaPem, "\n")))
	}
	pc, err := capoidc.NewConfig(cfg.OIDCDiscoveryURL, cfg.OIDCClientID, capoidc.ClientSecret(cfg.OIDCClientSecret),
		algs, cfg.AllowedRedirectURIs, opts...)
	if err != nil {
		return nil, fmt.Errorf("OIDC provider config: %w", err)
	}
	p, err := capoidc.NewProvider(pc)
	if err != nil {
		return nil, fmt.Errorf("OIDC provider %s: %w", cfg.OIDCDiscoveryURL, err)
	}
	return p, nil
}

// StartOIDC begins a login through an OIDC method: it returns the
// provider's authorization URL and the request to keep until the login
// completes. The redirect URI must be one of the method's
// AllowedRedirectURIs (structs.ErrInvalid otherwise); the caller's nonce
// becomes the ID token's nonce; the method's scopes are asked for; and
// with OIDCEnablePKCE the request carries an S256 code challenge whose
// verifier only the request holds. ttl bounds how long the user has to
// log in at the provider.
func StartOIDC(ctx context.Context, method *structs.ACLAuthMethod, redirectURI, clientNonce string, ttl time.Duration) (string, *capoidc.Req, error) {
	cfg := method.Config
	if !slices.Contains(cfg.AllowedRedirectURIs, redirectURI) {
		return "", nil, structs.KindErrorf(structs.ErrInvalid,
			"redirect URI %q is not one of the auth method's AllowedRedirectURIs", redirectURI)
	}
	opts := []capoidc.Option{capoidc.WithNonce(clientNonce)}
	if len(cfg.OIDCScopes) > 0 {
		opts = append(opts, capoidc.WithScopes(cfg.OIDCScopes...))
	}
	if len(cfg.BoundAudiences) > 0 {
		opts = append(opts, capoidc.WithAudiences(cfg.BoundAudiences...))
	}
	if cfg.OIDCEnablePKCE {
		verifier, err := capoidc.NewCodeVerifier()
		if err != nil {
			return "", nil, err
		}
		opts = append(opts, capoidc.WithPKCE(verifier))
	}
	req, err := capoidc.NewRequest(ttl, redirectURI, opts...)
	if err != nil {
		return "", nil, fmt.Errorf("OIDC request: %w", err)
	}
	provider, err := newProvider(cfg)
	if err != nil {
		return "", nil, err
	}
	defer provider.Done()
	url, err := provider.AuthURL(ctx, req)
	if err != nil {
		return "", nil, fmt.Errorf("failed to generate auth URL: %w", err)
	}
	return url, req, nil
}

// CompleteOIDC trades the provider's code for its tokens and returns the
// claims of the verified ID token (signature, issuer, audience, expiry,
// and the nonce of req) and, unless the method disables it, the
// provider's UserInfo claims for the same subject.
func CompleteOIDC(ctx context.Context, method *structs.ACLAuthMethod, req *capoidc.Req, state, code string) (idClaims, userClaims map[string]interface{}, err error) {
	provider, err := newProvider(method.Config)
	if err != nil {
		return nil, nil, err
	}
	defer provider.Done()
	tk, err := provider.Exchange(ctx, req, state, code)
	if err != nil {
		return nil, nil, structs.KindErrorf(structs.ErrUnauthenticated, "failed to exchange token with provider: %v", err)
	}
	if !tk.Valid() {
		return nil, nil, structs.KindErrorf(structs.ErrUnauthenticated, "exchanged token is not valid; potentially expired or empty")
	}
	if err := tk.IDToken().Claims(&idClaims); err != nil {
		return nil, nil, fmt.Errorf("failed to retrieve the ID token claims: %w", err)
	}
	if method.Config.OIDCDisableUserInfo {
		return idClaims, nil, nil
	}
	source := tk.StaticTokenSource()
	if source == nil {
		return idClaims, nil, nil
	}
	sub, _ := idClaims["sub"].(string)
	if sub == "" {
		return nil, nil, errors.New("ID token has no subject")
	}
	if err := provider.UserInfo(ctx, source, sub, &userClaims); err != nil {
		return nil, nil, fmt.Errorf("failed to retrieve the user info claims: %w", err)
	}
	return idClaims, userClaims, nil
}
