package allocrunner

import (
	"slices"
	"testing"
	"time"

	"github.com/opennomad/nomad/structs"
)

// Builders for task views: name, role and state in one call.
func pending(name string, r role) taskView {
	return taskView{name: name, role: r, state: &structs.TaskState{State: structs.TaskStatePending}}
}

func running(name string, r role) taskView {
	return taskView{name: name, role: r, started: true,
		state: &structs.TaskState{State: structs.TaskStateRunning, StartedAt: time.Unix(1, 0)}}
}

func done(name string, r role) taskView {
	return taskView{name: name, role: r, started: true,
		state: &structs.TaskState{State: structs.TaskStateDead, StartedAt: time.Unix(1, 0)}}
}

func failedTask(name string, r role) taskView {
	v := done(name, r)
	v.state.Failed = true
	return v
}

func leader(v taskView) taskView { v.leader = true; return v }

func TestPlanLifecycle(t *testing.T) {
	cases := []struct {
		name       string
		tasks      []taskView
		stopping   bool
		destroying bool
		wantStart  []string
		wantKill   map[string]string // task -> event type ("" for a plain stop)
	}{
		{
			name:      "main tasks alone start at once",
			tasks:     []taskView{pending("a", roleMain), pending("b", roleMain)},
			wantStart: []string{"a", "b"},
		},
		{
			name:      "prestart first, main waits",
			tasks:     []taskView{pending("init", rolePrestart), pending("side", rolePrestartSidecar), pending("app", roleMain)},
			wantStart: []string{"init", "side"},
		},
		{
			name:      "main waits for the sidecar to run",
			tasks:     []taskView{done("init", rolePrestart), pending("side", rolePrestartSidecar), pending("app", roleMain)},
			wantStart: []string{"side"},
		},
		{
			name:      "main starts once prestart completed and sidecars run",
			tasks:     []taskView{done("init", rolePrestart), running("side", rolePrestartSidecar), pending("app", roleMain)},
			wantStart: []string{"app"},
		},
		{
			name:      "poststart waits for main to start",
			tasks:     []taskView{pending("app", roleMain), pending("after", rolePoststart)},
			wantStart: []string{"app"},
		},
		{
			name:      "poststart starts once main runs",
			tasks:     []taskView{running("app", roleMain), pending("after", rolePoststart), pending("afterside", rolePoststartSidecar)},
			wantStart: []string{"after", "afterside"},
		},
		{
			name:     "failed prestart fails the group: main is killed before it starts",
			tasks:    []taskView{failedTask("init", rolePrestart), pending("app", roleMain)},
			wantKill: map[string]string{"app": structs.TaskSiblingFailed},
		},
		{
			name:     "failed main kills its siblings but not poststop, which then waits",
			tasks:    []taskView{failedTask("a", roleMain), running("b", roleMain), running("side", rolePrestartSidecar), pending("cleanup", rolePoststop)},
			wantKill: map[string]string{"b": structs.TaskSiblingFailed, "side": structs.TaskSiblingFailed},
		},
		{
			name:      "poststop runs once everything else is dead, even after a failure",
			tasks:     []taskView{failedTask("a", roleMain), done("b", roleMain), pending("cleanup", rolePoststop)},
			wantStart: []string{"cleanup"},
		},
		{
			name:     "dead leader stops the others",
			tasks:    []taskView{leader(done("boss", roleMain)), running("helper", roleMain)},
			wantKill: map[string]string{"helper": structs.TaskLeaderDead},
		},
		{
			name:     "sidecars stop when the main tasks are done",
			tasks:    []taskView{running("side", rolePrestartSidecar), done("app", roleMain), running("after", rolePoststartSidecar)},
			wantKill: map[string]string{"side": structs.TaskMainDead, "after": structs.TaskMainDead},
		},
		{
			name:     "stopping the alloc stops all but poststop",
			tasks:    []taskView{running("side", rolePrestartSidecar), running("app", roleMain), pending("cleanup", rolePoststop)},
			stopping: true,
			wantKill: map[string]string{"side": "", "app": ""},
		},
		{
			name:      "stopped alloc: poststop runs after the others died",
			tasks:     []taskView{done("app", roleMain), pending("cleanup", rolePoststop)},
			stopping:  true,
			wantStart: []string{"cleanup"},
		},
		{
			name:       "destroying stops everything including poststop",
			tasks:      []taskView{running("app", roleMain), running("cleanup", rolePoststop)},
			destroying: true,
			wantKill:   map[string]string{"app": "", "cleanup": ""},
		},
		{
			name: "tasks already asked to die are not asked again",
			tasks: func() []taskView {
				b := running("b", roleMain)
				b.killed = true
				return []taskView{failedTask("a", roleMain), b}
			}(),
		},
		{
			name:  "nothing to do while main runs",
			tasks: []taskView{done("init", rolePrestart), running("app", roleMain)},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := planLifecycle(tc.tasks, tc.stopping, tc.destroying, time.Unix(100, 0))
			slices.Sort(p.start)
			want := slices.Clone(tc.wantStart)
			slices.Sort(want)
			if !slices.Equal(p.start, want) {
				t.Errorf("start = %v, want %v", p.start, want)
			}
			got := map[string]string{}
			for name, ev := range p.kill {
				got[name] = ""
				if ev != nil {
					got[name] = ev.Type
				}
			}
			if len(got) != len(tc.wantKill) {
				t.Fatalf("kill = %v, want %v", got, tc.wantKill)
			}
			for name, typ := range tc.wantKill {
				if g, ok := got[name]; !ok || g != typ {
					t.Errorf("kill[%s] = %q (present %v), want %q", name, g, ok, typ)
				}
			}
		})
	}
}

func TestClientStatus(t *testing.T) {
	st := func(state string, failed bool) *structs.TaskState {
		return &structs.TaskState{State: state, Failed: failed}
	}
	cases := []struct {
		name   string
		states map[string]*structs.TaskState
		want   string
	}{
		{"all pending", map[string]*structs.TaskState{"a": st("pending", false)}, structs.AllocClientStatusPending},
		{"one running", map[string]*structs.TaskState{"a": st("pending", false), "b": st("running", false)}, structs.AllocClientStatusRunning},
		{"running beats complete", map[string]*structs.TaskState{"a": st("dead", false), "b": st("running", false)}, structs.AllocClientStatusRunning},
		{"all dead", map[string]*structs.TaskState{"a": st("dead", false), "b": st("dead", false)}, structs.AllocClientStatusComplete},
		{"failed beats everything", map[string]*structs.TaskState{"a": st("dead", true), "b": st("running", false)}, structs.AllocClientStatusFailed},
		{"restarting task is pending", map[string]*structs.TaskState{"a": st("pending", false), "b": st("dead", false)}, structs.AllocClientStatusPending},
		{"no tasks", map[string]*structs.TaskState{}, structs.AllocClientStatusPending},
	}
	for _, tc := range cases {
		if got, _ := clientStatus(tc.states); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

// planLifecycle runs after every task state change of every allocation.
func BenchmarkPlanLifecycle(b *testing.B) {
	tasks := []taskView{
		done("init", rolePrestart), running("proxy", rolePrestartSidecar),
		running("app", roleMain), running("worker", roleMain), running("log", rolePoststartSidecar),
		pending("cleanup", rolePoststop),
	}
	now := time.Unix(100, 0)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		planLifecycle(tasks, false, false, now)
	}
}
