package command

import (
	"testing"
	"time"

	"github.com/opennomad/nomad/api"
)

// Builders for diffs, to keep the cases readable.
func fd(typ, name, old, new string, ann ...string) *api.FieldDiff {
	return &api.FieldDiff{Type: typ, Name: name, Old: old, New: new, Annotations: ann}
}

func od(typ, name string, fields []*api.FieldDiff, objs ...*api.ObjectDiff) *api.ObjectDiff {
	return &api.ObjectDiff{Type: typ, Name: name, Fields: fields, Objects: objs}
}

const (
	added   = api.DiffTypeAdded
	deleted = api.DiffTypeDeleted
	edited  = api.DiffTypeEdited
	none    = api.DiffTypeNone
)

// editedDiff changes a job-level field, adds a constraint, edits a group
// (count and a task's driver and config), keeps one group and deletes
// another.
func editedDiff() *api.JobDiff {
	return &api.JobDiff{
		Type: edited, ID: "web",
		Fields: []*api.FieldDiff{fd(edited, "Priority", "50", "70")},
		Objects: []*api.ObjectDiff{od(added, "Constraint", []*api.FieldDiff{
			fd(added, "LTarget", "", "${attr.kernel.name}"), fd(added, "Operand", "", "="), fd(added, "RTarget", "", "linux"),
		})},
		TaskGroups: []*api.TaskGroupDiff{
			{
				Type: edited, Name: "web",
				Fields:  []*api.FieldDiff{fd(edited, "Count", "1", "3", "forces create")},
				Updates: map[string]uint64{"create": 2, "in-place update": 1},
				Tasks: []*api.TaskDiff{
					{
						Type: edited, Name: "server", Annotations: []string{"forces create/destroy update"},
						Fields: []*api.FieldDiff{fd(edited, "Driver", "exec", "raw_exec")},
						Objects: []*api.ObjectDiff{od(edited, "Config", []*api.FieldDiff{
							fd(edited, "command", "/bin/sleep", "/bin/true"), fd(none, "args[0]", "1000", "1000"),
						})},
					},
					{Type: none, Name: "sidecar"},
				},
			},
			{Type: none, Name: "cache", Updates: map[string]uint64{"ignore": 1}},
			{
				Type: deleted, Name: "old", Updates: map[string]uint64{"destroy": 1},
				Fields: []*api.FieldDiff{fd(deleted, "Count", "1", "")},
				Tasks:  []*api.TaskDiff{{Type: deleted, Name: "x", Annotations: []string{"forces destroy"}}},
			},
		},
	}
}

func TestFormatJobDiff(t *testing.T) {
	cases := []struct {
		name    string
		diff    *api.JobDiff
		verbose bool
		want    string
	}{
		{
			name: "added job shows headers only",
			diff: &api.JobDiff{Type: added, ID: "web",
				Fields: []*api.FieldDiff{fd(added, "Priority", "", "50")},
				TaskGroups: []*api.TaskGroupDiff{{Type: added, Name: "web", Updates: map[string]uint64{"create": 2},
					Fields: []*api.FieldDiff{fd(added, "Count", "", "2")},
					Tasks:  []*api.TaskDiff{{Type: added, Name: "server", Annotations: []string{"forces create"}}}}}},
			want: `+ Job: "web"
+ Task Group: "web" (2 create)
  + Task: "server" (forces create)`,
		},
		{
			name: "added job with -verbose shows its fields",
			diff: &api.JobDiff{Type: added, ID: "web",
				Fields: []*api.FieldDiff{fd(added, "Priority", "", "50"), fd(added, "Type", "", "service")},
				TaskGroups: []*api.TaskGroupDiff{{Type: added, Name: "web", Updates: map[string]uint64{"create": 2},
					Fields: []*api.FieldDiff{fd(added, "Count", "", "2")}}}},
			verbose: true,
			want: `+ Job: "web"
+ Priority: "50"
+ Type:     "service"
+ Task Group: "web" (2 create)
  + Count: "2"`,
		},
		{
			name: "edits, additions, deletions and context aligned by marker and value",
			diff: editedDiff(),
			want: `+/- Job: "web"
+/- Priority: "50" => "70"
+   Constraint {
    + LTarget: "${attr.kernel.name}"
    + Operand: "="
    + RTarget: "linux"
    }
+/- Task Group: "web" (2 create, 1 in-place update)
  +/- Count: "1" => "3" (forces create)
  +/- Task: "server" (forces create/destroy update)
    +/- Driver: "exec" => "raw_exec"
    +/- Config {
      +/- command: "/bin/sleep" => "/bin/true"
          args[0]: "1000"
        }
      Task: "sidecar"
    Task Group: "cache" (1 ignore)
-   Task Group: "old" (1 destroy)
  - Task: "x" (forces destroy)`,
		},
		{
			name: "unchanged job",
			diff: &api.JobDiff{Type: none, ID: "web", TaskGroups: []*api.TaskGroupDiff{
				{Type: none, Name: "web", Updates: map[string]uint64{"ignore": 3}}}},
			want: `Job: "web"
Task Group: "web" (3 ignore)`,
		},
		{
			name: "values with quotes and newlines stay on one line",
			diff: &api.JobDiff{Type: edited, ID: "web",
				Fields: []*api.FieldDiff{fd(edited, "Meta[note]", "say \"hi\"", "two\nlines")}},
			want: `+/- Job: "web"
+/- Meta[note]: "say \"hi\"" => "two\nlines"`,
		},
		{
			name: "nested objects indent and close under their names",
			diff: &api.JobDiff{Type: edited, ID: "web", TaskGroups: []*api.TaskGroupDiff{{Type: edited, Name: "g",
				Objects: []*api.ObjectDiff{od(edited, "Network", nil,
					od(added, "Port", []*api.FieldDiff{fd(added, "Label", "", "http"), fd(added, "To", "", "8080")}))}}}},
			want: `+/- Job: "web"
+/- Task Group: "g"
  +/- Network {
      + Port {
        + Label: "http"
        + To:    "8080"
        }
      }`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := formatJobDiff(tc.diff, tc.verbose)
			if got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

func TestPlanExitCode(t *testing.T) {
	cases := []struct {
		name string
		u    *api.DesiredUpdates
		want int
	}{
		{"nothing", &api.DesiredUpdates{}, 0},
		{"ignore only", &api.DesiredUpdates{Ignore: 3}, 0},
		{"in-place only", &api.DesiredUpdates{InPlaceUpdate: 2, Ignore: 1}, 0},
		{"place", &api.DesiredUpdates{Place: 1}, 1},
		{"stop", &api.DesiredUpdates{Stop: 1}, 1},
		{"migrate", &api.DesiredUpdates{Migrate: 1}, 1},
		{"destructive", &api.DesiredUpdates{DestructiveUpdate: 1}, 1},
		{"canary", &api.DesiredUpdates{Canary: 1}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp := &api.JobPlanResponse{Annotations: &api.PlanAnnotations{DesiredTGUpdates: map[string]*api.DesiredUpdates{"g": tc.u}}}
			if got := planExitCode(resp); got != tc.want {
				t.Errorf("exit code %d, want %d", got, tc.want)
			}
		})
	}
	if planExitCode(&api.JobPlanResponse{}) != 0 {
		t.Error("a plan without annotations must exit 0")
	}
}

func TestJobPlan(t *testing.T) {
	const hcl = "job.nomad.hcl"
	files := map[string]string{hcl: testJobHCL("web", 2, 256)}
	runCases(t, []cmdCase{
		{
			name:     "new job: diff, dry run, check-index hint, exit 1",
			setup:    addNode,
			files:    files,
			args:     []string{"job", "plan", "{dir}/" + hcl},
			wantCode: 1,
			wantOut: `+ Job: "web"
+ Task Group: "web" (2 create)
  + Task: "server" (forces create)

Scheduler dry-run:
- All tasks successfully allocated.

Job Modify Index: 0
To run the job only if it is unchanged since this plan:

nomad job run -check-index 0 {dir}/job.nomad.hcl

With -check-index the servers register the job only if its modify index
is still 0. If it changed, someone else updated the job after this plan
and the plan above may no longer describe what the run would do.`,
		},
		{
			name: "unchanged job exits 0 with its modify index",
			setup: func(t *testing.T, c testCluster) {
				addNode(t, c)
				registerJob(t, c, testJob("web", 2, 256))
				c.Settle(t)
			},
			files:    files,
			args:     []string{"plan", "{dir}/" + hcl},
			wantCode: 0,
			outHas: []string{"Job: \"web\"\nTask Group: \"web\" (2 ignore)\n  Task: \"server\"\n\nScheduler dry-run:\n- All tasks successfully allocated.",
				"nomad job run -check-index "},
		},
		{
			name:     "placement failures are explained",
			files:    files,
			args:     []string{"job", "plan", "{dir}/" + hcl},
			wantCode: 1,
			// The fake also says no node is available in datacenter dc1.
			outHas: []string{`Scheduler dry-run:
- WARNING: Failed to place all allocations.
  Task Group "web" (failed to place 2 allocations):
`, `
    * Node pool "default" has no nodes
    * No nodes were eligible for evaluation
    Why: No ready, eligible node exists`},
		},
		{
			name:     "-diff=false skips the diff",
			setup:    addNode,
			files:    files,
			args:     []string{"job", "plan", "-diff=false", "{dir}/" + hcl},
			wantCode: 1,
			outNot:   []string{"Job: \"web\""},
			outHas:   []string{"Scheduler dry-run:"},
		},
		{
			name:     "an edited job renders the server's diff with annotations",
			fakeOnly: true,
			setup: func(t *testing.T, c testCluster) {
				c.fake().plan = func(f *fakeAgent, job *api.Job) *api.JobPlanResponse {
					return &api.JobPlanResponse{
						JobModifyIndex: 42, Diff: editedDiff(),
						Annotations: &api.PlanAnnotations{
							DesiredTGUpdates: map[string]*api.DesiredUpdates{"web": {Place: 2, InPlaceUpdate: 1}},
							PreemptedAllocs: []*api.AllocationListStub{{ID: "aaaa0009-0000-4000-8000-000000000009",
								JobID: "batch-low", NodeID: "bbbb0001-0000-4000-8000-000000000001", TaskGroup: "work"}},
						},
						CreatedEvals: []*api.Evaluation{{ID: "e", WaitUntil: fakeEpoch.Add(time.Hour + 30*time.Second)}},
						Warnings:     "group \"web\": update block is ignored for batch jobs",
					}
				}
			},
			files:    files,
			args:     []string{"job", "plan", "{dir}/" + hcl},
			wantCode: 1,
			outHas: []string{
				"+/- Task Group: \"web\" (2 create, 1 in-place update)\n  +/- Count: \"1\" => \"3\" (forces create)",
				"- All tasks successfully allocated.\n- Rolling update, next evaluation will be in 30s.",
				"- Preemptions: these allocations would be stopped to make room:\n  ID        Job ID     Node ID   Task Group\n  <id>  batch-low  <id>  work",
				"Job Modify Index: 42",
				"nomad job run -check-index 42 {dir}/job.nomad.hcl",
			},
			errHas: []string{"Job Warnings:\n* group \"web\": update block is ignored for batch jobs"},
		},
		{name: "no argument exits 255", args: []string{"job", "plan"}, wantCode: 255,
			errHas: []string{"This command takes one argument: <path>"}},
		{name: "bad flag exits 255", args: []string{"job", "plan", "-nope", "x"}, wantCode: 255,
			errHas: []string{"flag provided but not defined: -nope"}},
		{name: "unparsable file exits 255", files: map[string]string{hcl: "job {"}, args: []string{"job", "plan", "{dir}/" + hcl},
			wantCode: 255, errHas: []string{"Error getting job struct", "{dir}/" + hcl + ":1"}},
		{name: "server error exits 255",
			files:    map[string]string{"job.json": `{"Job":{"ID":"empty"}}`},
			args:     []string{"job", "plan", "-json", "{dir}/job.json"},
			wantCode: 255,
			errHas:   []string{"Error during plan: Unexpected response code: 400", "job task groups"}},
	})
}
