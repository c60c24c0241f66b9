package scheduler

import (
	"testing"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

func TestHostVolumesFit(t *testing.T) {
	rw := func(source string) *structs.VolumeRequest {
		return &structs.VolumeRequest{Name: "v", Type: structs.VolumeTypeHost, Source: source}
	}
	ro := func(source string) *structs.VolumeRequest {
		r := rw(source)
		r.ReadOnly = true
		return r
	}
	reader := func(source string) *structs.VolumeRequest {
		r := rw(source)
		r.AccessMode = structs.VolumeAccessModeSingleNodeReader
		return r
	}
	perAlloc := func(r *structs.VolumeRequest) *structs.VolumeRequest {
		r.PerAlloc = true
		return r
	}
	node := mock.Node(mock.HostVolume("data", "/srv/data", false), mock.HostVolume("certs", "/etc/ssl/certs", true),
		mock.HostVolume("pg[0]", "/srv/pg0", false), mock.HostVolume("pg[2]", "/srv/pg2", true))
	cases := []struct {
		name  string
		reqs  []*structs.VolumeRequest
		index uint
		fits  bool
	}{
		{"no request", nil, 0, true},
		{"read-write on a read-write volume", []*structs.VolumeRequest{rw("data")}, 0, true},
		{"read-only on a read-write volume", []*structs.VolumeRequest{ro("data")}, 0, true},
		{"read-only on a read-only volume", []*structs.VolumeRequest{ro("certs")}, 0, true},
		// A writer is refused by a volume the node offers read-only.
		{"read-write on a read-only volume", []*structs.VolumeRequest{rw("certs")}, 0, false},
		// The reader's access mode reads only, whatever read_only says.
		{"reader access mode on a read-only volume", []*structs.VolumeRequest{reader("certs")}, 0, true},
		{"missing volume", []*structs.VolumeRequest{rw("logs")}, 0, false},
		{"every volume must fit", []*structs.VolumeRequest{rw("data"), rw("logs")}, 0, false},
		// per_alloc: alloc 0 asks for pg[0], alloc 1 for pg[1], alloc 2
		// for pg[2], which is read-only.
		{"per_alloc index 0", []*structs.VolumeRequest{perAlloc(rw("pg"))}, 0, true},
		{"per_alloc index 1 missing", []*structs.VolumeRequest{perAlloc(rw("pg"))}, 1, false},
		{"per_alloc index 2 read-only", []*structs.VolumeRequest{perAlloc(rw("pg"))}, 2, false},
		{"per_alloc index 2 read-only request", []*structs.VolumeRequest{perAlloc(ro("pg"))}, 2, true},
		{"per_alloc does not ask for the bare source", []*structs.VolumeRequest{perAlloc(rw("data"))}, 0, false},
	}
	for _, tc := range cases {
		if got := hostVolumesFit(node, tc.reqs, tc.index); got != tc.fits {
			t.Errorf("%s: fits = %v, want %v", tc.name, got, tc.fits)
		}
	}
}

func hostVolumeJob(count int, source string, perAlloc bool) *structs.Job {
	job := mock.Job(mock.Count(count), mock.NoPorts())
	tg := job.TaskGroups[0]
	tg.Volumes = map[string]*structs.VolumeRequest{"data": {
		Name: "data", Type: structs.VolumeTypeHost, Source: source, PerAlloc: perAlloc}}
	tg.Tasks[0].VolumeMounts = []*structs.VolumeMount{{Volume: "data", Destination: "/data"}}
	return job
}

// A group's host volume places its allocs on the nodes that offer it,
// and a failure names the reason in ConstraintFiltered.
func TestServiceHostVolumeFilter(t *testing.T) {
	h := NewHarness(t)
	with := mock.Node(mock.Unreserved(), mock.HostVolume("data", "/srv", false))
	readOnly := mock.Node(mock.Unreserved(), mock.HostVolume("data", "/srv", true))
	without := mock.Node(mock.Unreserved())
	h.UpsertNode(with, readOnly, without)
	job := hostVolumeJob(3, "data", false)
	h.UpsertJob(job)
	if err := h.Process(mock.Eval(mock.EvalForJob(job), mock.TriggeredBy(structs.EvalTriggerJobRegister))); err != nil {
		t.Fatal(err)
	}
	for _, a := range h.allocs(job) {
		if a.NodeID != with.ID {
			t.Errorf("alloc %s on node %s, want %s", a.Name, a.NodeID, with.ID)
		}
	}
	if len(h.allocs(job)) != 3 {
		t.Fatalf("placed %d allocs", len(h.allocs(job)))
	}

	// Nowhere to go: both other nodes are filtered for the volume.
	job2 := hostVolumeJob(1, "logs", false)
	h.UpsertJob(job2)
	if err := h.Process(mock.Eval(mock.EvalForJob(job2), mock.TriggeredBy(structs.EvalTriggerJobRegister))); err != nil {
		t.Fatal(err)
	}
	m := h.lastEval(t).FailedTGAllocs["web"]
	if m == nil || m.NodesFiltered != 3 || m.ConstraintFiltered[reasonMissingHostVolumes] != 3 {
		t.Fatalf("metric %+v", m)
	}
	// Host volumes are not in the computed class: the blocked eval waits
	// on any node change.
	if b := h.Created[len(h.Created)-1]; !b.EscapedComputedClass {
		t.Fatalf("blocked eval not escaped: %+v", b)
	}
}

// per_alloc: alloc [i] goes where "<source>[i]" is.
func TestServicePerAllocHostVolume(t *testing.T) {
	h := NewHarness(t)
	n0 := mock.Node(mock.Unreserved(), mock.HostVolume("pg[0]", "/srv/0", false))
	n1 := mock.Node(mock.Unreserved(), mock.HostVolume("pg[1]", "/srv/1", false))
	h.UpsertNode(n0, n1)
	job := hostVolumeJob(3, "pg", true)
	h.UpsertJob(job)
	if err := h.Process(mock.Eval(mock.EvalForJob(job), mock.TriggeredBy(structs.EvalTriggerJobRegister))); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		structs.AllocName(job.ID, "web", 0): n0.ID,
		structs.AllocName(job.ID, "web", 1): n1.ID,
	}
	allocs := h.allocs(job)
	if len(allocs) != 2 {
		t.Fatalf("placed %d allocs, want 2 (no node has pg[2])", len(allocs))
	}
	for _, a := range allocs {
		if want[a.Name] != a.NodeID {
			t.Errorf("%s on %s, want %s", a.Name, a.NodeID, want[a.Name])
		}
	}
	m := h.lastEval(t).FailedTGAllocs["web"]
	if m == nil || m.NodesEvaluated != 2 || m.NodesFiltered != 2 || m.ConstraintFiltered[reasonMissingHostVolumes] != 2 {
		t.Fatalf("metric %+v", m)
	}
}
