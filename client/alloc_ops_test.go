package client

import (
	"context"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

func TestClient_SignalTask(t *testing.T) {
	c, a := runningMockAlloc(t)
	must.NoError(t, c.SignalTask(a.ID, "web", "SIGHUP"))
	must.NoError(t, c.SignalTask(a.ID, "", "usr1")) // every running task
	h := c.allocs.Runner(a.ID).TaskRunner("web").Handle()
	must.Eq(t, "SIGHUP,usr1", h.Inspect().Attributes["signals"])
	st, err := c.AllocState(a.ID)
	must.NoError(t, err)
	must.Eq(t, 2, countEvents(st.TaskStates["web"], structs.TaskSignaling))

	must.ErrorIs(t, c.SignalTask(a.ID, "web", "SIGNOPE"), ErrInvalid)
	must.ErrorIs(t, c.SignalTask(a.ID, "db", "SIGHUP"), ErrNotFound)
	must.ErrorIs(t, c.SignalTask("nope", "web", "SIGHUP"), ErrNotFound)
}

func TestClient_RestartAlloc(t *testing.T) {
	c, a := runningMockAlloc(t)
	tr := c.allocs.Runner(a.ID).TaskRunner("web")
	before := tr.Handle().ID()
	must.NoError(t, c.RestartAlloc(context.Background(), a.ID, "web", false))
	eventually(t, "a new instance runs", func() bool {
		h := tr.Handle()
		return h != nil && h.ID() != before
	})
	st := tr.TaskState()
	must.Eq(t, structs.TaskStateRunning, st.State)
	must.Eq(t, 1, countEvents(st, structs.TaskRestartSignal))
	must.Eq(t, 2, countEvents(st, structs.TaskStarted))

	must.NoError(t, c.RestartAlloc(context.Background(), a.ID, "", true))
	must.ErrorIs(t, c.RestartAlloc(context.Background(), a.ID, "web", true), ErrInvalid)
	must.ErrorIs(t, c.RestartAlloc(context.Background(), a.ID, "db", false), ErrNotFound)
}
