package agent

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	nomadapi "github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

// TestHTTP_Variables drives the variables routes of a real dev agent:
// Nomad's paths, statuses, bodies and texts.
func TestHTTP_Variables(t *testing.T) {
	ra := startDevAgent(t)

	steps := []struct {
		name, method, path, body string
		status                   int
		want                     string
	}{
		{"create", "PUT", "/v1/var/app/db", `{"Items":{"user":"admin"}}`, 200, `"Items":{"user":"admin"}`},
		{"no items", "PUT", "/v1/var/app/x", `{}`, 400, "variable missing required Items object"},
		{"bad path", "PUT", "/v1/var/app/a%20b", `{"Items":{"k":"v"}}`, 400, `invalid path "app/a b"`},
		{"too large", "PUT", "/v1/var/app/big", `{"Items":{"k":"` + strings.Repeat("v", 65536) + `"}}`, 400, "variables are limited to 64KiB in total size"},
		{"lock in a set", "PUT", "/v1/var/app/db", `{"Items":{"k":"v"},"Lock":{"TTL":"20s"}}`, 400, "variable should not contain lock definition"},
		{"bad cas", "PUT", "/v1/var/app/db?cas=x", `{"Items":{"k":"v"}}`, 400, "can not parse cas: "},
		{"cas with a lock", "PUT", "/v1/var/app/db?cas=1&lock-acquire", `{"Items":{"k":"v"}}`, 400, "CAS can't be used with lock operations"},
		{"two lock operations", "PUT", "/v1/var/app/db?lock-acquire&lock-release", `{}`, 400, "multiple lock operations"},
		{"create-only on existing", "PUT", "/v1/var/app/db?cas=0", `{"Items":{"k":"v"}}`, 409, `"Items":{"user":"admin"}`},
		{"cas on missing", "PUT", "/v1/var/app/none?cas=3", `{"Items":{"k":"v"}}`, 409, `{"Namespace":"default","Path":"app/none","CreateIndex":0`},
		{"read", "GET", "/v1/var/app/db", "", 200, `"Path":"app/db"`},
		{"read missing", "GET", "/v1/var/app/none", "", 404, "variable not found"},
		{"list", "GET", "/v1/vars?prefix=app", "", 200, `"Path":"app/db"`},
		{"lock ttl", "PUT", "/v1/var/app/l?lock-acquire", `{"Items":{"k":"v"},"Lock":{"TTL":"1s"}}`, 400, "TTL must be between 10 seconds and 24 hours"},
		{"release without lock", "PUT", "/v1/var/app/db?lock-release", `{}`, 400, "missing lock information"},
		{"release with items", "PUT", "/v1/var/app/db?lock-release", `{"Items":{"k":"v"},"Lock":{"ID":"x"}}`, 400, "lock release operation doesn't take variable items"},
		{"release unlocked", "PUT", "/v1/var/app/db?lock-release", `{"Lock":{"ID":"x"}}`, 500, "variable doesn't hold a lock"},
		{"renew missing", "PUT", "/v1/var/app/none?lock-renew", `{"Lock":{"ID":"x"}}`, 404, "variable doesn't exist"},
		{"renew unlocked", "PUT", "/v1/var/app/db?lock-renew", `{"Lock":{"ID":"x"}}`, 409, "variable doesn't hold a lock"},
		{"delete missing", "DELETE", "/v1/var/app/none", "", 204, ""},
		{"delete cas on missing", "DELETE", "/v1/var/app/none?cas=4", "", 409, `"Path":"app/none"`},
		{"wrong method", "PATCH", "/v1/var/app/db", "", 400, "Invalid method"},
	}
	for _, st := range steps {
		resp, body := ra.do(st.method, st.path, st.body)
		must.Eq(t, st.status, resp.StatusCode, must.Sprintf("%s: %s", st.name, body))
		must.StrContains(t, body, st.want, must.Sprint(st.name))
	}

	// A conflict's index is the conflicting variable's.
	resp, body := ra.do("GET", "/v1/var/app/db", "")
	var current structs.VariableDecrypted
	must.NoError(t, json.Unmarshal([]byte(body), &current))
	resp, _ = ra.do("DELETE", "/v1/var/app/db?cas=1", "")
	must.Eq(t, http.StatusConflict, resp.StatusCode)
	must.Eq(t, current.ModifyIndex, parseIndex(t, resp))

	// Locks: the holder's answer shows the lock; others are kept out.
	resp, body = ra.do("PUT", "/v1/var/app/l?lock-acquire", `{"Items":{"k":"v"}}`)
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	var locked structs.VariableDecrypted
	must.NoError(t, json.Unmarshal([]byte(body), &locked))
	must.StrContains(t, body, `"TTL":"15s","LockDelay":"15s"`)
	resp, body = ra.do("PUT", "/v1/var/app/l?lock-acquire", `{"Items":{"k":"v"}}`)
	must.Eq(t, http.StatusConflict, resp.StatusCode)
	must.StrContains(t, body, `{"Namespace":"default","Path":"app/l"`)
	resp, body = ra.do("PUT", "/v1/var/app/l?lock-renew", `{"Lock":{"ID":"other"}}`)
	must.Eq(t, http.StatusConflict, resp.StatusCode)
	must.StrContains(t, body, "attempting to modify locked variable")
	resp, body = ra.do("PUT", "/v1/var/app/l?lock-release", `{"Lock":{"ID":"other"}}`)
	must.Eq(t, http.StatusConflict, resp.StatusCode)
	must.StrContains(t, body, `"Lock":{"ID":"","TTL":"","LockDelay":""}`)
	resp, body = ra.do("PUT", "/v1/var/app/l?lock-release", `{"Lock":{"ID":"`+locked.Lock.ID+`"}}`)
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	must.StrNotContains(t, body, "Lock")
	// As Nomad answers a release: the metadata, no items.
	must.StrNotContains(t, body, "Items")
	must.StrContains(t, body, `"Path":"app/l"`)

	// Pages are keyed "<namespace>.<path>".
	resp, body = ra.do("GET", "/v1/vars?namespace=*&per_page=1", "")
	must.Eq(t, http.StatusOK, resp.StatusCode)
	must.Eq(t, "default.app/l", resp.Header.Get("X-Nomad-NextToken"))
	must.StrContains(t, body, `"Path":"app/db"`)
	resp, body = ra.do("GET", "/v1/vars?namespace=*&per_page=1&next_token=default.app/l", "")
	must.Eq(t, http.StatusOK, resp.StatusCode)
	must.StrContains(t, body, `"Path":"app/l"`)
	must.StrNotContains(t, body, "Items")
}

func parseIndex(t *testing.T, resp *http.Response) uint64 {
	t.Helper()
	var n uint64
	must.NoError(t, json.Unmarshal([]byte(resp.Header.Get("X-Nomad-Index")), &n))
	return n
}

// TestRealServer_NomadAPIVariables runs what Nomad's own api tests ask of
// variables (TestVariables_SimpleCRUD, _CRUDWithCAS, _Read,
// _GetVariableItems, TestVariable_CreateReturnsContent,
// TestVariables_LockRenewRelease) with HashiCorp's Go client against a
// real dev agent.
func TestRealServer_NomadAPIVariables(t *testing.T) {
	ra := startDevAgent(t)
	client, err := nomadapi.NewClient(&nomadapi.Config{Address: ra.base})
	must.NoError(t, err)
	nsv := client.Variables()

	_, _, err = nsv.Create(&nomadapi.Variable{Path: "bad/var"}, nil)
	must.ErrorContains(t, err, "Unexpected response code: 400 (variable missing required Items object)")

	sv1 := nomadapi.NewVariable("my/first/variable/SimpleCRUD")
	sv1.Namespace = "default"
	sv1.Items["k1"] = "v1"
	sv2 := sv1.Copy()
	sv2.Path = "other/variable/b"
	got, _, err := nsv.Create(sv1, nil)
	must.NoError(t, err)
	must.Positive(t, got.CreateIndex)
	must.Positive(t, got.ModifyTime)
	must.Eq(t, sv1.Items, got.Items)
	*sv1 = *got
	sv2, _, err = nsv.Create(sv2, nil)
	must.NoError(t, err)

	sv1.Items["new-hotness"] = "yeah!"
	got, _, err = nsv.Update(sv1, nil)
	must.NoError(t, err)
	must.NotEq(t, sv1.ModifyIndex, got.ModifyIndex)
	*sv1 = *got

	list, _, err := nsv.List(nil)
	must.NoError(t, err)
	must.Eq(t, []*nomadapi.VariableMetadata{sv1.Metadata(), sv2.Metadata()}, list)
	list, qm, err := nsv.List(&nomadapi.QueryOptions{PerPage: 1})
	must.NoError(t, err)
	must.Len(t, 1, list)
	must.NotEq(t, "", qm.NextToken)
	list, _, err = nsv.PrefixList("my", nil)
	must.NoError(t, err)
	must.Eq(t, []*nomadapi.VariableMetadata{sv1.Metadata()}, list)

	read, _, err := nsv.Read(sv1.Path, nil)
	must.NoError(t, err)
	must.Eq(t, sv1, read)
	items, _, err := nsv.GetVariableItems(sv1.Path, nil)
	must.NoError(t, err)
	must.Eq(t, sv1.Items, items)
	_, _, err = nsv.Read("not/found", nil)
	must.ErrorIs(t, err, nomadapi.ErrVariablePathNotFound)
	peeked, _, err := nsv.Peek("not/found", nil)
	must.NoError(t, err)
	must.Nil(t, peeked)

	// Check-and-set.
	stale := sv1.Copy()
	stale.ModifyIndex = 1
	_, _, err = nsv.CheckedUpdate(stale, nil)
	var conflict nomadapi.ErrCASConflict
	must.True(t, errors.As(err, &conflict))
	must.Eq(t, sv1, conflict.Conflict)
	_, err = nsv.CheckedDelete(sv1.Path, 1, nil)
	must.True(t, errors.As(err, &conflict))
	_, err = nsv.CheckedDelete(sv1.Path, sv1.ModifyIndex, nil)
	must.NoError(t, err)
	_, _, err = nsv.CheckedCreate(sv2, nil)
	must.True(t, errors.As(err, &conflict))

	// Locks, with a path that opens with "/".
	lv := nomadapi.NewVariable("/first/variable-lock")
	lv.Items["k1"] = "v1"
	got, _, err = nsv.Create(lv, nil)
	must.NoError(t, err)
	*lv = *got
	got, _, err = nsv.AcquireLock(lv, nil)
	must.NoError(t, err)
	must.NotEq(t, lv.ModifyIndex, got.ModifyIndex)
	must.Eq(t, lv.Items, got.Items)
	must.NotNil(t, got.Lock)
	*lv = *got
	renewed, _, err := nsv.RenewLock(lv.Copy(), nil)
	must.NoError(t, err)
	must.Eq(t, lv.ModifyIndex, renewed.ModifyIndex)
	must.Eq(t, lv.Lock.ID, renewed.Lock.ID)
	list, _, err = nsv.PrefixList("first", nil)
	must.NoError(t, err)
	must.NotNil(t, list[0].Lock, must.Sprint("ACLs are off"))
	lv.Items = nil
	got, _, err = nsv.ReleaseLock(lv, nil)
	must.NoError(t, err)
	must.Nil(t, got.Lock)
	must.MapEmpty(t, got.Items) // a release answers the metadata only

	_, err = nsv.Delete(sv2.Path, nil)
	must.NoError(t, err)
}
