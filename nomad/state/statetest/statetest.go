// Package statetest holds test helpers for the state store that the tests
// of several packages share (the FSM's, the plan applier's, the server's):
// comparing two stores object by object (SameState), and a store written
// at increasing indexes as Raft and the FSM would (Store), with the mock
// objects those tests commit to it.
package statetest

import (
	"reflect"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// dump lists everything a store holds, for comparing two stores.
func dump(t *testing.T, s *state.StateStore) map[string]interface{} {
	t.Helper()
	out := map[string]interface{}{}
	var err error
	add := func(name string, v interface{}, e error) {
		if e != nil {
			err = e
		}
		out[name] = v
	}
	nodes, e := s.Nodes(nil)
	add("nodes", nodes, e)
	jobs, e := s.Jobs(nil, structs.AllNamespaces)
	add("jobs", jobs, e)
	evals, e := s.Evals(nil, structs.AllNamespaces)
	add("evals", evals, e)
	allocs, e := s.Allocs(nil, structs.AllNamespaces)
	add("allocs", allocs, e)
	summaries, e := s.JobSummaries(nil)
	add("summaries", summaries, e)
	_, cfg, e := s.SchedulerConfig(nil)
	add("scheduler_config", cfg, e)
	meta, e := s.ClusterMetadata(nil)
	add("cluster_meta", meta, e)
	_, autopilot, e := s.AutopilotConfig(nil)
	add("autopilot_config", autopilot, e)
	indexes, e := s.Indexes()
	add("indexes", indexes, e)
	aclPolicies, e := s.ACLPolicies(nil, "")
	add("acl_policies", aclPolicies, e)
	aclTokens, e := s.ACLTokens(nil, "")
	add("acl_tokens", aclTokens, e)
	aclRoles, e := s.ACLRoles(nil, "")
	add("acl_roles", aclRoles, e)
	otts, e := s.OneTimeTokens(nil)
	add("one_time_tokens", otts, e)
	for _, j := range jobs {
		versions, e := s.JobVersionsByID(nil, j.Namespace, j.ID)
		add("versions/"+j.ID, versions, e)
		deployments, e := s.DeploymentsByJobID(nil, j.Namespace, j.ID, true)
		add("deployments/"+j.ID, deployments, e)
	}
	must.NoError(t, err)
	return out
}

// SameState fails unless two stores hold equal objects. Both sides go
// through the msgpack codec first, so that times (decoded in UTC) and
// shared pointers do not count as differences.
func SameState(t *testing.T, want, got *state.StateStore) {
	t.Helper()
	a, b := dump(t, want), dump(t, got)
	must.Eq(t, len(a), len(b))
	for k, v := range a {
		if !reflect.DeepEqual(viaCodec(t, v), viaCodec(t, b[k])) {
			t.Errorf("%s differs after restore:\nwant %#v\n got %#v", k, v, b[k])
		}
	}
}

// viaCodec returns v after a msgpack round trip.
func viaCodec(t testing.TB, v interface{}) interface{} {
	t.Helper()
	buf, err := structs.Encode(0, v)
	must.NoError(t, err)
	out := reflect.New(reflect.TypeOf(v))
	must.NoError(t, structs.Decode(buf[1:], out.Interface()))
	return out.Elem().Interface()
}
