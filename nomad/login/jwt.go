package login

import (
	"context"
	"crypto"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	capjwt "github.com/hashicorp/cap/jwt"

	"github.com/opennomad/nomad/structs"
)

// ValidateJWT checks token against a JWT auth method's config and returns
// its claims: the signature with the method's keys (exactly one of
// JWTValidationPubKeys, JWKSURL, OIDCDiscoveryURL), its alg against
// SigningAlgs (RS256 when empty), its audience against BoundAudiences and
// its issuer against BoundIssuer (when set), and its times against now
// with the method's leeways (a zero leeway is cap's default: 150 s for
// exp and nbf, 60 s of clock skew). Remote keys are fetched on each call,
// so a provider's key rotation is seen at once.
func ValidateJWT(ctx context.Context, token string, cfg *structs.ACLAuthMethodConfig, now time.Time) (map[string]interface{}, error) {
	if cfg == nil {
		return nil, errors.New("auth method has no config")
	}
	keys, err := keySet(ctx, cfg)
	if err != nil {
		return nil, err
	}
	validator, err := capjwt.NewValidator(keys)
	if err != nil {
		return nil, err
	}
	algs := make([]capjwt.Alg, 0, len(cfg.SigningAlgs))
	for _, a := range cfg.SigningAlgs {
		algs = append(algs, capjwt.Alg(a))
	}
	claims, err := validator.Validate(ctx, token, capjwt.Expected{
		Audiences:         cfg.BoundAudiences,
		SigningAlgorithms: algs,
		ExpirationLeeway:  cfg.ExpirationLeeway,
		NotBeforeLeeway:   cfg.NotBeforeLeeway,
		ClockSkewLeeway:   cfg.ClockSkewLeeway,
		Now:               func() time.Time { return now },
	})
	if err != nil {
		return nil, err
	}
	if err := checkIssuer(claims, cfg.BoundIssuer); err != nil {
		return nil, err
	}
	return claims, nil
}

// checkIssuer admits a token whose iss is one of bound; any issuer when
// bound is empty. cap checks one issuer only, a method may name several.
func checkIssuer(claims map[string]interface{}, bound []string) error {
	if len(bound) == 0 {
		return nil
	}
	iss, _ := claims["iss"].(string)
	if !slices.Contains(bound, iss) {
		return fmt.Errorf("invalid issuer %q: not one of the auth method's BoundIssuer", iss)
	}
	return nil
}

// keySet is where the method's signing keys come from.
func keySet(ctx context.Context, cfg *structs.ACLAuthMethodConfig) (capjwt.KeySet, error) {
	switch {
	case len(cfg.JWTValidationPubKeys) > 0:
		keys := make([]crypto.PublicKey, 0, len(cfg.JWTValidationPubKeys))
		for i, pem := range cfg.JWTValidationPubKeys {
			k, err := capjwt.ParsePublicKeyPEM([]byte(pem))
			if err != nil {
				return nil, fmt.Errorf("JWTValidationPubKeys[%d]: %w", i, err)
			}
			keys = append(keys, k)
		}
		return capjwt.NewStaticKeySet(keys)
	case cfg.JWKSURL != "":
		return capjwt.NewJSONWebKeySet(ctx, cfg.JWKSURL, cfg.JWKSCACert)
	case cfg.OIDCDiscoveryURL != "":
		return capjwt.NewOIDCDiscoveryKeySet(ctx, cfg.OIDCDiscoveryURL, strings.Join(cfg.DiscoveryCaPem, "\n"))
	}
	return nil, errors.New("auth method names no keys: set JWTValidationPubKeys, JWKSURL or OIDCDiscoveryURL")
}
