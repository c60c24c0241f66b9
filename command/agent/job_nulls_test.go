package agent

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/api"
)

// TestJobs_NullEntriesAre400 sends jobs with null list entries to every
// endpoint that decodes one: each answers 400 naming every null entry, and
// nothing reaches the server.
func TestJobs_NullEntriesAre400(t *testing.T) {
	endpoints := []struct{ method, path, wrap string }{
		{"PUT", "/v1/jobs", `{"Job": %s}`},
		{"POST", "/v1/jobs", `{"Job": %s}`},
		{"PUT", "/v1/job/web", `{"Job": %s}`},
		{"POST", "/v1/job/web", `{"Job": %s}`},
		{"PUT", "/v1/validate/job", `{"Job": %s}`},
		{"PUT", "/v1/job/web/plan", `{"Job": %s, "Diff": true}`},
	}
	jobs := []struct {
		name  string
		job   string
		paths []string
	}{
		{"task", `{"ID": "web", "TaskGroups": [{"Name": "g", "Tasks": [null]}]}`,
			[]string{"TaskGroups[0].Tasks[0]"}},
		{"group", `{"ID": "web", "TaskGroups": [null]}`,
			[]string{"TaskGroups[0]"}},
		{"second task of second group", `{"ID": "web", "TaskGroups": [
			{"Name": "a", "Tasks": [{"Name": "t", "Driver": "raw_exec"}]},
			{"Name": "b", "Tasks": [{"Name": "t", "Driver": "raw_exec"}, null]}]}`,
			[]string{"TaskGroups[1].Tasks[1]"}},
		{"job lists", `{"ID": "web", "Constraints": [null], "Affinities": [null], "Spreads": [null],
			"TaskGroups": [{"Name": "g", "Tasks": [{"Name": "t", "Driver": "raw_exec"}]}]}`,
			[]string{"Constraints[0]", "Affinities[0]", "Spreads[0]"}},
		{"group lists", `{"ID": "web", "TaskGroups": [{"Name": "g",
			"Constraints": [null], "Affinities": [null], "Spreads": [{"Attribute": "x", "SpreadTarget": [null]}],
			"Services": [null], "Networks": [null], "Volumes": {"data": null},
			"Tasks": [{"Name": "t", "Driver": "raw_exec"}]}]}`,
			[]string{"TaskGroups[0].Constraints[0]", "TaskGroups[0].Affinities[0]",
				"TaskGroups[0].Spreads[0].SpreadTarget[0]", "TaskGroups[0].Services[0]",
				"TaskGroups[0].Networks[0]", `TaskGroups[0].Volumes["data"]`}},
		{"task lists", `{"ID": "web", "TaskGroups": [{"Name": "g", "Tasks": [{"Name": "t", "Driver": "raw_exec",
			"Constraints": [null], "Affinities": [null], "Services": [null], "Templates": [null],
			"Artifacts": [null], "VolumeMounts": [null], "ScalingPolicies": [null], "Identities": [null],
			"Resources": {"Networks": [null], "Devices": [{"Name": "gpu", "Constraints": [null]}]}}]}]}`,
			prefixed("TaskGroups[0].Tasks[0].", "Constraints[0]", "Affinities[0]", "Services[0]",
				"Templates[0]", "Artifacts[0]", "VolumeMounts[0]", "ScalingPolicies[0]", "Identities[0]",
				"Resources.Networks[0]", "Resources.Devices[0].Constraints[0]")},
	}
	for _, ep := range endpoints {
		for _, j := range jobs {
			t.Run(ep.method+" "+ep.path+" "+j.name, func(t *testing.T) {
				h := newTestHTTP(t)
				resp, body := h.do(ep.method, ep.path, strings.Replace(ep.wrap, "%s", j.job, 1))
				must.Eq(t, http.StatusBadRequest, resp.StatusCode, must.Sprint(body))
				for _, p := range j.paths {
					must.StrContains(t, body, p+": null entry is not allowed")
				}
				must.Eq(t, len(j.paths), strings.Count(body, "null entry is not allowed"), must.Sprint(body))
				h.rpc.mu.Lock()
				defer h.rpc.mu.Unlock()
				must.SliceEmpty(t, h.rpc.calls, must.Sprint("the server was called"))
			})
		}
	}
}

// A driver config the servers' decoder could not read back is refused at
// the same step, before any RPC: an agent forwarding it would otherwise
// get a decoding failure, not the problem.
func TestJobs_DeepDriverConfigIs400(t *testing.T) {
	endpoints := []struct{ method, path, wrap string }{
		{"PUT", "/v1/jobs", `{"Job": %s}`},
		{"PUT", "/v1/validate/job", `{"Job": %s}`},
		{"PUT", "/v1/job/web/plan", `{"Job": %s}`},
	}
	job := `{"ID": "web", "TaskGroups": [{"Name": "g", "Tasks": [{"Name": "t", "Driver": "raw_exec", "Config": ` +
		strings.Repeat(`{"a": `, 40) + `1` + strings.Repeat(`}`, 40) + `}]}]}`
	for _, ep := range endpoints {
		t.Run(ep.method+" "+ep.path, func(t *testing.T) {
			h := newTestHTTP(t)
			resp, body := h.do(ep.method, ep.path, strings.Replace(ep.wrap, "%s", job, 1))
			must.Eq(t, http.StatusBadRequest, resp.StatusCode, must.Sprint(body))
			must.StrContains(t, body, "TaskGroups[0].Tasks[0].Config: nests deeper than 32 levels")
			h.rpc.mu.Lock()
			defer h.rpc.mu.Unlock()
			must.SliceEmpty(t, h.rpc.calls, must.Sprint("the server was called"))
		})
	}
}

// TestNullEntries_EveryList plants a null entry in each list and map of
// objects the api job types have, found from the types themselves, so a
// list added later is checked too: each is reported at its path, and
// even without that check canonicalizing and converting the job does not
// panic.
func TestNullEntries_EveryList(t *testing.T) {
	sites := plantNulls(reflect.TypeFor[api.Job](), "", map[reflect.Type]bool{})
	// Guards the generator: the job types have some 25 such lists.
	must.Greater(t, 20, len(sites))
	for _, s := range sites {
		t.Run(s.path, func(t *testing.T) {
			buf, err := json.Marshal(s.v.Interface())
			must.NoError(t, err)
			var job api.Job
			must.NoError(t, json.Unmarshal(buf, &job))

			err = nullEntries(&job)
			must.Error(t, err)
			must.EqError(t, err, s.path+": null entry is not allowed")

			convertJob(&job)
		})
	}
	must.NoError(t, nullEntries(fullJob()))
	must.NoError(t, nullEntries(&api.Job{}))
	must.NoError(t, nullEntries(nil))
}

// A null in free-form data (driver config) is a value, not an entry.
func TestNullEntries_FreeFormDataIsNotLookedInto(t *testing.T) {
	var job api.Job
	must.NoError(t, json.Unmarshal([]byte(`{"ID": "web", "TaskGroups": [{"Name": "g", "Tasks": [{"Name": "t",
		"Config": {"args": [null], "x": null}}]}]}`), &job))
	must.NoError(t, nullEntries(&job))
}

func prefixed(prefix string, paths ...string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = prefix + p
	}
	return out
}

// planted is a value of some type with one null entry at path.
type planted struct {
	path string
	v    reflect.Value
}

// plantNulls returns one value of t per list or map of objects reachable
// from it, holding a null entry there.
func plantNulls(t reflect.Type, path string, onPath map[reflect.Type]bool) []planted {
	if onPath[t] {
		return nil
	}
	onPath[t] = true
	defer delete(onPath, t)
	var out []planted
	switch t.Kind() {
	case reflect.Pointer:
		for _, p := range plantNulls(t.Elem(), path, onPath) {
			v := reflect.New(t.Elem())
			v.Elem().Set(p.v)
			out = append(out, planted{p.path, v})
		}
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			name, ok := jsonFieldName(f)
			if !ok {
				continue
			}
			for _, p := range plantNulls(f.Type, joinFieldPath(path, name), onPath) {
				v := reflect.New(t).Elem()
				v.Field(i).Set(p.v)
				out = append(out, planted{p.path, v})
			}
		}
	case reflect.Slice:
		elem := t.Elem()
		if !holdsObjects(elem) {
			return nil
		}
		entryPath := path + "[0]"
		if elem.Kind() == reflect.Pointer {
			out = append(out, planted{entryPath, reflect.MakeSlice(t, 1, 1)})
		}
		for _, p := range plantNulls(elem, entryPath, onPath) {
			v := reflect.MakeSlice(t, 1, 1)
			v.Index(0).Set(p.v)
			out = append(out, planted{p.path, v})
		}
	case reflect.Map:
		elem := t.Elem()
		if !holdsObjects(elem) || t.Key().Kind() != reflect.String {
			return nil
		}
		entryPath := path + `["k"]`
		key := reflect.ValueOf("k").Convert(t.Key())
		if elem.Kind() == reflect.Pointer {
			v := reflect.MakeMap(t)
			v.SetMapIndex(key, reflect.Zero(elem))
			out = append(out, planted{entryPath, v})
		}
		for _, p := range plantNulls(elem, entryPath, onPath) {
			v := reflect.MakeMap(t)
			v.SetMapIndex(key, p.v)
			out = append(out, planted{p.path, v})
		}
	}
	return out
}

func joinFieldPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
