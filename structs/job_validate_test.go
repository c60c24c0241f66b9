package structs_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// Problem paths of the fixture's group and task.
const (
	grp  = `group "web"`
	task = `group "web": task "web"`
)

func serviceJob() *structs.Job  { return mock.Job(mock.JobID("example")) }
func batchJob() *structs.Job    { return mock.BatchJob(mock.JobID("example")) }
func systemJob() *structs.Job   { return mock.SystemJob(mock.JobID("example")) }
func sysbatchJob() *structs.Job { return mock.SysBatchJob(mock.JobID("example")) }

func tg0(j *structs.Job) *structs.TaskGroup { return j.TaskGroups[0] }
func task0(j *structs.Job) *structs.Task    { return j.TaskGroups[0].Tasks[0] }

type validationCase struct {
	name   string
	base   func() *structs.Job // serviceJob when nil
	mutate func(j *structs.Job)
	// want lists every expected problem; each entry must be a prefix of
	// exactly one problem, and no other problem may be reported.
	want []string
}

func runValidationCases(t *testing.T, cases []validationCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			base := tc.base
			if base == nil {
				base = serviceJob
			}
			j := base()
			tc.mutate(j)
			err := j.Validate()
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("want valid, got %v", err)
				}
				return
			}
			var verr *structs.ValidationError
			if !errors.As(err, &verr) {
				t.Fatalf("want *ValidationError, got %v", err)
			}
			assertProblems(t, verr.Problems, tc.want)
		})
	}
}

func assertProblems(t *testing.T, got, want []string) {
	t.Helper()
	used := make([]bool, len(got))
	for _, w := range want {
		found := false
		for i, g := range got {
			if !used[i] && strings.HasPrefix(g, w) {
				used[i], found = true, true
				break
			}
		}
		if !found {
			t.Errorf("missing problem %q", w)
		}
	}
	for i, g := range got {
		if !used[i] {
			t.Errorf("unexpected problem %q", g)
		}
	}
	if t.Failed() {
		t.Logf("all problems:\n  %s", strings.Join(got, "\n  "))
	}
}

func TestValidate_FixturesAreValid(t *testing.T) {
	for name, j := range map[string]*structs.Job{
		"service": serviceJob(), "batch": batchJob(), "system": systemJob(), "sysbatch": sysbatchJob(),
	} {
		if err := j.Validate(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestValidate_NilJob(t *testing.T) {
	var j *structs.Job
	if err := j.Validate(); err == nil || err.Error() != "missing job" {
		t.Fatalf("got %v", err)
	}
}

func TestValidate_Job(t *testing.T) {
	runValidationCases(t, []validationCase{
		{"missing id", nil, func(j *structs.Job) { j.ID = "" }, []string{"missing job ID"}},
		{"id too long", nil, func(j *structs.Job) { j.ID = strings.Repeat("a", 129) },
			[]string{"job ID must be at most 128 characters, got 129"}},
		{"id with space", nil, func(j *structs.Job) { j.ID = "my job" },
			[]string{`job ID "my job" must not contain spaces or null characters`}},
		{"id with null", nil, func(j *structs.Job) { j.ID = "a\x00b" },
			[]string{`job ID "a\x00b" must not contain spaces or null characters`}},
		{"id with tab, newline and slash, as Nomad accepts", nil,
			func(j *structs.Job) { j.ID = "job-id/with\troublesome:characters\n?&字" }, nil},
		{"missing name", nil, func(j *structs.Job) { j.Name = "" }, []string{"missing job name"}},
		{"name with null", nil, func(j *structs.Job) { j.Name = "a\x00" }, []string{"job name must not contain null characters"}},
		{"missing namespace", nil, func(j *structs.Job) { j.Namespace = "" }, []string{"missing job namespace"}},
		{"missing region", nil, func(j *structs.Job) { j.Region = "" }, []string{"missing job region"}},
		{"missing type", nil, func(j *structs.Job) { j.Type = "" }, []string{"missing job type"}},
		{"unknown type", nil, func(j *structs.Job) { j.Type = "daemon" },
			[]string{`invalid job type "daemon": must be one of service, batch, system, sysbatch`}},
		{"priority zero", nil, func(j *structs.Job) { j.Priority = 0 }, []string{"job priority must be between [1, 100], got 0"}},
		{"priority too high", nil, func(j *structs.Job) { j.Priority = 101 }, []string{"job priority must be between [1, 100], got 101"}},
		{"priority bounds are valid", nil, func(j *structs.Job) { j.Priority = 100 }, nil},
		{"missing datacenters", nil, func(j *structs.Job) { j.Datacenters = nil }, []string{"missing job datacenters"}},
		{"empty datacenter", nil, func(j *structs.Job) { j.Datacenters = []string{"dc1", ""} },
			[]string{"job datacenter must be non-empty"}},
		{"datacenter glob is valid", nil, func(j *structs.Job) { j.Datacenters = []string{"us-*"} }, nil},
		{"missing node pool", nil, func(j *structs.Job) { j.NodePool = "" }, []string{"missing job node pool"}},
		{"bad node pool", nil, func(j *structs.Job) { j.NodePool = "gpu pool" }, []string{`invalid node pool "gpu pool"`}},
		{"node pool all is valid", nil, func(j *structs.Job) { j.NodePool = structs.NodePoolAll }, nil},
		{"no groups", nil, func(j *structs.Job) { j.TaskGroups = nil }, []string{"missing job task groups"}},
		{"bad job constraint", nil, func(j *structs.Job) {
			j.Constraints = append(j.Constraints, &structs.Constraint{LTarget: "${attr.a}", RTarget: "b", Operand: "~"})
		}, []string{`constraint 2: unknown operator "~"`}},
		{"nil job constraint", nil, func(j *structs.Job) { j.Constraints = []*structs.Constraint{nil} },
			[]string{"constraint 1: constraint is empty"}},
		{"bad job affinity", nil, func(j *structs.Job) {
			j.Affinities = []*structs.Affinity{{LTarget: "${node.class}", RTarget: "large", Operand: "=", Weight: 0}}
		}, []string{"affinity 1: weight must not be zero"}},
		{"nil job affinity", nil, func(j *structs.Job) { j.Affinities = []*structs.Affinity{nil} },
			[]string{"affinity 1: affinity is empty"}},
		{"bad job spread", nil, func(j *structs.Job) {
			j.Spreads = []*structs.Spread{{Attribute: "", Weight: 50}}
		}, []string{"spread 1: missing spread attribute"}},
		{"nil job spread", nil, func(j *structs.Job) { j.Spreads = []*structs.Spread{nil} },
			[]string{"spread 1: spread is empty"}},
		{"system affinity", systemJob, func(j *structs.Job) {
			j.Affinities = []*structs.Affinity{{LTarget: "${node.class}", RTarget: "large", Operand: "=", Weight: 50}}
		}, []string{"system jobs may not have an affinity block"}},
		{"sysbatch spread", sysbatchJob, func(j *structs.Job) {
			j.Spreads = []*structs.Spread{{Attribute: "${node.datacenter}", Weight: 50}}
		}, []string{"sysbatch jobs may not have a spread block"}},
	})
}

func TestValidate_PeriodicAndParameterized(t *testing.T) {
	cron := func(spec string) func(j *structs.Job) {
		return func(j *structs.Job) {
			j.Periodic = &structs.PeriodicConfig{Enabled: true, Spec: spec, SpecType: structs.PeriodicSpecCron}
		}
	}
	runValidationCases(t, []validationCase{
		{"periodic batch is valid", batchJob, cron("*/5 * * * *"), nil},
		{"periodic sysbatch is valid", sysbatchJob, cron("@hourly"), nil},
		{"periodic service", nil, cron("*/5 * * * *"),
			[]string{`periodic: periodic can only be used with "batch" or "sysbatch" jobs`}},
		{"bad cron", batchJob, cron("every minute"), []string{`periodic: invalid cron spec "every minute": `}},
		{"missing spec", batchJob, cron(""), []string{"periodic: must specify a cron spec"}},
		{"several specs, one bad", batchJob, func(j *structs.Job) {
			j.Periodic = &structs.PeriodicConfig{Enabled: true, Specs: []string{"@daily", "61 * * * *"}}
		}, []string{`periodic: invalid cron spec "61 * * * *": `}},
		{"unknown spec type", batchJob, func(j *structs.Job) {
			j.Periodic = &structs.PeriodicConfig{Enabled: true, Spec: "@daily", SpecType: "test"}
		}, []string{`periodic: unknown spec type "test": only "cron" is supported`}},
		{"bad time zone", batchJob, func(j *structs.Job) {
			j.Periodic = &structs.PeriodicConfig{Enabled: true, Spec: "@daily", TimeZone: "Mars/Olympus"}
		}, []string{`periodic: invalid time zone "Mars/Olympus": `}},
		{"good time zone", batchJob, func(j *structs.Job) {
			j.Periodic = &structs.PeriodicConfig{Enabled: true, Spec: "@daily", TimeZone: "Europe/Paris"}
		}, nil},
		{"disabled periodic is not checked", nil, func(j *structs.Job) {
			j.Periodic = &structs.PeriodicConfig{Enabled: false, Spec: "garbage"}
		}, nil},
		{"parameterized batch is valid", batchJob, func(j *structs.Job) {
			j.ParameterizedJob = &structs.ParameterizedJobConfig{Payload: structs.DispatchPayloadRequired,
				MetaRequired: []string{"a"}, MetaOptional: []string{"b"}}
		}, nil},
		{"parameterized service", nil, func(j *structs.Job) {
			j.ParameterizedJob = &structs.ParameterizedJobConfig{}
		}, []string{`parameterized: parameterized job must be of type "batch" or "sysbatch"`}},
		{"bad payload", batchJob, func(j *structs.Job) {
			j.ParameterizedJob = &structs.ParameterizedJobConfig{Payload: "sometimes"}
		}, []string{`parameterized: unknown payload requirement "sometimes": must be optional, required or forbidden`}},
		{"meta key twice", batchJob, func(j *structs.Job) {
			j.ParameterizedJob = &structs.ParameterizedJobConfig{MetaRequired: []string{"a"}, MetaOptional: []string{"a"}}
		}, []string{`parameterized: meta key "a" is listed more than once in meta_required and meta_optional`}},
	})
}

func TestValidate_Group(t *testing.T) {
	affinity := []*structs.Affinity{{LTarget: "${node.class}", RTarget: "large", Operand: "=", Weight: 50}}
	runValidationCases(t, []validationCase{
		{"nil group", nil, func(j *structs.Job) { j.TaskGroups = append(j.TaskGroups, nil) },
			[]string{"group 2: group is empty"}},
		{"duplicate group", nil, func(j *structs.Job) { j.TaskGroups = append(j.TaskGroups, tg0(j).Copy()) },
			[]string{grp + ": group name is used more than once"}},
		{"unnamed group", nil, func(j *structs.Job) { tg0(j).Name = "" }, []string{"group 1: missing group name"}},
		{"negative count", nil, func(j *structs.Job) { tg0(j).Count = -1 }, []string{grp + ": count must be >= 0, got -1"}},
		{"zero count is valid", nil, func(j *structs.Job) { tg0(j).Count = 0 }, nil},
		{"system count 2", systemJob, func(j *structs.Job) { tg0(j).Count = 2 },
			[]string{`group "agent": count must be 0 or 1 for system jobs (one alloc per node), got 2`}},
		{"sysbatch count 2 is allowed", sysbatchJob, func(j *structs.Job) { tg0(j).Count = 2 }, nil},
		{"no tasks", nil, func(j *structs.Job) { tg0(j).Tasks = nil }, []string{grp + ": missing tasks"}},
		{"bad group constraint", nil, func(j *structs.Job) {
			tg0(j).Constraints = []*structs.Constraint{{LTarget: "${attr.a}", Operand: "="}}
		}, []string{grp + `: constraint 1: operator "=" requires a value`}},
		{"bad group affinity", nil, func(j *structs.Job) {
			tg0(j).Affinities = []*structs.Affinity{{LTarget: "${attr.a}", RTarget: "b", Operand: "=", Weight: 101}}
		}, []string{grp + ": affinity 1: weight must be within [-100, 100], got 101"}},
		{"bad group spread", nil, func(j *structs.Job) {
			tg0(j).Spreads = []*structs.Spread{{Attribute: "${node.datacenter}", Weight: 50, SpreadTarget: []*structs.SpreadTarget{
				{Value: "dc1", Percent: 60}, {Value: "dc2", Percent: 50}}}}
		}, []string{grp + ": spread 1: sum of spread target percentages must not exceed 100, got 110"}},
		{"system group affinity", systemJob, func(j *structs.Job) { tg0(j).Affinities = affinity },
			[]string{`group "agent": system jobs may not have affinity or spread blocks`}},
		{"missing ephemeral disk", nil, func(j *structs.Job) { tg0(j).EphemeralDisk = nil },
			[]string{grp + ": missing ephemeral disk"}},
		{"tiny ephemeral disk", nil, func(j *structs.Job) { tg0(j).EphemeralDisk.SizeMB = 5 },
			// 10 log files of 10 MB no longer fit either.
			[]string{grp + ": ephemeral_disk: size must be >= 10 MB, got 5"}},
		{"nil task", nil, func(j *structs.Job) { tg0(j).Tasks = append(tg0(j).Tasks, nil) },
			[]string{grp + ": task 2: task is empty"}},
		{"duplicate task", nil, func(j *structs.Job) { tg0(j).Tasks = append(tg0(j).Tasks, task0(j).Copy()) },
			[]string{task + ": task name is used more than once"}},
		{"two leaders", nil, func(j *structs.Job) {
			second := task0(j).Copy()
			second.Name = "sidecar"
			task0(j).Leader, second.Leader = true, true
			tg0(j).Tasks = append(tg0(j).Tasks, second)
		}, []string{grp + ": only one task may be the leader, got 2"}},
	})
}

func TestValidate_RestartPolicy(t *testing.T) {
	restart := func(f func(r *structs.RestartPolicy)) func(j *structs.Job) {
		return func(j *structs.Job) { f(tg0(j).RestartPolicy) }
	}
	runValidationCases(t, []validationCase{
		{"missing", nil, func(j *structs.Job) { tg0(j).RestartPolicy = nil }, []string{grp + ": missing restart policy"}},
		{"bad mode", nil, restart(func(r *structs.RestartPolicy) { r.Mode = "retry" }),
			[]string{grp + `: restart: unsupported restart mode "retry": must be "delay" or "fail"`}},
		{"negative attempts", nil, restart(func(r *structs.RestartPolicy) { r.Attempts = -1 }),
			[]string{grp + ": restart: attempts must be >= 0, got -1"}},
		{"delay mode without attempts", nil, restart(func(r *structs.RestartPolicy) { r.Attempts, r.Mode = 0, "delay" }),
			[]string{grp + `: restart: mode "delay" with 0 attempts is ambiguous`}},
		{"fail mode without attempts is valid", nil, restart(func(r *structs.RestartPolicy) { r.Attempts = 0 }), nil},
		{"negative delay", nil, restart(func(r *structs.RestartPolicy) { r.Delay = -time.Second }),
			[]string{grp + ": restart: delay must be >= 0, got -1s"}},
		{"short interval", nil, restart(func(r *structs.RestartPolicy) { r.Interval = time.Second }),
			// 2 attempts x 15s = 30s do not fit in 1s either.
			[]string{grp + ": restart: interval must be >= 5s, got 1s",
				grp + ": restart: 2 attempts with a 15s delay do not fit in the 1s interval"}},
		{"attempts do not fit", nil, restart(func(r *structs.RestartPolicy) {
			// 5 x 1m = 5m > 4m
			r.Attempts, r.Delay, r.Interval = 5, time.Minute, 4*time.Minute
		}), []string{grp + ": restart: 5 attempts with a 1m0s delay do not fit in the 4m0s interval"}},
		{"attempts fit exactly", nil, restart(func(r *structs.RestartPolicy) {
			// 4 x 1m = 4m <= 4m
			r.Attempts, r.Delay, r.Interval = 4, time.Minute, 4*time.Minute
		}), nil},
	})
}

func TestValidate_ReschedulePolicy(t *testing.T) {
	resched := func(p *structs.ReschedulePolicy) func(j *structs.Job) {
		return func(j *structs.Job) { tg0(j).ReschedulePolicy = p }
	}
	const rs = grp + ": reschedule: "
	runValidationCases(t, []validationCase{
		{"system job with policy", systemJob, func(j *structs.Job) {
			tg0(j).ReschedulePolicy = structs.DefaultReschedulePolicy(structs.JobTypeBatch)
		}, []string{`group "agent": system jobs may not have a reschedule policy`}},
		{"sysbatch job with disabled policy is valid", sysbatchJob, func(j *structs.Job) {
			tg0(j).ReschedulePolicy = &structs.ReschedulePolicy{}
		}, nil},
		{"disabled policy ignores other settings", nil, resched(&structs.ReschedulePolicy{DelayFunction: "bogus"}), nil},
		{"negative attempts", nil, resched(&structs.ReschedulePolicy{Attempts: -1}),
			[]string{rs + "attempts must be >= 0, got -1"}},
		{"bad delay function", nil, resched(&structs.ReschedulePolicy{Unlimited: true, Delay: time.Minute, DelayFunction: "linear"}),
			[]string{rs + `invalid delay_function "linear": must be constant, exponential or fibonacci`}},
		{"short delay", nil, resched(&structs.ReschedulePolicy{Unlimited: true, Delay: time.Second, DelayFunction: "constant"}),
			[]string{rs + "delay must be >= 5s, got 1s"}},
		{"max delay below delay", nil, resched(&structs.ReschedulePolicy{Unlimited: true, Delay: time.Minute,
			DelayFunction: "exponential", MaxDelay: 30 * time.Second}),
			[]string{rs + "max_delay (30s) must be >= delay (1m0s)"}},
		{"unlimited with attempts", nil, resched(&structs.ReschedulePolicy{Unlimited: true, Attempts: 3, Delay: time.Minute,
			DelayFunction: "constant"}), []string{rs + "attempts (3) must not be set when unlimited is true"}},
		{"short interval", batchJob, func(j *structs.Job) {
			tg0(j).ReschedulePolicy = &structs.ReschedulePolicy{Attempts: 1, Interval: 10 * time.Second, Delay: 5 * time.Second,
				DelayFunction: "constant"}
		}, []string{`group "worker": reschedule: interval must be >= 15s, got 10s`}},
		{"constant attempts do not fit", nil, resched(&structs.ReschedulePolicy{Attempts: 4, Interval: time.Minute,
			// 4 x 20s = 1m20s > 1m
			Delay: 20 * time.Second, DelayFunction: "constant"}),
			[]string{rs + "4 attempts with a constant 20s delay need an interval of at least 1m20s, got 1m0s"}},
		{"constant attempts fit exactly", nil, resched(&structs.ReschedulePolicy{Attempts: 3, Interval: time.Minute,
			// 3 x 20s = 1m
			Delay: 20 * time.Second, DelayFunction: "constant"}), nil},
		{"exponential attempt reaches interval", nil, resched(&structs.ReschedulePolicy{Attempts: 4, Interval: time.Minute,
			// delays 10s, 20s, 40s, 80s: the 4th is not < 1m
			Delay: 10 * time.Second, DelayFunction: "exponential", MaxDelay: time.Hour}),
			[]string{rs + "attempt 4 of 4 would wait 1m20s (exponential delay from 10s, max_delay 1h0m0s), not less than the 1m0s interval"}},
		{"exponential capped below interval", nil, resched(&structs.ReschedulePolicy{Attempts: 10, Interval: time.Minute,
			// delays 10s, 20s, 40s, 50s, 50s, ...: all < 1m
			Delay: 10 * time.Second, DelayFunction: "exponential", MaxDelay: 50 * time.Second}), nil},
		{"fibonacci attempt reaches interval", nil, resched(&structs.ReschedulePolicy{Attempts: 6, Interval: time.Minute,
			// delays 10s, 10s, 20s, 30s, 50s, 80s: the 6th is not < 1m
			Delay: 10 * time.Second, DelayFunction: "fibonacci", MaxDelay: time.Hour}),
			[]string{rs + "attempt 6 of 6 would wait 1m20s (fibonacci delay from 10s"}},
	})
}

func TestValidate_UpdateAndMigrate(t *testing.T) {
	update := func(f func(u *structs.UpdateStrategy)) func(j *structs.Job) {
		return func(j *structs.Job) {
			u := structs.DefaultUpdateStrategy()
			f(u)
			tg0(j).Update = u
		}
	}
	migrate := func(f func(m *structs.MigrateStrategy)) func(j *structs.Job) {
		return func(j *structs.Job) { f(tg0(j).Migrate) }
	}
	const up, mg = grp + ": update: ", grp + ": migrate: "
	runValidationCases(t, []validationCase{
		{"default update is valid", nil, update(func(*structs.UpdateStrategy) {}), nil},
		{"system update is valid", systemJob, func(j *structs.Job) { tg0(j).Update = structs.DefaultUpdateStrategy() }, nil},
		{"batch update", batchJob, func(j *structs.Job) { tg0(j).Update = structs.DefaultUpdateStrategy() },
			[]string{`group "worker": batch jobs may not have an update block`}},
		{"bad health check", nil, update(func(u *structs.UpdateStrategy) { u.HealthCheck = "ping" }),
			[]string{up + `invalid health_check "ping": must be checks, task_states or manual`}},
		{"negative max parallel", nil, update(func(u *structs.UpdateStrategy) { u.MaxParallel = -1 }),
			[]string{up + "max_parallel must be >= 0, got -1"}},
		{"negative canary", nil, update(func(u *structs.UpdateStrategy) { u.Canary = -1 }),
			[]string{up + "canary must be >= 0, got -1"}},
		{"auto promote without canary", nil, update(func(u *structs.UpdateStrategy) { u.AutoPromote = true }),
			[]string{up + "auto_promote requires canary > 0"}},
		{"negative min healthy time", nil, update(func(u *structs.UpdateStrategy) { u.MinHealthyTime = -time.Second }),
			[]string{up + "min_healthy_time must be >= 0, got -1s"}},
		{"zero healthy deadline", nil, update(func(u *structs.UpdateStrategy) { u.HealthyDeadline = 0 }),
			[]string{up + "healthy_deadline must be > 0, got 0s", up + "min_healthy_time (10s) must be less than healthy_deadline (0s)"}},
		{"negative progress deadline", nil, update(func(u *structs.UpdateStrategy) { u.ProgressDeadline = -time.Second }),
			[]string{up + "progress_deadline must be >= 0, got -1s", up + "healthy_deadline (5m0s) must be less than progress_deadline (-1s)"}},
		{"zero progress deadline is valid", nil, update(func(u *structs.UpdateStrategy) { u.ProgressDeadline = 0 }), nil},
		{"min healthy time reaches deadline", nil, update(func(u *structs.UpdateStrategy) { u.MinHealthyTime = 5 * time.Minute }),
			[]string{up + "min_healthy_time (5m0s) must be less than healthy_deadline (5m0s)"}},
		{"healthy deadline reaches progress", nil, update(func(u *structs.UpdateStrategy) { u.ProgressDeadline = 5 * time.Minute }),
			[]string{up + "healthy_deadline (5m0s) must be less than progress_deadline (5m0s)"}},
		{"zero stagger", nil, update(func(u *structs.UpdateStrategy) { u.Stagger = 0 }),
			[]string{up + "stagger must be > 0, got 0s"}},
		{"batch migrate", batchJob, func(j *structs.Job) { tg0(j).Migrate = structs.DefaultMigrateStrategy() },
			[]string{`group "worker": batch jobs may not have a migrate block`}},
		{"migrate negative max parallel", nil, migrate(func(m *structs.MigrateStrategy) { m.MaxParallel = -1 }),
			[]string{mg + "max_parallel must be >= 0, got -1"}},
		{"migrate manual health check", nil, migrate(func(m *structs.MigrateStrategy) { m.HealthCheck = "manual" }),
			[]string{mg + `invalid health_check "manual": must be checks or task_states`}},
		{"migrate negative min healthy", nil, migrate(func(m *structs.MigrateStrategy) { m.MinHealthyTime = -time.Second }),
			[]string{mg + "min_healthy_time must be >= 0, got -1s"}},
		{"migrate zero deadline", nil, migrate(func(m *structs.MigrateStrategy) { m.HealthyDeadline = 0 }),
			[]string{mg + "healthy_deadline must be > 0, got 0s", mg + "min_healthy_time (10s) must be less than healthy_deadline (0s)"}},
	})
}

func TestValidate_Task(t *testing.T) {
	res := func(f func(r *structs.Resources)) func(j *structs.Job) {
		return func(j *structs.Job) { f(task0(j).Resources) }
	}
	runValidationCases(t, []validationCase{
		{"unnamed task", nil, func(j *structs.Job) { task0(j).Name = "" }, []string{grp + ": task 1: missing task name"}},
		{"slash in name", nil, func(j *structs.Job) { task0(j).Name = "a/b" },
			[]string{grp + `: task "a/b": task name "a/b" must not contain slashes or null characters`}},
		{"missing driver", nil, func(j *structs.Job) { task0(j).Driver = "" }, []string{task + ": missing driver"}},
		{"negative kill timeout", nil, func(j *structs.Job) { task0(j).KillTimeout = -time.Second },
			[]string{task + ": kill_timeout must be >= 0, got -1s"}},
		{"distinct hosts on task", nil, func(j *structs.Job) {
			task0(j).Constraints = []*structs.Constraint{{Operand: structs.ConstraintDistinctHosts}}
		}, []string{task + ": constraint 1: distinct_hosts can only be used at the job or group level"}},
		{"distinct property on task", nil, func(j *structs.Job) {
			task0(j).Constraints = []*structs.Constraint{{LTarget: "${meta.rack}", Operand: structs.ConstraintDistinctProperty}}
		}, []string{task + ": constraint 1: distinct_property can only be used at the job or group level"}},
		{"distinct hosts on group is valid", nil, func(j *structs.Job) {
			tg0(j).Constraints = []*structs.Constraint{{Operand: structs.ConstraintDistinctHosts}}
		}, nil},
		{"bad task constraint", nil, func(j *structs.Job) {
			task0(j).Constraints = []*structs.Constraint{{LTarget: "${attr.a}", Operand: "regexp", RTarget: "("}}
		}, []string{task + `: constraint 1: regexp "(" does not compile: `}},
		{"bad task affinity", nil, func(j *structs.Job) {
			task0(j).Affinities = []*structs.Affinity{{LTarget: "${attr.a}", RTarget: "b", Operand: "=", Weight: -101}}
		}, []string{task + ": affinity 1: weight must be within [-100, 100], got -101"}},
		{"missing resources", nil, func(j *structs.Job) { task0(j).Resources = nil }, []string{task + ": missing resources"}},
		{"negative cpu", nil, res(func(r *structs.Resources) { r.CPU = -1 }), []string{task + ": cpu must be >= 0 MHz, got -1"}},
		{"negative cores", nil, res(func(r *structs.Resources) { r.Cores = -1 }), []string{task + ": cores must be >= 0, got -1"}},
		{"no cpu no cores", nil, res(func(r *structs.Resources) { r.CPU = 0 }),
			[]string{task + ": cpu must be > 0 MHz when no cores are requested"}},
		{"cores alone are valid", nil, res(func(r *structs.Resources) { r.CPU, r.Cores = 0, 2 }), nil},
		{"cpu and cores", nil, res(func(r *structs.Resources) { r.Cores = 2 }), []string{task + ": cpu and cores cannot both be set"}},
		{"no memory", nil, res(func(r *structs.Resources) { r.MemoryMB = 0 }), []string{task + ": memory must be >= 10 MB, got 0"}},
		{"memory max below memory", nil, res(func(r *structs.Resources) { r.MemoryMaxMB = 128 }),
			[]string{task + ": memory_max (128 MB) must be >= memory (256 MB)"}},
		{"memory max above memory is valid", nil, res(func(r *structs.Resources) { r.MemoryMaxMB = 512 }), nil},
		{"task disk", nil, res(func(r *structs.Resources) { r.DiskMB = 100 }),
			[]string{task + ": disk cannot be requested by a task, use the group's ephemeral_disk (got 100 MB)"}},
		{"negative iops", nil, res(func(r *structs.Resources) { r.IOPS = -1 }), []string{task + ": iops must be >= 0, got -1"}},
		{"zero log files", nil, func(j *structs.Job) { task0(j).LogConfig.MaxFiles = 0 },
			[]string{task + ": logs: max_files must be >= 1, got 0"}},
		{"zero log size", nil, func(j *structs.Job) { task0(j).LogConfig.MaxFileSizeMB = 0 },
			[]string{task + ": logs: max_file_size must be >= 1 MB, got 0"}},
		{"logs fill the disk", nil, func(j *structs.Job) { tg0(j).EphemeralDisk.SizeMB = 100 },
			// 10 files x 10 MB = 100 MB, not less than the 100 MB disk
			[]string{task + ": logs: log storage (100 MB) must be less than the group's ephemeral disk (100 MB)"}},
		{"logs leave room", nil, func(j *structs.Job) { tg0(j).EphemeralDisk.SizeMB = 101 }, nil},
		{"disabled logs are not checked", nil, func(j *structs.Job) {
			task0(j).LogConfig = &structs.LogConfig{Disabled: true}
		}, nil},
		{"bad lifecycle hook", nil, func(j *structs.Job) {
			task0(j).Lifecycle = &structs.TaskLifecycleConfig{Hook: "prerun"}
		}, []string{task + `: lifecycle: invalid hook "prerun": must be prestart, poststart or poststop`}},
		{"sidecar lifecycle is valid", nil, func(j *structs.Job) {
			task0(j).Lifecycle = &structs.TaskLifecycleConfig{Hook: structs.TaskLifecycleHookPrestart, Sidecar: true}
		}, nil},
		{"payload without file", batchJob, func(j *structs.Job) {
			task0(j).DispatchPayload = &structs.DispatchPayloadConfig{}
		}, []string{`group "worker": task "worker": dispatch_payload: missing file`}},
		{"payload escaping", batchJob, func(j *structs.Job) {
			task0(j).DispatchPayload = &structs.DispatchPayloadConfig{File: "../../etc/passwd"}
		}, []string{`group "worker": task "worker": dispatch_payload: file "../../etc/passwd" escapes the task directory`}},
		{"payload in task dir is valid", batchJob, func(j *structs.Job) {
			task0(j).DispatchPayload = &structs.DispatchPayloadConfig{File: "local/input.json"}
		}, nil},
	})
}

func TestValidate_Networks(t *testing.T) {
	net0 := func(j *structs.Job) *structs.NetworkResource { return tg0(j).Networks[0] }
	const nw = grp + ": network: "
	runValidationCases(t, []validationCase{
		{"two networks", nil, func(j *structs.Job) {
			tg0(j).Networks = append(tg0(j).Networks, &structs.NetworkResource{Mode: "host"})
		}, []string{grp + ": only one network block is allowed per group, got 2"}},
		{"nil network", nil, func(j *structs.Job) { tg0(j).Networks = structs.Networks{nil} },
			[]string{nw + "network is empty"}},
		{"bridge mode", nil, func(j *structs.Job) { net0(j).Mode = "bridge" },
			[]string{nw + `network mode "bridge" is not supported (use "host")`}},
		{"negative mbits", nil, func(j *structs.Job) { net0(j).MBits = -1 }, []string{nw + "mbits must be >= 0, got -1"}},
		{"empty label", nil, func(j *structs.Job) { net0(j).DynamicPorts[0].Label = "" },
			[]string{nw + "port label must not be empty"}},
		{"label twice in group", nil, func(j *structs.Job) {
			net0(j).ReservedPorts = []structs.Port{{Label: "http", Value: 8080}}
		}, []string{nw + `port label "http" is used more than once`}},
		{"label reused by a task", nil, func(j *structs.Job) {
			task0(j).Resources.Networks = structs.Networks{{DynamicPorts: []structs.Port{{Label: "http"}}}}
		}, []string{task + `: network: port label "http" is used more than once`}},
		{"static port zero", nil, func(j *structs.Job) {
			net0(j).ReservedPorts = []structs.Port{{Label: "admin", Value: 0}}
		}, []string{nw + `port "admin" static value 0 must be within [1, 65535]`}},
		{"static port too high", nil, func(j *structs.Job) {
			net0(j).ReservedPorts = []structs.Port{{Label: "admin", Value: 70000}}
		}, []string{nw + `port "admin" static value 70000 must be within [1, 65535]`}},
		{"static port twice", nil, func(j *structs.Job) {
			net0(j).ReservedPorts = []structs.Port{{Label: "a", Value: 8080}, {Label: "b", Value: 8080}}
		}, []string{nw + "static port 8080 is used more than once"}},
		{"bad mapped port", nil, func(j *structs.Job) { net0(j).DynamicPorts[0].To = -2 },
			[]string{nw + `port "http" mapped value -2 must be within [-1, 65535]`}},
		{"too many dynamic ports", nil, func(j *structs.Job) {
			for i := range 1000 {
				net0(j).DynamicPorts = append(net0(j).DynamicPorts, structs.Port{Label: fmt.Sprintf("p%d", i)})
			}
		}, []string{nw + "at most 1000 dynamic ports may be requested, got 1001"}},
		{"static and dynamic ports are valid", nil, func(j *structs.Job) {
			net0(j).ReservedPorts = []structs.Port{{Label: "admin", Value: 9090, To: 90}}
			task0(j).Resources.Networks = structs.Networks{{DynamicPorts: []structs.Port{{Label: "metrics"}}}}
		}, nil},
	})
}

// Constraint operators are checked on a job-level constraint; every other
// level shares the same rules.
func TestValidate_Constraints(t *testing.T) {
	with := func(c *structs.Constraint) func(j *structs.Job) {
		return func(j *structs.Job) { j.Constraints = []*structs.Constraint{c} }
	}
	c := func(l, op, r string) *structs.Constraint {
		return &structs.Constraint{LTarget: l, Operand: op, RTarget: r}
	}
	const c1 = "constraint 1: "
	cases := []validationCase{
		{"missing operator", nil, with(c("${attr.a}", "", "b")), []string{c1 + "missing operator"}},
		{"unknown operator", nil, with(c("${attr.a}", "like", "b")), []string{c1 + `unknown operator "like"`}},
		{"distinct_hosts alone", nil, with(c("", "distinct_hosts", "")), nil},
		{"distinct_property without attribute", nil, with(c("", "distinct_property", "")),
			[]string{c1 + `operator "distinct_property" requires an attribute`}},
		{"distinct_property with limit", nil, with(c("${meta.rack}", "distinct_property", "2")), nil},
		{"distinct_property zero limit", nil, with(c("${meta.rack}", "distinct_property", "0")),
			[]string{c1 + `distinct_property limit "0" must be a whole number >= 1`}},
		{"distinct_property bad limit", nil, with(c("${meta.rack}", "distinct_property", "two")),
			[]string{c1 + `distinct_property limit "two" must be a whole number >= 1`}},
		{"is_set with value", nil, with(c("${attr.a}", "is_set", "yes")),
			[]string{c1 + `operator "is_set" takes no value, got "yes"`}},
		{"is_not_set without attribute", nil, with(c("", "is_not_set", "")),
			[]string{c1 + `operator "is_not_set" requires an attribute`}},
		{"regexp without pattern", nil, with(c("${attr.a}", "regexp", "")), []string{c1 + "regexp requires a pattern"}},
		{"version without constraint", nil, with(c("${attr.a}", "version", "")),
			[]string{c1 + "version requires a version constraint"}},
		{"version unparsable", nil, with(c("${attr.a}", "version", "> one")),
			[]string{c1 + `version constraint "> one" is invalid: `}},
		{"semver unparsable", nil, with(c("${attr.a}", "semver", "~~1")),
			[]string{c1 + `semver constraint "~~1" is invalid: `}},
		{"both targets missing", nil, with(c("", "=", "")),
			[]string{c1 + `operator "=" requires a value`, c1 + `operator "=" requires an attribute`}},
	}
	for _, op := range []string{"=", "==", "is", "!=", "not", "<", "<=", ">", ">=", "set_contains", "set_contains_all", "set_contains_any"} {
		cases = append(cases,
			validationCase{op + " is valid", nil, with(c("${attr.a}", op, "1")), nil},
			validationCase{op + " without value", nil, with(c("${attr.a}", op, "")), []string{c1 + fmt.Sprintf("operator %q requires a value", op)}},
			validationCase{op + " without attribute", nil, with(c("", op, "1")), []string{c1 + fmt.Sprintf("operator %q requires an attribute", op)}},
		)
	}
	for _, ok := range []*structs.Constraint{
		c("${attr.kernel.name}", "regexp", "^lin"),
		c("${attr.nomad.version}", "version", ">= 1.2, < 2"),
		c("${attr.nomad.version}", "semver", ">= 1.2.0"),
		c("${meta.gpu}", "is_set", ""),
		c("${meta.gpu}", "is_not_set", ""),
	} {
		cases = append(cases, validationCase{ok.String() + " is valid", nil, with(ok), nil})
	}
	runValidationCases(t, cases)
}

func TestValidate_AffinitiesAndSpreads(t *testing.T) {
	aff := func(a *structs.Affinity) func(j *structs.Job) {
		return func(j *structs.Job) { tg0(j).Affinities = []*structs.Affinity{a} }
	}
	spread := func(s *structs.Spread) func(j *structs.Job) {
		return func(j *structs.Job) { tg0(j).Spreads = []*structs.Spread{s} }
	}
	const a1, s1 = grp + ": affinity 1: ", grp + ": spread 1: "
	runValidationCases(t, []validationCase{
		{"negative weight is valid", nil, aff(&structs.Affinity{LTarget: "${node.class}", RTarget: "x", Operand: "=", Weight: -100}), nil},
		{"distinct_hosts affinity", nil, aff(&structs.Affinity{Operand: "distinct_hosts", Weight: 50}),
			[]string{a1 + `operator "distinct_hosts" is not allowed in an affinity`}},
		{"is_set affinity", nil, aff(&structs.Affinity{LTarget: "${meta.a}", Operand: "is_set", Weight: 50}),
			[]string{a1 + `operator "is_set" is not allowed in an affinity`}},
		{"affinity without value", nil, aff(&structs.Affinity{LTarget: "${meta.a}", Operand: "=", Weight: 50}),
			[]string{a1 + `operator "=" requires a value`}},
		{"zero weight", nil, aff(&structs.Affinity{LTarget: "${meta.a}", RTarget: "b", Operand: "=", Weight: 0}),
			[]string{a1 + "weight must not be zero"}},
		{"spread with targets is valid", nil, spread(&structs.Spread{Attribute: "${node.datacenter}", Weight: 100,
			SpreadTarget: []*structs.SpreadTarget{{Value: "dc1", Percent: 70}, {Value: "dc2", Percent: 30}}}), nil},
		{"spread without attribute", nil, spread(&structs.Spread{Weight: 50}), []string{s1 + "missing spread attribute"}},
		{"spread zero weight", nil, spread(&structs.Spread{Attribute: "${meta.rack}", Weight: 0}),
			[]string{s1 + "spread weight must be within (0, 100], got 0"}},
		{"spread weight too high", nil, spread(&structs.Spread{Attribute: "${meta.rack}", Weight: 101}),
			[]string{s1 + "spread weight must be within (0, 100], got 101"}},
		{"nil spread target", nil, spread(&structs.Spread{Attribute: "${meta.rack}", Weight: 50,
			SpreadTarget: []*structs.SpreadTarget{nil}}), []string{s1 + "spread target 1 is empty"}},
		{"repeated target", nil, spread(&structs.Spread{Attribute: "${meta.rack}", Weight: 50,
			SpreadTarget: []*structs.SpreadTarget{{Value: "r1", Percent: 10}, {Value: "r1", Percent: 10}}}),
			[]string{s1 + `spread target value "r1" is repeated`}},
		{"target percent too high", nil, spread(&structs.Spread{Attribute: "${meta.rack}", Weight: 50,
			SpreadTarget: []*structs.SpreadTarget{{Value: "r1", Percent: 101}}}),
			[]string{s1 + `spread target "r1" percent must be within [0, 100], got 101`,
				s1 + "sum of spread target percentages must not exceed 100, got 101"}},
	})
}

// TestValidate_AllProblemsAtOnce checks problems from every level are
// reported together, in one error, each with its own path.
func TestValidate_AllProblemsAtOnce(t *testing.T) {
	j := serviceJob()
	j.Priority = 0
	tg0(j).Count = -1
	task0(j).Driver = ""
	task0(j).Resources.MemoryMB = 0
	err := j.Validate()
	var verr *structs.ValidationError
	if !errors.As(err, &verr) {
		t.Fatalf("got %v", err)
	}
	assertProblems(t, verr.Problems, []string{
		"job priority must be between [1, 100], got 0",
		grp + ": count must be >= 0, got -1",
		task + ": missing driver",
		task + ": memory must be >= 10 MB, got 0",
	})
	if !strings.HasPrefix(err.Error(), "4 validation errors:\n  * ") {
		t.Errorf("error text %q", err.Error())
	}
	wrapped := fmt.Errorf("job %q: %w", j.ID, err)
	if !structs.IsValidationError(wrapped) {
		t.Error("wrapped validation error not recognised")
	}
	if structs.IsValidationError(errors.New("other")) {
		t.Error("plain error recognised as validation error")
	}
}

func TestValidate_SingleProblemText(t *testing.T) {
	j := serviceJob()
	j.Region = ""
	if err := j.Validate(); err == nil || err.Error() != "missing job region" {
		t.Fatalf("got %v", err)
	}
}

func TestValidate_DoesNotModifyJob(t *testing.T) {
	j := serviceJob()
	task0(j).Resources.MemoryMB = 0
	before := j.Copy()
	_ = j.Validate()
	if d, _ := before.Diff(j, false); d.Type != structs.DiffTypeNone {
		t.Fatalf("Validate changed the job:\n%s", d)
	}
}

func BenchmarkJobValidate(b *testing.B) {
	j := serviceJob()
	b.ReportAllocs()
	for b.Loop() {
		if err := j.Validate(); err != nil {
			b.Fatal(err)
		}
	}
}

func TestPriorityProblem(t *testing.T) {
	cases := []struct {
		p    int
		want string
	}{
		{0, ""}, // unset: the job's own priority
		{structs.JobMinPriority, ""},
		{structs.JobMaxPriority, ""},
		{-1, "eval priority must be between 1 and 100, got -1"},
		{structs.JobMaxPriority + 1, "eval priority must be between 1 and 100, got 101"},
	}
	for _, tc := range cases {
		if got := structs.PriorityProblem("eval priority", tc.p); got != tc.want {
			t.Errorf("PriorityProblem(%d) = %q, want %q", tc.p, got, tc.want)
		}
	}
}
