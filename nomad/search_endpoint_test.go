package nomad

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

func TestSearchEndpoint_PrefixAndFuzzy(t *testing.T) {
	s := newTestServer(t, nil)
	job := mock.Job()
	registerJob(t, s, job)

	var prefix structs.SearchResponse
	must.NoError(t, s.RPC("Search.PrefixSearch", &structs.SearchRequest{Prefix: job.ID[:len(job.ID)-2],
		Context: structs.SearchContextJobs}, &prefix))
	must.Eq(t, []string{job.ID}, prefix.Matches[structs.SearchContextJobs])
	must.False(t, prefix.Truncations[structs.SearchContextJobs])
	must.Positive(t, prefix.Index)

	var all structs.SearchResponse
	must.NoError(t, s.RPC("Search.PrefixSearch", &structs.SearchRequest{Prefix: "def", Context: structs.SearchContextAll}, &all))
	must.Eq(t, []string{"default"}, all.Matches[structs.SearchContextNamespaces])
	must.Eq(t, []string{"default"}, all.Matches[structs.SearchContextNodePools])

	err := s.RPC("Search.PrefixSearch", &structs.SearchRequest{Prefix: "x", Context: "quotas"}, &prefix)
	must.ErrorContains(t, err, `context must be one of`)

	var fuzzy structs.FuzzySearchResponse
	must.NoError(t, s.RPC("Search.FuzzySearch", &structs.FuzzySearchRequest{Text: "BIN", Context: structs.SearchContextAll}, &fuzzy))
	cmds := fuzzy.Matches[structs.SearchContextCommands]
	must.Len(t, 1, cmds)
	tg := job.TaskGroups[0]
	must.Eq(t, structs.FuzzyMatch{ID: "/bin/sleep", Scope: []string{job.Namespace, job.ID, tg.Name, tg.Tasks[0].Name}}, cmds[0])

	err = s.RPC("Search.FuzzySearch", &structs.FuzzySearchRequest{Text: "b", Context: structs.SearchContextAll}, &fuzzy)
	must.ErrorContains(t, err, "fuzzy search query must be at least 2 characters, got 1")
}

func TestSearchEndpoint_FiltersByToken(t *testing.T) {
	s, root := newBootstrappedACLServer(t, nil)
	job := mock.Job()
	var reg structs.JobRegisterResponse
	must.NoError(t, s.RPC("Job.Register", &structs.JobRegisterRequest{Job: job, WriteRequest: asTokenWrite(root.SecretID)}, &reg))

	// Anonymous: one unreadable context is refused, "all" finds nothing.
	var out structs.SearchResponse
	err := s.RPC("Search.PrefixSearch", &structs.SearchRequest{Prefix: job.ID, Context: structs.SearchContextJobs}, &out)
	must.ErrorIs(t, err, structs.ErrPermissionDenied)
	must.NoError(t, s.RPC("Search.PrefixSearch", &structs.SearchRequest{Prefix: job.ID, Context: structs.SearchContextAll}, &out))
	must.SliceEmpty(t, out.Matches[structs.SearchContextJobs])

	must.NoError(t, s.RPC("Search.PrefixSearch", &structs.SearchRequest{Prefix: job.ID, Context: structs.SearchContextJobs,
		QueryOptions: asTokenQuery(root.SecretID)}, &out))
	must.Eq(t, []string{job.ID}, out.Matches[structs.SearchContextJobs])
}
