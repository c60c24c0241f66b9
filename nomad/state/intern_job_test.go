package state

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-msgpack/v2/codec"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

// decodedJob returns a canonicalized job with every part allocated
// afresh, as decoding a registration makes it: an env, meta, driver config
// with a list, the default blocks.
func decodedJob(t *testing.T, edit func(*structs.Job)) *structs.Job {
	j := mockJob()
	j.Meta = map[string]string{"owner": "platform"}
	j.TaskGroups[0].Meta = map[string]string{}
	task := j.TaskGroups[0].Tasks[0]
	task.Config = map[string]interface{}{"command": "/bin/sleep", "args": []string{"3600"}, "nested": map[string]interface{}{"n": 1, "ok": true}}
	task.Env = map[string]string{"MOCK": "1"}
	j.Canonicalize()
	if edit != nil {
		edit(j)
	}
	var b []byte
	must.NoError(t, codec.NewEncoderBytes(&b, structs.MsgpackHandle).Encode(j))
	var out structs.Job
	must.NoError(t, codec.NewDecoderBytes(b, structs.MsgpackHandle).Decode(&out))
	return &out
}

// encodings are a job's msgpack, decoded into plain maps and lists (a
// map's entries are written in no fixed order, so its bytes vary from
// one encoding to the next), and its JSON bytes.
func encodings(t *testing.T, j *structs.Job) (mp interface{}, js []byte) {
	var b []byte
	must.NoError(t, codec.NewEncoderBytes(&b, structs.MsgpackHandle).Encode(j))
	must.NoError(t, codec.NewDecoderBytes(b, structs.MsgpackHandle).Decode(&mp))
	js, err := json.Marshal(j)
	must.NoError(t, err)
	return mp, js
}

func samePointer(a, b interface{}) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// TestIntern_JobPartsShared: two jobs of one shape share their parts once
// stored, and each encodes, in msgpack and JSON, to the bytes it did
// before.
func TestIntern_JobPartsShared(t *testing.T) {
	s := testStore(t)
	var jobs []*structs.Job
	for i := range 2 {
		j := decodedJob(t, nil)
		mp, js := encodings(t, j)
		must.NoError(t, s.WithWriteTxn(uint64(10+i), func(tx *Txn) error {
			tx.InternJobParts(j)
			return tx.UpsertJob(j)
		}))
		stored, err := s.JobByID(nil, j.Namespace, j.ID)
		must.NoError(t, err)
		must.True(t, stored == j)
		// The store sets its indexes and status; the rest is as sent.
		c := stored.Copy()
		c.CreateIndex, c.ModifyIndex, c.JobModifyIndex, c.Status = 0, 0, 0, ""
		gotMP, gotJS := encodings(t, c)
		must.Eq(t, mp, gotMP)
		must.Eq(t, string(js), string(gotJS))
		jobs = append(jobs, stored)
	}
	a, b := jobs[0], jobs[1]
	tga, tgb := a.TaskGroups[0], b.TaskGroups[0]
	ta, tb := tga.Tasks[0], tgb.Tasks[0]
	shared := []struct {
		name string
		a, b interface{}
	}{
		{"datacenters", a.Datacenters, b.Datacenters},
		{"job meta", a.Meta, b.Meta},
		{"group meta", tga.Meta, tgb.Meta},
		{"update", tga.Update, tgb.Update},
		{"migrate", tga.Migrate, tgb.Migrate},
		{"restart", tga.RestartPolicy, tgb.RestartPolicy},
		{"reschedule", tga.ReschedulePolicy, tgb.ReschedulePolicy},
		{"disk", tga.EphemeralDisk, tgb.EphemeralDisk},
		{"config", ta.Config, tb.Config},
		{"env", ta.Env, tb.Env},
		{"resources", ta.Resources, tb.Resources},
		{"logs", ta.LogConfig, tb.LogConfig},
	}
	for _, c := range shared {
		must.True(t, samePointer(c.a, c.b), must.Sprint(c.name))
	}
	must.True(t, sameInstance(ta.Driver, tb.Driver))
	must.True(t, sameInstance(tga.Name, tgb.Name))
	must.NotNil(t, tga.Meta, must.Sprint("an empty map stays a map"))
	must.Nil(t, ta.Meta, must.Sprint("a nil map stays nil"))
}

// TestIntern_JobPartsDiffer: parts that differ in anything, a list that
// is empty rather than nil, a config value of a type the key does not
// know, are kept apart; a snapshot's transaction shares nothing.
func TestIntern_JobPartsDiffer(t *testing.T) {
	s := testStore(t)
	store := func(j *structs.Job, index uint64) *structs.Task {
		must.NoError(t, s.WithWriteTxn(index, func(tx *Txn) error {
			tx.InternJobParts(j)
			return tx.UpsertJob(j)
		}))
		return j.TaskGroups[0].Tasks[0]
	}
	base := store(decodedJob(t, nil), 10)
	cases := []struct {
		name  string
		edit  func(*structs.Job)
		apart func(a, b *structs.Task) interface{}
	}{
		{"env value", func(j *structs.Job) { j.TaskGroups[0].Tasks[0].Env["MOCK"] = "2" },
			func(a, b *structs.Task) interface{} { return [2]any{a.Env, b.Env} }},
		{"config list", func(j *structs.Job) { j.TaskGroups[0].Tasks[0].Config["args"] = []string{"3601"} },
			func(a, b *structs.Task) interface{} { return [2]any{a.Config, b.Config} }},
		{"config int type", func(j *structs.Job) {
			j.TaskGroups[0].Tasks[0].Config["nested"] = map[string]interface{}{"n": 1.0, "ok": true}
		}, func(a, b *structs.Task) interface{} { return [2]any{a.Config, b.Config} }},
		{"resources", func(j *structs.Job) { j.TaskGroups[0].Tasks[0].Resources.MemoryMB++ },
			func(a, b *structs.Task) interface{} { return [2]any{a.Resources, b.Resources} }},
		{"empty networks", func(j *structs.Job) { j.TaskGroups[0].Tasks[0].Resources.Networks = structs.Networks{} },
			func(a, b *structs.Task) interface{} { return [2]any{a.Resources, b.Resources} }},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			j := decodedJob(t, c.edit)
			want := j.Copy()
			got := store(j, uint64(20+i))
			pair := c.apart(base, got).([2]any)
			must.False(t, samePointer(pair[0], pair[1]))
			must.Eq(t, want.TaskGroups[0].Tasks[0], got)
		})
	}

	t.Run("large parts", func(t *testing.T) {
		// Equal, but too large for the table to keep after their jobs.
		large := func(j *structs.Job) {
			task := j.TaskGroups[0].Tasks[0]
			task.Config["script"] = strings.Repeat("x", sharedPartMaxBytes)
			task.Env["BIG"] = strings.Repeat("y", sharedPartMaxBytes)
			j.TaskGroups[0].Meta = map[string]string{"big": strings.Repeat("z", sharedPartMaxBytes)}
		}
		a, b := decodedJob(t, large), decodedJob(t, large)
		want := b.Copy()
		store(a, 30)
		store(b, 31)
		ta, tb := a.TaskGroups[0].Tasks[0], b.TaskGroups[0].Tasks[0]
		must.False(t, samePointer(ta.Config, tb.Config))
		must.False(t, samePointer(ta.Env, tb.Env))
		must.False(t, samePointer(a.TaskGroups[0].Meta, b.TaskGroups[0].Meta))
		must.False(t, ta == tb)
		must.False(t, a.TaskGroups[0] == b.TaskGroups[0])
		must.True(t, a.TaskGroups[0].Update == b.TaskGroups[0].Update, must.Sprint("small parts are still shared"))
		must.Eq(t, want.TaskGroups, b.TaskGroups)
	})
	t.Run("unknown config type", func(t *testing.T) {
		j := decodedJob(t, nil)
		cfg := j.TaskGroups[0].Tasks[0].Config
		cfg["odd"] = struct{ A int }{1}
		must.NoError(t, s.WithWriteTxn(40, func(tx *Txn) error { tx.InternJobParts(j); return nil }))
		must.True(t, samePointer(cfg, j.TaskGroups[0].Tasks[0].Config))
	})
	t.Run("snapshot", func(t *testing.T) {
		j := decodedJob(t, nil)
		before := j.TaskGroups[0].Update
		snap := s.Snapshot()
		must.NoError(t, snap.WithWriteTxn(50, func(tx *Txn) error { tx.InternJobParts(j); return nil }))
		must.True(t, before == j.TaskGroups[0].Update)
	})
}

// TestIntern_JobPartsRestored: a restored store's jobs share their parts
// as the FSM's writes share them, and hold what was written.
func TestIntern_JobPartsRestored(t *testing.T) {
	s := testStore(t)
	for i := range 2 {
		j := decodedJob(t, nil)
		must.NoError(t, s.WithWriteTxn(uint64(10+i), func(tx *Txn) error { return tx.UpsertJob(j) }))
	}
	var buf bytes.Buffer
	must.NoError(t, s.Snapshot().Persist(&buf))
	r, err := Restore(&buf, nil)
	must.NoError(t, err)
	want, _ := s.Jobs(nil, structs.AllNamespaces)
	got, _ := r.Jobs(nil, structs.AllNamespaces)
	must.Eq(t, want, got)
	must.True(t, got[0].TaskGroups[0].Update == got[1].TaskGroups[0].Update)
	must.True(t, samePointer(got[0].TaskGroups[0].Tasks[0].Config, got[1].TaskGroups[0].Tasks[0].Config))
}

// TestIntern_TasksAndGroupsShared: jobs of one shape share their tasks
// and groups; a task or group differing in any field, or holding a list
// that is empty rather than nil, is its own, and is stored as sent.
func TestIntern_TasksAndGroupsShared(t *testing.T) {
	s := testStore(t)
	store := func(j *structs.Job, index uint64) *structs.TaskGroup {
		must.NoError(t, s.WithWriteTxn(index, func(tx *Txn) error {
			tx.InternJobParts(j)
			return tx.UpsertJob(j)
		}))
		return j.TaskGroups[0]
	}
	base := store(decodedJob(t, nil), 10)
	must.True(t, base == store(decodedJob(t, nil), 11), must.Sprint("equal groups are one"))
	leader := func(j *structs.Job) { j.TaskGroups[0].Tasks[0].Leader = true }
	must.True(t, store(decodedJob(t, leader), 12) == store(decodedJob(t, leader), 13),
		must.Sprint("groups equal to each other but not to the first are one"))

	second := time.Second
	task := func(edit func(*structs.Task)) func(*structs.Job) {
		return func(j *structs.Job) { edit(j.TaskGroups[0].Tasks[0]) }
	}
	group := func(edit func(*structs.TaskGroup)) func(*structs.Job) {
		return func(j *structs.Job) { edit(j.TaskGroups[0]) }
	}
	cases := []struct {
		name string
		edit func(*structs.Job)
		// taskShared: the task alone is still the base's.
		taskShared bool
	}{
		{"task name", task(func(t *structs.Task) { t.Name = "other" }), false},
		{"task user", task(func(t *structs.Task) { t.User = "nobody" }), false},
		{"kill timeout", task(func(t *structs.Task) { t.KillTimeout++ }), false},
		{"kill signal", task(func(t *structs.Task) { t.KillSignal = "SIGKILL" }), false},
		{"leader", task(func(t *structs.Task) { t.Leader = true }), false},
		{"lifecycle", task(func(t *structs.Task) { t.Lifecycle = &structs.TaskLifecycleConfig{Hook: "prestart"} }), false},
		{"task meta", task(func(t *structs.Task) { t.Meta = map[string]string{} }), false},
		{"empty services", task(func(t *structs.Task) { t.Services = []*structs.Service{} }), false},
		{"empty constraints", task(func(t *structs.Task) { t.Constraints = []*structs.Constraint{} }), false},
		{"dispatch payload", task(func(t *structs.Task) { t.DispatchPayload = &structs.DispatchPayloadConfig{} }), false},
		{"count", group(func(tg *structs.TaskGroup) { tg.Count++ }), true},
		{"group name", group(func(tg *structs.TaskGroup) { tg.Name = "other" }), true},
		{"shutdown delay", group(func(tg *structs.TaskGroup) { tg.ShutdownDelay = &second }), true},
		{"max disconnect", group(func(tg *structs.TaskGroup) { tg.MaxClientDisconnect = &second }), true},
		{"group meta nil", group(func(tg *structs.TaskGroup) { tg.Meta = nil }), true},
		{"restart policy", group(func(tg *structs.TaskGroup) { tg.RestartPolicy.Attempts++ }), true},
		{"empty spreads", group(func(tg *structs.TaskGroup) { tg.Spreads = []*structs.Spread{} }), true},
		{"empty networks", group(func(tg *structs.TaskGroup) { tg.Networks = structs.Networks{} }), true},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			j := decodedJob(t, c.edit)
			want := j.TaskGroups[0].Copy()
			got := store(j, uint64(20+i))
			must.False(t, got == base, must.Sprint("group shared"))
			must.Eq(t, c.taskShared, got.Tasks[0] == base.Tasks[0])
			must.Eq(t, want, got)
		})
	}
}

// TestIntern_TaskKeysCoverEveryField: the keys of shared tasks, groups
// and resources hold, or require nil, every field. A field added to one
// of these structs must be added to its key (intern_task.go,
// intern_job.go) before it is listed here.
func TestIntern_TaskKeysCoverEveryField(t *testing.T) {
	known := map[reflect.Type][]string{
		reflect.TypeOf(structs.Task{}): {"Name", "Driver", "User", "Config", "Env", "Constraints", "Affinities",
			"Resources", "Services", "Meta", "KillTimeout", "KillSignal", "LogConfig", "Lifecycle", "Leader",
			"VolumeMounts", "DispatchPayload", "Actions"},
		reflect.TypeOf(structs.TaskGroup{}): {"Name", "Count", "Update", "Migrate", "Constraints", "Affinities",
			"Spreads", "RestartPolicy", "ReschedulePolicy", "EphemeralDisk", "Networks", "Services", "Tasks", "Meta",
			"Volumes", "Scaling", "ShutdownDelay", "StopAfterClientDisconnect", "MaxClientDisconnect"},
		reflect.TypeOf(structs.Resources{}): {"CPU", "Cores", "MemoryMB", "MemoryMaxMB", "DiskMB", "IOPS", "Networks"},
	}
	for typ, fields := range known {
		var got []string
		for i := range typ.NumField() {
			got = append(got, typ.Field(i).Name)
		}
		must.Eq(t, fields, got, must.Sprintf("fields of %s", typ))
	}
}
