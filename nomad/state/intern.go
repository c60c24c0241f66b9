package state

import (
	"encoding/binary"
	"maps"
	"math"
	"reflect"
	"slices"
	"unsafe"

	"github.com/opennomad/nomad/structs"
)

// Every object the FSM writes was decoded from its Raft entry, so each
// of its strings is an allocation of its own: the namespace, the job,
// eval, deployment and node IDs it names, its statuses, the task group
// and task names, the five nodes and score names of its placement
// metrics. An alloc carries about a kilobyte of strings equal to ones
// the store already holds. Before a decoded object is stored, its
// strings are swapped for the equal ones held elsewhere: IDs for the
// named object's own (the node's ID, the stored job's ID), and values
// of few distinct instances (statuses, names) for one copy kept in a
// small table. Equal strings are interchangeable, so no reader can tell.
//
// Only the store the FSM writes interns: a snapshot's writes (the plan
// applier stacking plans) run beside the FSM's and hold objects others
// still read, so they are left as they are.

// internMax bounds the table of few-valued strings. The values it is
// given number in the tens (statuses, score and task names) in any
// cluster; should odd values fill it, it starts over.
const internMax = 4096

// internTable keeps one instance of each string of a field with few
// distinct values. The FSM is the store's only writer and writes one
// transaction at a time, so it needs no lock.
type internTable struct {
	m map[string]string

	// counts and summaries keep one instance of each small map seen of
	// an eval's queued allocations, an alloc's nodes available per
	// datacenter and a job summary's counts per group: most are equal to
	// many others, and even a map of one entry takes 250 to 700 bytes.
	// Stored objects never change, so equal maps may be one.
	counts    sharedMaps[int]
	summaries sharedMaps[structs.TaskGroupSummary]

	// scores keeps one instance of each node's scores seen in a
	// placement's metrics (an alloc keeps five): nodes of one shape at
	// one use score alike, so a few lists stand for thousands. metas
	// keeps one instance of each node's whole entry: a node scored
	// alike for several placements (its use unchanged between them)
	// appears in each of their metrics.
	scores   map[string]structs.NamedScores
	scoreKey []byte
	metas    map[scoreMetaKey]*structs.NodeScoreMeta

	// resources keeps one instance of each alloc's resources seen, for
	// resources without networks, ports or reserved cores: every alloc
	// of a group gets the same, and so do groups of the same size.
	resources   map[string]*structs.AllocatedResources
	resourceKey []byte

	// jobs keeps one instance of each part of the jobs stored (see
	// intern_job.go).
	jobs jobParts

	// noChildren is the children count shared by the summaries of jobs
	// that have none.
	noChildren *structs.JobChildrenSummary
}

func newInternTable() *internTable {
	return &internTable{
		m:      make(map[string]string),
		counts: sharedMaps[int]{encode: appendInt},
		jobs:   jobParts{metas: sharedMaps[string]{encode: appendConfigString}},
		summaries: sharedMaps[structs.TaskGroupSummary]{encode: func(b []byte, s structs.TaskGroupSummary) []byte {
			for _, n := range []int{s.Queued, s.Complete, s.Failed, s.Running, s.Starting, s.Lost, s.Unknown} {
				b = appendInt(b, n)
			}
			return b
		}},
	}
}

func appendInt(b []byte, n int) []byte { return binary.AppendVarint(b, int64(n)) }

// sharedMaps keeps one instance of each map of V by name seen, found by
// a key encoding its content. The key only finds a candidate: a map is
// shared only with one found equal, so a key that misses a field of V
// costs sharing, never correctness.
type sharedMaps[V comparable] struct {
	kept   map[string]map[string]V
	encode func([]byte, V) []byte
	key    []byte
}

// sharedMapMaxLen bounds the maps shared: a large one is rarely equal to
// another and costly to compare.
const sharedMapMaxLen = 8

// share returns the kept map equal to m, keeping a copy of m if there is
// none. nil stays nil and an empty map stays an empty map.
func (s *sharedMaps[V]) share(t *internTable, m map[string]V) map[string]V {
	if m == nil || len(m) > sharedMapMaxLen {
		return m
	}
	var names [sharedMapMaxLen]string
	sorted := names[:0]
	for k := range m {
		sorted = append(sorted, k)
	}
	slices.Sort(sorted)
	key := s.key[:0]
	for _, k := range sorted {
		key = binary.AppendUvarint(key, uint64(len(k)))
		key = append(key, k...)
		key = s.encode(key, m[k])
	}
	s.key = key
	if kept, ok := s.kept[string(key)]; ok && maps.Equal(kept, m) {
		return kept
	}
	if s.kept == nil || len(s.kept) >= internMax {
		s.kept = make(map[string]map[string]V)
	}
	// A copy with kept names: m itself may be a stored object's, which
	// others read.
	c := make(map[string]V, len(m))
	for k, v := range m {
		c[t.str(k)] = v
	}
	s.kept[string(key)] = c
	return c
}

// str returns the kept instance equal to s, keeping s if there is none.
func (t *internTable) str(s string) string {
	if s == "" {
		return s
	}
	if v, ok := t.m[s]; ok {
		return v
	}
	if len(t.m) >= internMax {
		clear(t.m)
	}
	t.m[s] = s
	return s
}

// set replaces *p with the kept instance. It writes only when that is
// another instance, so interning an object twice writes nothing the
// second time.
func (t *internTable) set(p *string) { swap(p, t.str(*p)) }

// keys replaces a map's keys with their kept instances, in place: storing
// to a key that is present replaces the key with the one given (the
// runtime updates string keys on assignment), so the map neither grows
// nor moves. Only for maps no one else holds yet.
func internKeys[V any](t *internTable, m map[string]V) {
	for k, v := range m {
		if s := t.str(k); !sameInstance(s, k) {
			m[s] = v
		}
	}
}

// sameInstance reports whether two equal strings share their bytes.
func sameInstance(a, b string) bool {
	return unsafe.StringData(a) == unsafe.StringData(b)
}

// swap sets *p to s, an equal string, unless it is that instance already.
func swap(p *string, s string) {
	if !sameInstance(*p, s) {
		*p = s
	}
}

// sameAs replaces *p with canonical when they are equal.
func sameAs(p *string, canonical string) {
	if *p == canonical {
		swap(p, canonical)
	}
}

// nodeStrings points id (and name, if not nil) at the node's own strings.
func (tx *Txn) nodeStrings(id, name *string) {
	if *id == "" {
		return
	}
	n, err := nodeByID(tx.txn, nil, *id)
	if err != nil || n == nil {
		return
	}
	swap(id, n.ID)
	if name != nil {
		sameAs(name, n.Name)
	}
}

// jobStrings points namespace and id at the stored job's strings.
func (tx *Txn) jobStrings(namespace, id *string) {
	j, err := jobByID(tx.txn, nil, *namespace, *id)
	if err != nil || j == nil {
		return
	}
	swap(namespace, j.Namespace)
	swap(id, j.ID)
}

// evalString points id at the stored eval's ID.
func (tx *Txn) evalString(id *string) {
	if *id == "" {
		return
	}
	if e, err := evalByID(tx.txn, nil, *id); err == nil && e != nil {
		swap(id, e.ID)
	}
}

// deploymentString points id at the stored deployment's ID.
func (tx *Txn) deploymentString(id *string) {
	if *id == "" {
		return
	}
	if d, err := deploymentByID(tx.txn, nil, *id); err == nil && d != nil {
		swap(id, d.ID)
	}
}

// internAlloc swaps the strings of an alloc about to be stored over
// existing (nil for a new one). A new alloc was decoded from the entry,
// so its maps and the structs it points to are its own and are interned
// too; of an update only its own fields are (it may share the rest with
// the stored alloc).
func (tx *Txn) internAlloc(a *structs.Allocation, existing *structs.Allocation) {
	t := tx.intern
	if t == nil {
		return
	}
	fresh := existing == nil
	if existing != nil {
		sameAs(&a.ID, existing.ID)
	}
	if a.Job != nil {
		sameAs(&a.Namespace, a.Job.Namespace)
		sameAs(&a.JobID, a.Job.ID)
	} else {
		tx.jobStrings(&a.Namespace, &a.JobID)
	}
	tx.nodeStrings(&a.NodeID, &a.NodeName)
	tx.evalString(&a.EvalID)
	tx.deploymentString(&a.DeploymentID)
	t.set(&a.TaskGroup)
	t.set(&a.DesiredStatus)
	t.set(&a.DesiredDescription)
	t.set(&a.ClientStatus)
	t.set(&a.ClientDescription)
	if !fresh {
		return
	}
	if m := a.Metrics; m != nil {
		t.set(&m.NodePool)
		m.NodesAvailable = t.counts.share(t, m.NodesAvailable)
		m.ClassFiltered = t.counts.share(t, m.ClassFiltered)
		m.ConstraintFiltered = t.counts.share(t, m.ConstraintFiltered)
		m.ClassExhausted = t.counts.share(t, m.ClassExhausted)
		m.DimensionExhausted = t.counts.share(t, m.DimensionExhausted)
		internKeys(t, m.Scores)
		for i, s := range m.ScoreMetaData {
			if s == nil {
				continue
			}
			tx.nodeStrings(&s.NodeID, nil)
			s.Scores = t.shareScores(s.Scores)
			m.ScoreMetaData[i] = t.shareScoreMeta(s)
		}
	}
	if r := a.AllocatedResources; r != nil {
		internKeys(t, r.Tasks)
		a.AllocatedResources = t.shareResources(r)
	}
	tx.internTaskStates(a.TaskStates)
}

// internTaskStates swaps the task names and states of a client's report.
func (tx *Txn) internTaskStates(states map[string]*structs.TaskState) {
	t := tx.intern
	if t == nil {
		return
	}
	internKeys(t, states)
	for _, s := range states {
		if s == nil {
			continue
		}
		t.set(&s.State)
		for _, e := range s.Events {
			if e != nil {
				t.set(&e.Type)
			}
		}
	}
}

// internEval swaps the strings of an eval about to be stored, and its
// queued allocations for an equal map kept. Its maps are not changed in
// place: callers may pass a copy of a stored eval.
func (tx *Txn) internEval(e, existing *structs.Evaluation) {
	t := tx.intern
	if t == nil {
		return
	}
	if existing != nil {
		sameAs(&e.ID, existing.ID)
	}
	tx.jobStrings(&e.Namespace, &e.JobID)
	tx.deploymentString(&e.DeploymentID)
	tx.nodeStrings(&e.NodeID, nil)
	t.set(&e.Type)
	t.set(&e.TriggeredBy)
	t.set(&e.Status)
	t.set(&e.StatusDescription)
	e.QueuedAllocations = t.counts.share(t, e.QueuedAllocations)
}

// internDeployment swaps the strings of a deployment about to be stored;
// its maps are left alone, as for evals.
func (tx *Txn) internDeployment(d, existing *structs.Deployment) {
	t := tx.intern
	if t == nil {
		return
	}
	if existing != nil {
		sameAs(&d.ID, existing.ID)
	}
	tx.jobStrings(&d.Namespace, &d.JobID)
	t.set(&d.Status)
	t.set(&d.StatusDescription)
}

// internNode swaps the few-valued strings of a node about to be stored.
// Every evaluation reads the status, pool, datacenter and class of every
// node: with one instance of each value, that scan compares pointers and
// hashes bytes already in the cache.
func (tx *Txn) internNode(n *structs.Node) {
	t := tx.intern
	if t == nil {
		return
	}
	t.set(&n.Status)
	t.set(&n.SchedulingEligibility)
	t.set(&n.NodePool)
	t.set(&n.Datacenter)
	t.set(&n.NodeClass)
	t.set(&n.ComputedClass)
}

// internJob swaps the top-level strings of a job about to be stored. Its
// groups and tasks are left alone: a caller may pass a shallow copy of a
// stored job, whose parts others are reading.
func (tx *Txn) internJob(j *structs.Job) {
	t := tx.intern
	if t == nil {
		return
	}
	sameAs(&j.Name, j.ID)
	t.set(&j.Namespace)
	t.set(&j.Region)
	t.set(&j.Type)
	t.set(&j.NodePool)
	t.set(&j.Status)
}

// shareScores returns the kept scores equal to s, keeping s with its
// names interned if there are none. s must be a new alloc's, which
// nothing else holds. The key holds every name and the bits of every
// score, so equal keys are equal scores; -0 and 0 differ, as their
// encodings do.
func (t *internTable) shareScores(s structs.NamedScores) structs.NamedScores {
	if len(s) == 0 {
		return s
	}
	key := t.scoreKey[:0]
	for _, e := range s {
		key = binary.AppendUvarint(key, uint64(len(e.Name)))
		key = append(key, e.Name...)
		key = binary.LittleEndian.AppendUint64(key, math.Float64bits(e.Score))
	}
	t.scoreKey = key
	if kept, ok := t.scores[string(key)]; ok {
		return kept
	}
	if t.scores == nil || len(t.scores) >= internMax {
		t.scores = make(map[string]structs.NamedScores)
		t.metas = nil
	}
	for i := range s {
		t.set(&s[i].Name)
	}
	t.scores[string(key)] = s
	return s
}

// scoreMetaKey identifies a node's score entry whose scores are a kept
// list: equal kept lists are one instance, so the list's address stands
// for its content (the kept entry holds the list, so the address cannot
// be reused while the key is known).
type scoreMetaKey struct {
	node   string
	norm   uint64
	scores *structs.NamedScore
	n      int
}

// shareScoreMeta returns the kept entry equal to m, keeping m if there
// is none. m's scores must come from shareScores and m must be a new
// alloc's.
func (t *internTable) shareScoreMeta(m *structs.NodeScoreMeta) *structs.NodeScoreMeta {
	if len(m.Scores) == 0 {
		return m
	}
	k := scoreMetaKey{node: m.NodeID, norm: math.Float64bits(m.NormScore), scores: &m.Scores[0], n: len(m.Scores)}
	return keep(&t.metas, k, m)
}

// keep returns the value kept under k in *table, or keeps v there when
// there is none. A table that reaches internMax starts over, so it holds
// recent values and never grows without bound.
func keep[K comparable, V any](table *map[K]V, k K, v V) V {
	if kept, ok := (*table)[k]; ok {
		return kept
	}
	if *table == nil || len(*table) >= internMax {
		*table = make(map[K]V)
	}
	(*table)[k] = v
	return v
}

// shareSummaryMaps swaps the counts of the summaries this transaction
// wrote for equal ones kept. It runs when the transaction's writes are
// done: until then it edits the summaries it owns in place.
func (tx *Txn) shareSummaryMaps() {
	t := tx.intern
	if t == nil {
		return
	}
	for _, s := range tx.summaries {
		t.shareSummary(s)
	}
}

// shareSummary swaps a summary's counts for equal ones kept, and its
// children's counts, when all zero (a job that launches no children),
// for the one zero count kept. The summary must be one nothing else
// holds yet; a later write copies it (JobSummary.Copy) before counting.
func (t *internTable) shareSummary(s *structs.JobSummary) {
	s.Summary = t.summaries.share(t, s.Summary)
	if s.Children != nil && *s.Children == (structs.JobChildrenSummary{}) {
		if t.noChildren == nil {
			t.noChildren = s.Children
		}
		s.Children = t.noChildren
	}
}

// shareResources returns the kept resources equal to r, keeping r if
// there are none. r must be a new alloc's, which nothing else holds.
// The key only finds a candidate; it is shared only if deeply equal.
func (t *internTable) shareResources(r *structs.AllocatedResources) *structs.AllocatedResources {
	if len(r.Tasks) > sharedMapMaxLen || len(r.Shared.Networks) > 0 || len(r.Shared.Ports) > 0 {
		return r
	}
	var names [sharedMapMaxLen]string
	sorted := names[:0]
	for k, task := range r.Tasks {
		if task == nil || len(task.Networks) > 0 || len(task.Cpu.ReservedCores) > 0 {
			return r
		}
		sorted = append(sorted, k)
	}
	slices.Sort(sorted)
	key := t.resourceKey[:0]
	for _, k := range sorted {
		task := r.Tasks[k]
		key = binary.AppendUvarint(key, uint64(len(k)))
		key = append(key, k...)
		key = binary.AppendVarint(key, task.Cpu.CpuShares)
		key = binary.AppendVarint(key, task.Memory.MemoryMB)
		key = binary.AppendVarint(key, task.Memory.MemoryMaxMB)
	}
	key = binary.AppendVarint(key, r.Shared.DiskMB)
	key = binary.AppendUvarint(key, uint64(len(r.TaskLifecycles)))
	t.resourceKey = key
	if kept, ok := t.resources[string(key)]; ok && reflect.DeepEqual(kept, r) {
		return kept
	}
	if t.resources == nil || len(t.resources) >= internMax {
		t.resources = make(map[string]*structs.AllocatedResources)
	}
	t.resources[string(key)] = r
	return r
}
