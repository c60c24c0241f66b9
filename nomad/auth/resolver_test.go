package auth

import (
	"testing"
	"time"

	"github.com/hashicorp/go-memdb"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/acl"
	"github.com/opennomad/nomad/structs"
)

// fakeStore is a Store of a few objects; version is what ACLVersion says.
type fakeStore struct {
	tokens   map[string]*structs.ACLToken
	policies map[string]*structs.ACLPolicy
	roles    map[string]*structs.ACLRole
	version  uint64
	lookups  int
}

func (f *fakeStore) ACLTokenBySecretID(_ memdb.WatchSet, secret string) (*structs.ACLToken, error) {
	f.lookups++
	return f.tokens[secret], nil
}
func (f *fakeStore) ACLPolicyByName(_ memdb.WatchSet, name string) (*structs.ACLPolicy, error) {
	return f.policies[name], nil
}
func (f *fakeStore) ACLRoleByID(_ memdb.WatchSet, id string) (*structs.ACLRole, error) {
	return f.roles[id], nil
}
func (f *fakeStore) ACLVersion() (uint64, error) { return f.version, nil }

var epoch = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func newFakeStore() *fakeStore {
	expires := epoch.Add(time.Hour)
	return &fakeStore{
		tokens: map[string]*structs.ACLToken{
			"mgmt":    {Type: structs.ACLManagementToken},
			"reader":  {Type: structs.ACLClientToken, Policies: []string{"read-web", "gone"}},
			"by-role": {Type: structs.ACLClientToken, Roles: []*structs.ACLTokenRoleLink{{ID: "r1"}, {ID: "deleted"}}},
			"brief":   {Type: structs.ACLClientToken, Policies: []string{"read-web"}, ExpirationTime: &expires},
		},
		policies: map[string]*structs.ACLPolicy{
			"read-web":  {Name: "read-web", Rules: `namespace "web" { policy = "read" }`},
			"write-web": {Name: "write-web", Rules: `namespace "web" { policy = "write" }`},
		},
		roles: map[string]*structs.ACLRole{
			"r1": {ID: "r1", Policies: []*structs.ACLRolePolicyLink{{Name: "write-web"}}},
		},
		version: 7,
	}
}

func TestResolve(t *testing.T) {
	cases := []struct {
		name            string
		secret          string
		at              time.Time
		anonymous       string // rules of an "anonymous" policy, if any
		wantErr         error
		management      bool
		readWeb, subWeb bool
	}{
		{name: "management", secret: "mgmt", management: true, readWeb: true, subWeb: true},
		{name: "policies that exist grant, missing ones nothing", secret: "reader", readWeb: true},
		{name: "a role's policies", secret: "by-role", readWeb: true, subWeb: true},
		{name: "before expiry", secret: "brief", at: epoch.Add(59 * time.Minute), readWeb: true},
		{name: "at expiry", secret: "brief", at: epoch.Add(time.Hour), wantErr: structs.ErrACLTokenExpired},
		{name: "unknown secret", secret: "nobody", wantErr: structs.ErrPermissionDenied},
		{name: "no token, no anonymous policy"},
		{name: "no token, an anonymous policy", anonymous: `namespace "web" { policy = "read" }`, readWeb: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			store := newFakeStore()
			if tc.anonymous != "" {
				store.policies["anonymous"] = &structs.ACLPolicy{Name: "anonymous", Rules: tc.anonymous}
			}
			at := tc.at
			if at.IsZero() {
				at = epoch
			}
			r := NewResolver(func() time.Time { return at })
			a, err := r.Resolve(store, tc.secret)
			if tc.wantErr != nil {
				must.ErrorIs(t, err, tc.wantErr)
				must.Nil(t, a)
				return
			}
			must.NoError(t, err)
			must.Eq(t, tc.management, a.IsManagement())
			must.Eq(t, tc.readWeb, a.AllowNamespaceOperation("web", acl.NamespaceCapabilityReadJob))
			must.Eq(t, tc.subWeb, a.AllowNamespaceOperation("web", acl.NamespaceCapabilitySubmitJob))
			must.False(t, a.AllowNamespaceOperation("db", acl.NamespaceCapabilityReadJob) && !tc.management)
		})
	}
}

// TestResolve_CacheFollowsTheTables: a resolved secret is served from the
// cache until an ACL table changes; a narrowed policy and a deleted token
// take effect on the next request.
func TestResolve_CacheFollowsTheTables(t *testing.T) {
	store := newFakeStore()
	r := NewResolver(func() time.Time { return epoch })
	for range 3 {
		a, err := r.Resolve(store, "by-role")
		must.NoError(t, err)
		must.True(t, a.AllowNamespaceOperation("web", acl.NamespaceCapabilitySubmitJob))
	}
	must.Eq(t, 1, store.lookups)

	store.policies["write-web"].Rules = `namespace "web" { policy = "deny" }`
	store.version++
	a, err := r.Resolve(store, "by-role")
	must.NoError(t, err)
	must.False(t, a.AllowNamespaceOperation("web", acl.NamespaceCapabilitySubmitJob))

	delete(store.tokens, "by-role")
	store.version++
	_, err = r.Resolve(store, "by-role")
	must.ErrorIs(t, err, structs.ErrPermissionDenied)

	// Another store (a restored snapshot) starts a new cache.
	other := newFakeStore()
	a, err = r.Resolve(other, "by-role")
	must.NoError(t, err)
	must.True(t, a.AllowNamespaceOperation("web", acl.NamespaceCapabilitySubmitJob))
}

func BenchmarkResolve_Cached(b *testing.B) {
	store := newFakeStore()
	r := NewResolver(func() time.Time { return epoch })
	b.ReportAllocs()
	for range b.N {
		if _, err := r.Resolve(store, "by-role"); err != nil {
			b.Fatal(err)
		}
	}
}
