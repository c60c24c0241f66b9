package structs

import "time"

// Requests and responses of the ACL.* RPCs, and the Raft entries they
// write.

// ACLTokenBootstrapRequest asks for the first management token
// (ACL.Bootstrap) and, with Token filled by the leader, is the Raft entry
// that writes it.
type ACLTokenBootstrapRequest struct {
	// BootstrapSecret, optional, is the SecretID the token gets; a UUID.
	BootstrapSecret string
	// Token is the token the leader made; set on the Raft entry only.
	Token *ACLToken
	// ResetIndex is the reset index the operator's reset file names, 0
	// for a first bootstrap.
	ResetIndex uint64
	WriteRequest
}

// ACLPolicyUpsertRequest writes policies: ACL.UpsertPolicies, and its
// Raft entry.
type ACLPolicyUpsertRequest struct {
	Policies []*ACLPolicy
	WriteRequest
}

// ACLPolicyDeleteRequest removes policies by name; missing names are no
// error.
type ACLPolicyDeleteRequest struct {
	Names []string
	WriteRequest
}

// ACLPolicyListRequest lists policies; Prefix filters names.
type ACLPolicyListRequest struct {
	QueryOptions
}

// ACLPolicyListResponse answers ACL.ListPolicies.
type ACLPolicyListResponse struct {
	Policies []*ACLPolicyListStub
	QueryMeta
}

// ACLPolicySpecificRequest names one policy: ACL.GetPolicy.
type ACLPolicySpecificRequest struct {
	Name string
	QueryOptions
}

// SingleACLPolicyResponse answers ACL.GetPolicy; Policy is nil when the
// policy does not exist.
type SingleACLPolicyResponse struct {
	Policy *ACLPolicy
	QueryMeta
}

// ACLPolicySetRequest names several policies: ACL.GetPolicies.
type ACLPolicySetRequest struct {
	Names []string
	QueryOptions
}

// ACLPolicySetResponse answers ACL.GetPolicies with the policies that
// exist, by name.
type ACLPolicySetResponse struct {
	Policies map[string]*ACLPolicy
	QueryMeta
}

// ACLTokenUpsertRequest writes tokens: ACL.UpsertTokens, and its Raft
// entry.
type ACLTokenUpsertRequest struct {
	Tokens []*ACLToken
	WriteRequest
}

// ACLTokenUpsertResponse answers ACL.UpsertTokens and ACL.Bootstrap with
// the tokens as stored, secrets included.
type ACLTokenUpsertResponse struct {
	Tokens []*ACLToken
	WriteMeta
}

// ACLTokenDeleteRequest removes tokens by AccessorID.
type ACLTokenDeleteRequest struct {
	AccessorIDs []string
	WriteRequest
}

// ACLTokenListRequest lists tokens; Prefix filters AccessorIDs.
type ACLTokenListRequest struct {
	// GlobalOnly keeps global tokens only.
	GlobalOnly bool
	QueryOptions
}

// ACLTokenListResponse answers ACL.ListTokens, oldest first.
type ACLTokenListResponse struct {
	Tokens []*ACLTokenListStub
	QueryMeta
}

// ACLTokenSpecificRequest names one token by AccessorID: ACL.GetToken.
type ACLTokenSpecificRequest struct {
	AccessorID string
	QueryOptions
}

// SingleACLTokenResponse answers ACL.GetToken and ACL.WhoAmI; Token is
// nil when it does not exist.
type SingleACLTokenResponse struct {
	Token *ACLToken
	QueryMeta
}

// ResolveACLTokenRequest asks which token a secret is: ACL.ResolveToken.
type ResolveACLTokenRequest struct {
	SecretID string
	QueryOptions
}

// ResolveACLTokenResponse answers ACL.ResolveToken; Token is nil for a
// secret no token has.
type ResolveACLTokenResponse struct {
	Token *ACLToken
	QueryMeta
}

// ACLWhoAmIRequest asks for the token the request carries.
type ACLWhoAmIRequest struct {
	QueryOptions
}

// ACLRolesUpsertRequest writes roles: ACL.UpsertRoles, and its Raft
// entry.
type ACLRolesUpsertRequest struct {
	Roles []*ACLRole
	WriteRequest
}

// ACLRolesUpsertResponse answers ACL.UpsertRoles with the roles as
// stored.
type ACLRolesUpsertResponse struct {
	Roles []*ACLRole
	WriteMeta
}

// ACLRolesDeleteByIDRequest removes roles by ID.
type ACLRolesDeleteByIDRequest struct {
	ACLRoleIDs []string
	WriteRequest
}

// ACLRolesListRequest lists roles; Prefix filters IDs.
type ACLRolesListRequest struct {
	QueryOptions
}

// ACLRolesListResponse answers ACL.ListRoles.
type ACLRolesListResponse struct {
	ACLRoles []*ACLRoleListStub
	QueryMeta
}

// ACLRoleByIDRequest names one role by ID: ACL.GetRole.
type ACLRoleByIDRequest struct {
	RoleID string
	QueryOptions
}

// ACLRoleByNameRequest names one role by name: ACL.GetRoleByName.
type ACLRoleByNameRequest struct {
	RoleName string
	QueryOptions
}

// ACLRoleByIDResponse answers ACL.GetRole and ACL.GetRoleByName; ACLRole
// is nil when the role does not exist.
type ACLRoleByIDResponse struct {
	ACLRole *ACLRole
	QueryMeta
}

// OneTimeTokenUpsertRequest asks for a one-time token for the request's
// own token (ACL.UpsertOneTimeToken) and, with OneTimeToken filled by the
// leader, is the Raft entry that writes it.
type OneTimeTokenUpsertRequest struct {
	OneTimeToken *OneTimeToken
	WriteRequest
}

// OneTimeTokenUpsertResponse answers ACL.UpsertOneTimeToken.
type OneTimeTokenUpsertResponse struct {
	OneTimeToken *OneTimeToken
	WriteMeta
}

// OneTimeTokenExchangeRequest exchanges a one-time token for its ACL
// token: ACL.ExchangeOneTimeToken.
type OneTimeTokenExchangeRequest struct {
	OneTimeSecretID string
	WriteRequest
}

// OneTimeTokenExchangeResponse answers ACL.ExchangeOneTimeToken with the
// ACL token, secret included.
type OneTimeTokenExchangeResponse struct {
	Token *ACLToken
	WriteMeta
}

// OneTimeTokenDeleteRequest is the Raft entry removing one-time tokens by
// their secrets (an exchange removes the one exchanged).
type OneTimeTokenDeleteRequest struct {
	OneTimeSecretIDs []string
	WriteRequest
}

// ACLReapExpiredRequest asks the leader to remove every expired ACL token
// and one-time token: ACL.ReapExpired, which the garbage collector calls.
type ACLReapExpiredRequest struct {
	WriteRequest
}

// ACLAuthMethodsUpsertRequest writes auth methods: ACL.UpsertAuthMethods,
// and its Raft entry.
type ACLAuthMethodsUpsertRequest struct {
	AuthMethods []*ACLAuthMethod
	WriteRequest
}

// ACLAuthMethodsUpsertResponse answers ACL.UpsertAuthMethods with the
// methods as stored.
type ACLAuthMethodsUpsertResponse struct {
	AuthMethods []*ACLAuthMethod
	WriteMeta
}

// ACLAuthMethodsDeleteRequest removes auth methods by name, and the
// binding rules that name them.
type ACLAuthMethodsDeleteRequest struct {
	Names []string
	WriteRequest
}

// ACLAuthMethodsListRequest lists auth methods.
type ACLAuthMethodsListRequest struct {
	QueryOptions
}

// ACLAuthMethodsListResponse answers ACL.ListAuthMethods.
type ACLAuthMethodsListResponse struct {
	AuthMethods []*ACLAuthMethodListStub
	QueryMeta
}

// ACLAuthMethodGetRequest names one auth method: ACL.GetAuthMethod.
type ACLAuthMethodGetRequest struct {
	MethodName string
	QueryOptions
}

// ACLAuthMethodGetResponse answers ACL.GetAuthMethod; AuthMethod is nil
// when it does not exist.
type ACLAuthMethodGetResponse struct {
	AuthMethod *ACLAuthMethod
	QueryMeta
}

// ACLBindingRulesUpsertRequest writes binding rules:
// ACL.UpsertBindingRules, and its Raft entry.
type ACLBindingRulesUpsertRequest struct {
	ACLBindingRules []*ACLBindingRule
	WriteRequest
}

// ACLBindingRulesUpsertResponse answers ACL.UpsertBindingRules with the
// rules as stored.
type ACLBindingRulesUpsertResponse struct {
	ACLBindingRules []*ACLBindingRule
	WriteMeta
}

// ACLBindingRulesDeleteRequest removes binding rules by ID.
type ACLBindingRulesDeleteRequest struct {
	ACLBindingRuleIDs []string
	WriteRequest
}

// ACLBindingRulesListRequest lists binding rules; Prefix filters IDs and
// AuthMethod, when set, keeps the rules of that method.
type ACLBindingRulesListRequest struct {
	AuthMethod string
	QueryOptions
}

// ACLBindingRulesListResponse answers ACL.ListBindingRules.
type ACLBindingRulesListResponse struct {
	ACLBindingRules []*ACLBindingRuleListStub
	QueryMeta
}

// ACLBindingRuleRequest names one binding rule: ACL.GetBindingRule.
type ACLBindingRuleRequest struct {
	ACLBindingRuleID string
	QueryOptions
}

// ACLBindingRuleResponse answers ACL.GetBindingRule; ACLBindingRule is
// nil when it does not exist.
type ACLBindingRuleResponse struct {
	ACLBindingRule *ACLBindingRule
	QueryMeta
}

// ACLCreateClientIntroductionTokenRequest asks for a token a new client
// node presents when it first registers: ACL.CreateClientIntroductionToken.
// TTL 0 is the default; NodeName is optional; NodePool "" is "default".
type ACLCreateClientIntroductionTokenRequest struct {
	TTL      time.Duration
	NodeName string
	NodePool string
	WriteRequest
}

// ACLCreateClientIntroductionTokenResponse carries the signed JWT.
type ACLCreateClientIntroductionTokenResponse struct {
	JWT string
}

// Bounds of a client introduction token's time to live, as Nomad's
// defaults.
const (
	DefaultClientIntroductionTTL = 5 * time.Minute
	MaxClientIntroductionTTL     = 30 * time.Minute
)
