// Package login turns a credential from an identity provider into what a
// Nomad token is made of, for the ACL endpoints' login methods:
//
//   - jwt.go checks a JWT against an auth method's keys (static public
//     keys, a JWKS URL or OIDC discovery), audiences, issuers and leeways;
//   - oidc.go runs the OIDC authorization-code flow (with nonce, and PKCE
//     when the method asks for it) and keeps the logins it started;
//   - claims.go maps verified claims into the values binding rule
//     selectors read;
//   - bind.go evaluates an auth method's binding rules into the token's
//     roles, policies, or management;
//   - template.go fills "${value.x}" templates in bind and token names.
//
// Token validation and the OIDC protocol are hashicorp/cap's, the library
// Nomad logs in with; selectors are go-bexpr's, as for every other Nomad
// filter. Nothing here writes state: the endpoint creates the token
// through Raft.
package login
