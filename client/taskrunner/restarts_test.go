package taskrunner

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/opennomad/nomad/client/driver"
	"github.com/opennomad/nomad/structs"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// step is one event fed to the tracker at t0+at, and what it must answer.
type step struct {
	at       time.Duration
	exit     *driver.ExitResult // nil means a start error
	startErr error
	want     Decision
}

var (
	ok      = &driver.ExitResult{}
	failed  = &driver.ExitResult{ExitCode: 1}
	killed  = &driver.ExitResult{ExitCode: 137, Signal: 9}
	recov   = driver.Recoverable(errors.New("port busy"))
	unrecov = errors.New("no such binary")
)

func restarting(d time.Duration) Decision {
	return Decision{State: structs.TaskRestarting, Delay: d, Reason: ReasonWithinPolicy}
}

func exceeded(attempts int, interval time.Duration) Decision {
	return Decision{State: structs.TaskNotRestarting,
		Reason: fmt.Sprintf(`Exceeded allowed attempts %d in interval %v and mode is "fail"`, attempts, interval)}
}

func TestRestartTracker(t *testing.T) {
	fail2in1m := &structs.RestartPolicy{Attempts: 2, Interval: time.Minute, Delay: 10 * time.Second, Mode: structs.RestartPolicyModeFail}
	delay2in1m := &structs.RestartPolicy{Attempts: 2, Interval: time.Minute, Delay: 10 * time.Second, Mode: structs.RestartPolicyModeDelay}
	none := &structs.RestartPolicy{Attempts: 0, Interval: time.Minute, Delay: time.Second, Mode: structs.RestartPolicyModeFail}
	prestart := &structs.TaskLifecycleConfig{Hook: structs.TaskLifecycleHookPrestart}
	sidecar := &structs.TaskLifecycleConfig{Hook: structs.TaskLifecycleHookPrestart, Sidecar: true}
	poststop := &structs.TaskLifecycleConfig{Hook: structs.TaskLifecycleHookPoststop}

	cases := []struct {
		name    string
		policy  *structs.RestartPolicy
		jobType string
		lc      *structs.TaskLifecycleConfig
		steps   []step
	}{
		{
			name: "service: failures restart until attempts are used up", policy: fail2in1m, jobType: structs.JobTypeService,
			steps: []step{
				{at: 1 * time.Second, exit: failed, want: restarting(10 * time.Second)},
				{at: 12 * time.Second, exit: failed, want: restarting(10 * time.Second)},
				// Third failure within the minute: 3 > 2 attempts.
				{at: 23 * time.Second, exit: failed, want: exceeded(2, time.Minute)},
			},
		},
		{
			name: "service: a clean exit is restarted and counted too", policy: fail2in1m, jobType: structs.JobTypeService,
			steps: []step{
				{at: time.Second, exit: ok, want: restarting(10 * time.Second)},
				{at: 2 * time.Second, exit: ok, want: restarting(10 * time.Second)},
				{at: 3 * time.Second, exit: ok, want: exceeded(2, time.Minute)},
			},
		},
		{
			name: "service: a new interval resets the count", policy: fail2in1m, jobType: structs.JobTypeService,
			steps: []step{
				{at: 10 * time.Second, exit: failed, want: restarting(10 * time.Second)},
				{at: 30 * time.Second, exit: failed, want: restarting(10 * time.Second)},
				// t0+61s is past the interval that began at t0: count 1 again.
				{at: 61 * time.Second, exit: killed, want: restarting(10 * time.Second)},
				{at: 70 * time.Second, exit: failed, want: restarting(10 * time.Second)},
				{at: 80 * time.Second, exit: failed, want: exceeded(2, time.Minute)},
			},
		},
		{
			name: "delay mode waits for the interval to end instead of failing", policy: delay2in1m, jobType: structs.JobTypeService,
			steps: []step{
				{at: 5 * time.Second, exit: failed, want: restarting(10 * time.Second)},
				{at: 20 * time.Second, exit: failed, want: restarting(10 * time.Second)},
				// Interval ends at t0+60s: wait 60-35 = 25s.
				{at: 35 * time.Second, exit: failed, want: Decision{State: structs.TaskRestarting, Delay: 25 * time.Second, Reason: ReasonDelay}},
				// Restarted at t0+60s, fails at t0+65s: a new interval.
				{at: 65 * time.Second, exit: failed, want: restarting(10 * time.Second)},
			},
		},
		{
			name: "delay mode never waits less than the delay", policy: delay2in1m, jobType: structs.JobTypeService,
			steps: []step{
				{at: 50 * time.Second, exit: failed, want: restarting(10 * time.Second)},
				{at: 55 * time.Second, exit: failed, want: restarting(10 * time.Second)},
				// 59s: 1s left in the interval, but the delay is 10s.
				{at: 59 * time.Second, exit: failed, want: Decision{State: structs.TaskRestarting, Delay: 10 * time.Second, Reason: ReasonDelay}},
			},
		},
		{
			name: "batch: success completes, failure restarts", policy: fail2in1m, jobType: structs.JobTypeBatch,
			steps: []step{
				{at: time.Second, exit: failed, want: restarting(10 * time.Second)},
				{at: 15 * time.Second, exit: ok, want: Decision{State: structs.TaskTerminated}},
			},
		},
		{
			name: "sysbatch success completes", policy: fail2in1m, jobType: structs.JobTypeSysBatch,
			steps: []step{{at: time.Second, exit: ok, want: Decision{State: structs.TaskTerminated}}},
		},
		{
			name: "no attempts: any failure is final", policy: none, jobType: structs.JobTypeService,
			steps: []step{{at: time.Second, exit: failed, want: Decision{State: structs.TaskNotRestarting, Reason: ReasonNoRestartsAllowed}}},
		},
		{
			name: "no attempts: batch success still completes", policy: none, jobType: structs.JobTypeBatch,
			steps: []step{{at: time.Second, exit: ok, want: Decision{State: structs.TaskTerminated}}},
		},
		{
			name: "unrecoverable start error is final", policy: fail2in1m, jobType: structs.JobTypeService,
			steps: []step{{at: time.Second, startErr: unrecov, want: Decision{State: structs.TaskNotRestarting, Reason: ReasonUnrecoverable}}},
		},
		{
			name: "recoverable start errors count as failures", policy: fail2in1m, jobType: structs.JobTypeService,
			steps: []step{
				{at: time.Second, startErr: recov, want: restarting(10 * time.Second)},
				{at: 12 * time.Second, exit: failed, want: restarting(10 * time.Second)},
				{at: 23 * time.Second, startErr: recov, want: exceeded(2, time.Minute)},
			},
		},
		{
			name: "ephemeral prestart in a service job runs to completion", policy: fail2in1m, jobType: structs.JobTypeService, lc: prestart,
			steps: []step{
				{at: time.Second, exit: failed, want: restarting(10 * time.Second)},
				{at: 12 * time.Second, exit: ok, want: Decision{State: structs.TaskTerminated}},
			},
		},
		{
			name: "prestart sidecar is restarted like a service", policy: fail2in1m, jobType: structs.JobTypeService, lc: sidecar,
			steps: []step{{at: time.Second, exit: ok, want: restarting(10 * time.Second)}},
		},
		{
			name: "poststop completes on success", policy: fail2in1m, jobType: structs.JobTypeService, lc: poststop,
			steps: []step{{at: time.Second, exit: ok, want: Decision{State: structs.TaskTerminated}}},
		},
		{
			name: "default policy of the job type when none is set", policy: nil, jobType: structs.JobTypeService,
			steps: []step{
				// Service default: 2 attempts in 30m, 15s delay, mode fail.
				{at: time.Second, exit: failed, want: restarting(15 * time.Second)},
				{at: 20 * time.Second, exit: failed, want: restarting(15 * time.Second)},
				{at: 40 * time.Second, exit: failed, want: exceeded(2, 30*time.Minute)},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rt := NewRestartTracker(tc.policy, tc.jobType, tc.lc, t0, nil)
			for i, s := range tc.steps {
				now := t0.Add(s.at)
				var got Decision
				if s.exit != nil {
					got = rt.OnExit(now, s.exit)
				} else {
					got = rt.OnStartError(now, s.startErr)
				}
				if got != s.want {
					t.Fatalf("step %d (t0+%v): got %+v, want %+v", i, s.at, got, s.want)
				}
			}
		})
	}
}

// Jitter adds up to a quarter of the delay: jitter()=0.5 -> 10s + 0.5*0.25*10s = 11.25s.
func TestRestartJitter(t *testing.T) {
	pol := &structs.RestartPolicy{Attempts: 5, Interval: time.Hour, Delay: 10 * time.Second, Mode: structs.RestartPolicyModeFail}
	rt := NewRestartTracker(pol, structs.JobTypeService, nil, t0, func() float64 { return 0.5 })
	if d := rt.OnExit(t0.Add(time.Second), failed); d.Delay != 11250*time.Millisecond {
		t.Fatalf("delay = %v, want 11.25s", d.Delay)
	}
}

// The reason text is what `alloc status` shows; keep Nomad's wording.
func TestExceededReasonText(t *testing.T) {
	pol := &structs.RestartPolicy{Attempts: 1, Interval: 5 * time.Minute, Mode: structs.RestartPolicyModeFail}
	rt := NewRestartTracker(pol, structs.JobTypeService, nil, t0, nil)
	rt.OnExit(t0, failed)
	want := `Exceeded allowed attempts 1 in interval 5m0s and mode is "fail"`
	if got := rt.OnExit(t0, failed).Reason; got != want {
		t.Fatalf("reason = %q, want %q", got, want)
	}
}
