package scheduler

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// readRecorder is a State that remembers a deep copy of every object it
// hands out, so a test can assert after Process that the scheduler
// modified none of them. Objects read from state are shared with the
// store and with every other reader (the leader's drainer, deployment
// watcher, other workers); writing into one is a data race and a change
// that never went through Raft.
type readRecorder struct {
	State
	// seen maps each object handed out (a pointer) to its copy at the
	// time it was first handed out.
	seen map[any]any
	// order keeps the reads in order for stable failure messages.
	order []any
	// sharedLists are the live-alloc lists handed out, each with a copy
	// of its elements: they are shared with every reader of the store,
	// so the scheduler must neither reorder nor overwrite them.
	sharedLists [][2][]*structs.Allocation
}

func newReadRecorder(s State) *readRecorder {
	return &readRecorder{State: s, seen: map[any]any{}}
}

// record snapshots obj unless it was handed out before (its first copy
// is the reference) or is nil.
func (r *readRecorder) record(obj any) {
	v := reflect.ValueOf(obj)
	if !v.IsValid() || (v.Kind() == reflect.Pointer && v.IsNil()) {
		return
	}
	if _, ok := r.seen[obj]; ok {
		return
	}
	r.seen[obj] = deepCopy(obj)
	r.order = append(r.order, obj)
}

// changed lists every recorded object that no longer equals its copy,
// and every shared list whose elements changed.
func (r *readRecorder) changed() []string {
	var out []string
	for _, obj := range r.order {
		if !reflect.DeepEqual(obj, r.seen[obj]) {
			out = append(out, describe(obj, r.seen[obj]))
		}
	}
	for _, l := range r.sharedLists {
		if !slices.Equal(l[0], l[1]) {
			out = append(out, fmt.Sprintf("the live allocs of node %s (reordered or overwritten)", l[1][0].NodeID))
		}
	}
	return out
}

// verify fails the test for every object the scheduler modified.
func (r *readRecorder) verify(t testing.TB) {
	t.Helper()
	for _, c := range r.changed() {
		t.Errorf("the scheduler modified an object read from state: %s", c)
	}
}

// describe names an object and the first field that differs.
func describe(now, before any) string {
	name := fmt.Sprintf("%T", now)
	switch o := now.(type) {
	case *structs.Allocation:
		name += " " + o.Name
	case *structs.Node:
		name += " " + o.Name
	case *structs.Job:
		name += " " + o.ID
	case *structs.Deployment:
		name += " " + o.ID
	case *structs.Evaluation:
		name += " " + o.ID
	}
	return name + ": " + firstDiff(reflect.ValueOf(now), reflect.ValueOf(before), "")
}

// firstDiff walks two values of the same type and names the first path
// at which they differ.
func firstDiff(a, b reflect.Value, path string) string {
	if a.Kind() != b.Kind() {
		return path + " (kind)"
	}
	switch a.Kind() {
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				return path + " (nil-ness)"
			}
			return ""
		}
		return firstDiff(a.Elem(), b.Elem(), path)
	case reflect.Struct:
		for i := range a.NumField() {
			if !a.Type().Field(i).IsExported() {
				continue
			}
			if d := firstDiff(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name); d != "" {
				return d
			}
		}
		return ""
	case reflect.Map:
		if a.Len() != b.Len() {
			return fmt.Sprintf("%s (len %d, was %d)", path, a.Len(), b.Len())
		}
		for _, k := range a.MapKeys() {
			bv := b.MapIndex(k)
			if !bv.IsValid() {
				return fmt.Sprintf("%s[%v] (added)", path, k)
			}
			if d := firstDiff(a.MapIndex(k), bv, fmt.Sprintf("%s[%v]", path, k)); d != "" {
				return d
			}
		}
		return ""
	case reflect.Slice:
		if a.Len() != b.Len() {
			return fmt.Sprintf("%s (len %d, was %d)", path, a.Len(), b.Len())
		}
		for i := range a.Len() {
			if d := firstDiff(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i)); d != "" {
				return d
			}
		}
		return ""
	}
	if a.CanInterface() && b.CanInterface() && !reflect.DeepEqual(a.Interface(), b.Interface()) {
		return fmt.Sprintf("%s (%v, was %v)", path, a.Interface(), b.Interface())
	}
	return ""
}

// deepCopy copies every pointer, map and slice reachable through
// exported fields, keeping shared pointers shared. Unexported fields
// (time.Time's location, for one) are copied shallowly.
func deepCopy(obj any) any {
	memo := map[uintptr]reflect.Value{}
	return copyValue(reflect.ValueOf(obj), memo).Interface()
}

func copyValue(v reflect.Value, memo map[uintptr]reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		if c, ok := memo[v.Pointer()]; ok {
			return c
		}
		c := reflect.New(v.Type().Elem())
		memo[v.Pointer()] = c
		c.Elem().Set(copyValue(v.Elem(), memo))
		return c
	case reflect.Interface:
		if v.IsNil() {
			return v
		}
		c := reflect.New(v.Type()).Elem()
		c.Set(copyValue(v.Elem(), memo))
		return c
	case reflect.Struct:
		c := reflect.New(v.Type()).Elem()
		c.Set(v)
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				c.Field(i).Set(copyValue(v.Field(i), memo))
			}
		}
		return c
	case reflect.Map:
		if v.IsNil() {
			return v
		}
		c := reflect.MakeMapWithSize(v.Type(), v.Len())
		iter := v.MapRange()
		for iter.Next() {
			c.SetMapIndex(iter.Key(), copyValue(iter.Value(), memo))
		}
		return c
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		c := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			c.Index(i).Set(copyValue(v.Index(i), memo))
		}
		return c
	}
	return v
}

// recordAll and recordOne record what a State call returned and pass it
// on unchanged.
func recordAll[T any](r *readRecorder, objs []T) []T {
	for _, o := range objs {
		r.record(o)
	}
	return objs
}

func recordOne[T any](r *readRecorder, obj T) T {
	r.record(obj)
	return obj
}

func (r *readRecorder) Nodes() ([]*structs.Node, error) {
	ns, err := r.State.Nodes()
	return recordAll(r, ns), err
}

func (r *readRecorder) NodeByID(id string) (*structs.Node, error) {
	n, err := r.State.NodeByID(id)
	return recordOne(r, n), err
}

func (r *readRecorder) JobByID(namespace, id string) (*structs.Job, error) {
	j, err := r.State.JobByID(namespace, id)
	return recordOne(r, j), err
}

func (r *readRecorder) JobByIDAndVersion(namespace, id string, version uint64) (*structs.Job, error) {
	j, err := r.State.JobByIDAndVersion(namespace, id, version)
	return recordOne(r, j), err
}

func (r *readRecorder) AllocByID(id string) (*structs.Allocation, error) {
	a, err := r.State.AllocByID(id)
	return recordOne(r, a), err
}

func (r *readRecorder) AllocsByJob(namespace, jobID string, anyCreateIndex bool) ([]*structs.Allocation, error) {
	as, err := r.State.AllocsByJob(namespace, jobID, anyCreateIndex)
	return recordAll(r, as), err
}

func (r *readRecorder) AllocsByNode(nodeID string) ([]*structs.Allocation, error) {
	as, err := r.State.AllocsByNode(nodeID)
	return recordAll(r, as), err
}

func (r *readRecorder) AllocsByNodeTerminal(nodeID string, terminal bool) ([]*structs.Allocation, error) {
	as, err := r.State.AllocsByNodeTerminal(nodeID, terminal)
	if !terminal && len(as) > 0 {
		r.sharedLists = append(r.sharedLists, [2][]*structs.Allocation{as, slices.Clone(as)})
	}
	return recordAll(r, as), err
}

func (r *readRecorder) EvalByID(id string) (*structs.Evaluation, error) {
	e, err := r.State.EvalByID(id)
	return recordOne(r, e), err
}

func (r *readRecorder) LatestDeploymentByJobID(namespace, jobID string) (*structs.Deployment, error) {
	d, err := r.State.LatestDeploymentByJobID(namespace, jobID)
	return recordOne(r, d), err
}

func (r *readRecorder) DeploymentByID(id string) (*structs.Deployment, error) {
	d, err := r.State.DeploymentByID(id)
	return recordOne(r, d), err
}

func (r *readRecorder) SchedulerConfig() (*structs.SchedulerConfiguration, error) {
	c, err := r.State.SchedulerConfig()
	return recordOne(r, c), err
}

// TestReadRecorderCatchesWrites checks the checker: a write into any
// object handed out, however deep, is reported; reads are not.
func TestReadRecorderCatchesWrites(t *testing.T) {
	cases := []struct {
		name  string
		write func(r *readRecorder, job *structs.Job)
		want  int
	}{
		{"reads only", func(r *readRecorder, job *structs.Job) {
			r.Nodes()
			r.AllocsByJob(job.Namespace, job.ID, true)
			r.LatestDeploymentByJobID(job.Namespace, job.ID)
		}, 0},
		{"deployment group state", func(r *readRecorder, job *structs.Job) {
			d, _ := r.LatestDeploymentByJobID(job.Namespace, job.ID)
			d.TaskGroups["web"].DesiredCanaries = 1
		}, 1},
		{"deployment group added", func(r *readRecorder, job *structs.Job) {
			d, _ := r.LatestDeploymentByJobID(job.Namespace, job.ID)
			d.TaskGroups["api"] = &structs.DeploymentState{}
		}, 1},
		{"alloc field", func(r *readRecorder, job *structs.Job) {
			as, _ := r.AllocsByJob(job.Namespace, job.ID, true)
			as[0].DesiredStatus = structs.AllocDesiredStatusStop
		}, 1},
		{"job reached through an alloc", func(r *readRecorder, job *structs.Job) {
			as, _ := r.AllocsByNode(as0Node(r, job))
			as[0].Job.TaskGroups[0].Count = 7
		}, 1},
		{"node attribute", func(r *readRecorder, job *structs.Job) {
			ns, _ := r.Nodes()
			ns[0].Attributes["x"] = "y"
		}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := NewHarness(t)
			nodes := addNodes(h, 1)
			job := mock.Job(mock.Count(10), mock.NoPorts())
			h.UpsertJob(job)
			job, _ = h.Snapshot().JobByID(job.Namespace, job.ID)
			h.UpsertAllocs(mock.Alloc(mock.ForJob(job, 0), mock.OnNode(nodes[0]), mock.ClientStatus(structs.AllocClientStatusRunning)))
			d := structs.NewDeployment(job, 50, h.Now)
			d.TaskGroups["web"] = &structs.DeploymentState{DesiredTotal: 1}
			h.write(func(tx *state.Txn) error { return tx.UpsertDeployment(d) })

			r := newReadRecorder(h.Snapshot())
			tc.write(r, job)
			got := r.changed()
			if len(got) != tc.want {
				t.Fatalf("want %d writes reported, got %v", tc.want, got)
			}
			for _, g := range got {
				t.Log(g)
			}
		})
	}
}

// as0Node returns the node of the job's first alloc.
func as0Node(r *readRecorder, job *structs.Job) string {
	as, _ := r.State.AllocsByJob(job.Namespace, job.ID, true)
	return as[0].NodeID
}
