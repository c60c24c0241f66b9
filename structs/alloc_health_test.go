package structs

import (
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

func TestTaskStatesHealth(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	running := func(since time.Duration) *TaskState {
		return &TaskState{State: TaskStateRunning, StartedAt: at(since)}
	}
	group := &TaskGroup{Name: "web", Tasks: []*Task{
		{Name: "main"},
		{Name: "init", Lifecycle: &TaskLifecycleConfig{Hook: TaskLifecycleHookPrestart}},
		{Name: "proxy", Lifecycle: &TaskLifecycleConfig{Hook: TaskLifecycleHookPrestart, Sidecar: true}},
		{Name: "notify", Lifecycle: &TaskLifecycleConfig{Hook: TaskLifecycleHookPoststart}},
		{Name: "cleanup", Lifecycle: &TaskLifecycleConfig{Hook: TaskLifecycleHookPoststop}},
	}}
	initDone := &TaskState{State: TaskStateDead, StartedAt: at(0), FinishedAt: at(time.Second)}
	// Every check: 10s min healthy time, 5m deadline from t0.
	check := AllocHealthCheck{MinHealthyTime: 10 * time.Second, HealthyDeadline: 5 * time.Minute, Since: t0}

	cases := []struct {
		name   string
		status string
		states map[string]*TaskState
		now    time.Time
		want   AllocHealthStatus
		wantAt time.Time
		reason string
	}{
		{
			name:   "no task states yet: pending until the deadline (t0+5m)",
			status: AllocClientStatusPending,
			now:    at(time.Minute),
			want:   AllocHealthPending, wantAt: at(5 * time.Minute),
		},
		{
			// main and proxy run since t0+2s and t0+5s: healthy at 5s+10s.
			name:   "running less than min healthy time: pending until 15s",
			status: AllocClientStatusRunning,
			states: map[string]*TaskState{"main": running(2 * time.Second), "proxy": running(5 * time.Second), "init": initDone},
			now:    at(12 * time.Second),
			want:   AllocHealthPending, wantAt: at(15 * time.Second),
		},
		{
			name:   "every long-running task up 10s since the latest start: healthy at 15s",
			status: AllocClientStatusRunning,
			states: map[string]*TaskState{"main": running(2 * time.Second), "proxy": running(5 * time.Second), "init": initDone},
			now:    at(20 * time.Second),
			want:   AllocHealthHealthy, wantAt: at(15 * time.Second),
		},
		{
			// A restart at t0+30s moves the clock: healthy at 30s+10s.
			name:   "a restart resets the min healthy time",
			status: AllocClientStatusRunning,
			states: map[string]*TaskState{
				"main":  {State: TaskStateRunning, StartedAt: at(2 * time.Second), LastRestart: at(30 * time.Second), Restarts: 1},
				"proxy": running(5 * time.Second), "init": initDone,
			},
			now:  at(35 * time.Second),
			want: AllocHealthPending, wantAt: at(40 * time.Second),
		},
		{
			name:   "prestart task still running: pending",
			status: AllocClientStatusRunning,
			states: map[string]*TaskState{"main": running(0), "proxy": running(0), "init": running(0)},
			now:    at(time.Minute),
			want:   AllocHealthPending, wantAt: at(5 * time.Minute),
		},
		{
			name:   "a failed task: unhealthy at once",
			status: AllocClientStatusRunning,
			states: map[string]*TaskState{"main": running(0), "proxy": running(0), "init": initDone,
				"notify": {State: TaskStateDead, Failed: true}},
			now:  at(time.Minute),
			want: AllocHealthUnhealthy, wantAt: at(time.Minute), reason: `task "notify" failed`,
		},
		{
			name:   "a main task that exited: unhealthy",
			status: AllocClientStatusRunning,
			states: map[string]*TaskState{"main": {State: TaskStateDead}, "proxy": running(0), "init": initDone},
			now:    at(time.Minute),
			want:   AllocHealthUnhealthy, wantAt: at(time.Minute), reason: `task "main" exited`,
		},
		{
			name:   "the alloc failed on its client",
			status: AllocClientStatusFailed,
			now:    at(time.Minute),
			want:   AllocHealthUnhealthy, wantAt: at(time.Minute), reason: "allocation is failed",
		},
		{
			name:   "still starting at the deadline: unhealthy at t0+5m",
			status: AllocClientStatusPending,
			now:    at(6 * time.Minute),
			want:   AllocHealthUnhealthy, wantAt: at(5 * time.Minute),
			reason: "allocation did not become healthy before its healthy deadline",
		},
		{
			// Running since 4m55s: healthy only at 5m05s, after the
			// deadline; at 5m01s the deadline has passed first.
			name:   "healthy time after the deadline: unhealthy",
			status: AllocClientStatusRunning,
			states: map[string]*TaskState{"main": running(295 * time.Second), "proxy": running(0), "init": initDone},
			now:    at(301 * time.Second),
			want:   AllocHealthUnhealthy, wantAt: at(5 * time.Minute),
		},
		{
			// Healthy at 15s, looked at only after the deadline.
			name:   "became healthy before the deadline, judged after it",
			status: AllocClientStatusRunning,
			states: map[string]*TaskState{"main": running(5 * time.Second), "proxy": running(0), "init": initDone},
			now:    at(10 * time.Minute),
			want:   AllocHealthHealthy, wantAt: at(15 * time.Second),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := &Allocation{ClientStatus: tc.status, TaskStates: tc.states}
			got := TaskStatesHealth(a, group, check, tc.now)
			must.Eq(t, tc.want, got.Status, must.Sprintf("%+v", got))
			must.True(t, got.At.Equal(tc.wantAt), must.Sprintf("at %v, want %v", got.At, tc.wantAt))
			if tc.reason != "" {
				must.Eq(t, tc.reason, got.Reason)
			}
		})
	}
}

func TestTaskStatesHealth_NoDeadlineNoGroup(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	a := &Allocation{ClientStatus: AllocClientStatusPending}
	got := TaskStatesHealth(a, nil, AllocHealthCheck{}, now)
	must.Eq(t, AllocHealthPending, got.Status)
	must.True(t, got.At.IsZero(), must.Sprint("only news from the client can change this verdict"))

	// Zero min healthy time: healthy as soon as everything runs.
	tg := &TaskGroup{Tasks: []*Task{{Name: "main"}}}
	a.TaskStates = map[string]*TaskState{"main": {State: TaskStateRunning, StartedAt: now}}
	got = TaskStatesHealth(a, tg, AllocHealthCheck{}, now)
	must.Eq(t, AllocHealthHealthy, got.Status)
}

func TestStrategyHealthChecks(t *testing.T) {
	since := time.Unix(1_700_000_000, 0)
	u := DefaultUpdateStrategy()
	must.Eq(t, AllocHealthCheck{MinHealthyTime: 10 * time.Second, HealthyDeadline: 5 * time.Minute, Since: since}, u.AllocHealthCheck(since))
	var m *MigrateStrategy
	must.Eq(t, AllocHealthCheck{MinHealthyTime: 10 * time.Second, HealthyDeadline: 5 * time.Minute, Since: since}, m.AllocHealthCheck(since))
}
