package command

import (
	"strings"
	"testing"

	"github.com/opennomad/nomad/api"
)

// The job operations run against the real agent only: the fake does not
// serve them.
var realOnly = map[string]func(t testing.TB) testCluster{"real": newRealAgent}

// twoVersions registers job "web" twice, with memory 256 then 300, on a
// cluster with one node.
func twoVersions(t *testing.T, c testCluster) {
	c.AddNode(t, &api.Node{Name: "node-1"})
	registerJob(t, c, testJob("web", 1, 256))
	registerJob(t, c, testJob("web", 1, 300))
	c.Settle(t)
}

// batchWeb is job "web" as a batch job with one group of one: it gets no
// deployment, which would block scaling while it runs.
func batchWeb(t *testing.T, c testCluster) {
	c.AddNode(t, &api.Node{Name: "node-1"})
	job := testJob("web", 1, 64)
	job.Type = new(api.JobTypeBatch)
	registerJob(t, c, job)
	c.Settle(t)
}

func apiClient(t *testing.T, c testCluster) *api.Client {
	t.Helper()
	client, err := api.NewClient(&api.Config{Address: c.Addr()})
	if err != nil {
		t.Fatal(err)
	}
	return client
}

func TestJobRevert(t *testing.T) {
	runCasesOn(t, realOnly, []cmdCase{
		{
			name:   "revert follows the evaluation and registers version 2",
			setup:  twoVersions,
			args:   []string{"job", "revert", "web", "0"},
			outHas: []string{`==> <time>: Monitoring evaluation "<id>"`, `finished with status "complete"`},
			check: func(t *testing.T, c testCluster, res cmdResult) {
				job := readJob(t, c, "web")
				if *job.Version != 2 || *job.TaskGroups[0].Tasks[0].Resources.MemoryMB != 256 {
					t.Errorf("version %d with %d MB, want version 2 with 256 MB", *job.Version,
						*job.TaskGroups[0].Tasks[0].Resources.MemoryMB)
				}
			},
		},
		{
			name:    "detach prints the evaluation ID",
			setup:   twoVersions,
			args:    []string{"job", "revert", "-detach", "web", "0"},
			wantOut: "Evaluation ID: <id>",
		},
		{
			name: "a tag names the version",
			setup: func(t *testing.T, c testCluster) {
				twoVersions(t, c)
				if _, err := apiClient(t, c).Jobs().TagVersion("web", 0, "golden", "", nil); err != nil {
					t.Fatal(err)
				}
			},
			args: []string{"job", "revert", "-detach", "web", "golden"},
			check: func(t *testing.T, c testCluster, res cmdResult) {
				if job := readJob(t, c, "web"); *job.TaskGroups[0].Tasks[0].Resources.MemoryMB != 256 {
					t.Error("not reverted to the tagged version")
				}
			},
		},
		{
			name:     "the current version is refused",
			setup:    twoVersions,
			args:     []string{"job", "revert", "web", "1"},
			wantCode: 1,
			errHas:   []string{"can't revert to current version"},
		},
		{
			name:     "an unknown tag",
			setup:    twoVersions,
			args:     []string{"job", "revert", "web", "nope"},
			wantCode: 1,
			errHas:   []string{"Error retrieving job versions: version tag nope not found for job web"},
		},
		{
			name:     "two arguments",
			args:     []string{"job", "revert", "web"},
			wantCode: 1,
			errHas:   []string{"This command takes two arguments: <job> <version|tag>"},
		},
	})
}

func TestJobScale(t *testing.T) {
	twoGroups := func(t *testing.T, c testCluster) {
		c.AddNode(t, &api.Node{Name: "node-1"})
		job := testJob("multi", 1, 64)
		job.Type = new(api.JobTypeBatch)
		second := *job.TaskGroups[0]
		second.Name = new("db")
		job.TaskGroups = append(job.TaskGroups, &second)
		registerJob(t, c, job)
		c.Settle(t)
	}
	runCasesOn(t, realOnly, []cmdCase{
		{
			name:   "the only group is implied",
			setup:  batchWeb,
			args:   []string{"job", "scale", "web", "2"},
			outHas: []string{`==> <time>: Monitoring evaluation "<id>"`, `Evaluation triggered by job "web"`},
			check: func(t *testing.T, c testCluster, res cmdResult) {
				if job := readJob(t, c, "web"); *job.TaskGroups[0].Count != 2 {
					t.Errorf("count %d, want 2", *job.TaskGroups[0].Count)
				}
			},
		},
		{
			name:    "detach with a named group",
			setup:   batchWeb,
			args:    []string{"job", "scale", "-detach", "web", "web", "0"},
			wantOut: "Evaluation ID: <id>",
		},
		{
			name:     "several groups need a name",
			setup:    twoGroups,
			args:     []string{"job", "scale", "multi", "3"},
			wantCode: 1,
			errHas:   []string{"Group name required"},
		},
		{
			name:     "a missing group",
			setup:    twoGroups,
			args:     []string{"job", "scale", "multi", "cache", "3"},
			wantCode: 1,
			errHas:   []string{"Group cache not found within job"},
		},
		{
			name:     "a count that is no number",
			args:     []string{"job", "scale", "web", "many"},
			wantCode: 1,
			errHas:   []string{"Failed to convert count string to int"},
		},
		{
			name:     "argument count",
			args:     []string{"job", "scale", "web"},
			wantCode: 1,
			errHas:   []string{"Command requires at least two arguments and no more than three"},
		},
	})
}

func TestJobScalingEvents(t *testing.T) {
	runCasesOn(t, realOnly, []cmdCase{
		{
			name:    "none yet",
			setup:   runningJob("web", 1),
			args:    []string{"job", "scaling-events", "web"},
			wantOut: "No events found",
		},
		{
			name: "events newest first",
			setup: func(t *testing.T, c testCluster) {
				batchWeb(t, c)
				client := apiClient(t, c)
				two := 2
				if _, _, err := client.Jobs().Scale("web", "web", &two, "up", false, nil, nil); err != nil {
					t.Fatal(err)
				}
				if _, _, err := client.Jobs().Scale("web", "web", nil, "autoscaler failed", true, nil, nil); err != nil {
					t.Fatal(err)
				}
			},
			args: []string{"job", "scaling-events", "-verbose", "web"},
			outHas: []string{"Task Group  Count  PrevCount  Error  Message            Eval ID",
				"web                2          true   autoscaler failed",
				"web         2      1          false  up                 <id>"},
		},
	})
}

func TestJobTag(t *testing.T) {
	runCasesOn(t, realOnly, []cmdCase{
		{
			name:    "apply tags the current version, history shows it",
			setup:   twoVersions,
			args:    []string{"job", "tag", "apply", "-name", "golden", "-description", "known good", "web"},
			wantOut: `Job version 1 tagged with name "golden"`,
			check: func(t *testing.T, c testCluster, res cmdResult) {
				out := runCommand(t, c.Addr(), runOpts{}, "job", "history", "web")
				for _, want := range []string{"Tag Name        = golden", "Tag Description = known good"} {
					if !strings.Contains(out.stdout, want) {
						t.Errorf("history lacks %q:\n%s", want, out.stdout)
					}
				}
			},
		},
		{
			name:    "apply a given version",
			setup:   twoVersions,
			args:    []string{"job", "tag", "apply", "-name", "old", "-version", "0", "web"},
			wantOut: `Job version 0 tagged with name "old"`,
		},
		{
			name: "a name is unique per job",
			setup: func(t *testing.T, c testCluster) {
				twoVersions(t, c)
				if _, err := apiClient(t, c).Jobs().TagVersion("web", 0, "golden", "", nil); err != nil {
					t.Fatal(err)
				}
			},
			args:     []string{"job", "tag", "apply", "-name", "golden", "-version", "1", "web"},
			wantCode: 1,
			errHas:   []string{`tag "golden" already exists on a different version of job "web"`},
		},
		{
			name:     "a missing version",
			setup:    twoVersions,
			args:     []string{"job", "tag", "apply", "-name", "x", "-version", "9", "web"},
			wantCode: 1,
			errHas:   []string{`job "web" version 9 not found`},
		},
		{
			name:     "a name is required",
			args:     []string{"job", "tag", "apply", "web"},
			wantCode: 1,
			errHas:   []string{"A version tag name is required"},
		},
		{
			name: "unset removes the tag",
			setup: func(t *testing.T, c testCluster) {
				twoVersions(t, c)
				if _, err := apiClient(t, c).Jobs().TagVersion("web", 0, "golden", "", nil); err != nil {
					t.Fatal(err)
				}
			},
			args:    []string{"job", "tag", "unset", "-name", "golden", "web"},
			wantOut: `Tag "golden" removed from job "web"`,
			check: func(t *testing.T, c testCluster, res cmdResult) {
				if _, _, err := apiClient(t, c).Jobs().VersionByTag("web", "golden", nil); err == nil {
					t.Error("tag still there")
				}
			},
		},
		{
			name:     "unset of a missing tag",
			setup:    twoVersions,
			args:     []string{"job", "tag", "unset", "-name", "nope", "web"},
			wantCode: 1,
			errHas:   []string{`tag "nope" not found on job "web"`},
		},
	})
}
