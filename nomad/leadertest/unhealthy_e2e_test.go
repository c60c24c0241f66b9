package leadertest_test

import (
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/leadertest"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// A roll-out whose alloc is judged unhealthy while it keeps running does
// not wait for its progress deadline: the alloc is replaced after its
// reschedule delay, and the roll-out completes on the replacement.
func TestUnhealthy_RunningAllocReplacedWithinTheRollout(t *testing.T) {
	c := leadertest.New(t)
	c.AddNodes(mock.Node(), mock.Node(), mock.Node())
	job := mock.Job(mock.Count(2))
	job.TaskGroups[0].Update = &structs.UpdateStrategy{
		MaxParallel: 1, HealthCheck: structs.UpdateHealthCheckTaskStates,
		MinHealthyTime: 10 * time.Second, HealthyDeadline: time.Minute, ProgressDeadline: 10 * time.Minute,
	}
	job.TaskGroups[0].ReschedulePolicy = &structs.ReschedulePolicy{
		Delay: 5 * time.Second, DelayFunction: structs.RescheduleDelayConstant, Unlimited: true,
	}
	job = c.Register(job)
	start := c.Now()
	c.Schedule()
	c.StartAllocs()
	d, err := c.Store.LatestDeploymentByJobID(nil, job.Namespace, job.ID)
	must.NoError(t, err)
	must.NotNil(t, d)
	live := c.LiveAllocs(job)
	must.Len(t, 2, live)
	good, bad := live[0], live[1]

	// One alloc proves healthy; the other runs but misses its deadline.
	c.Clock.Advance(time.Minute)
	c.SetAllocHealth(d.ID, []string{good.ID}, []string{bad.ID})
	c.Schedule()
	c.Clock.Advance(5 * time.Second) // the reschedule delay
	c.Schedule()
	c.RunClients()

	old, err := c.Store.AllocByID(nil, bad.ID)
	must.NoError(t, err)
	must.Eq(t, structs.AllocDesiredStatusStop, old.DesiredStatus)
	must.Eq(t, structs.AllocRescheduled, old.DesiredDescription)
	var repl *structs.Allocation
	for _, a := range c.LiveAllocs(job) {
		if a.PreviousAllocation == bad.ID {
			repl = a
		}
	}
	must.NotNil(t, repl, must.Sprint("the unhealthy alloc is replaced"))
	must.Eq(t, d.ID, repl.DeploymentID)
	must.Eq(t, structs.AllocClientStatusRunning, repl.ClientStatus)

	// The replacement proves healthy: the roll-out is done, well before
	// its progress deadline.
	c.Clock.Advance(15 * time.Second)
	c.SetAllocHealth(d.ID, []string{repl.ID}, nil)
	c.Schedule()
	d, err = c.Store.DeploymentByID(nil, d.ID)
	must.NoError(t, err)
	must.Eq(t, structs.DeploymentStatusSuccessful, d.Status)
	must.Less(t, 10*time.Minute, c.Now().Sub(start))
	must.Len(t, 2, c.LiveAllocs(job))
}
