package state

import (
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
}

func newInternTable() *internTable {
	return &internTable{m: make(map[string]string)}
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
		internKeys(t, m.NodesAvailable)
		internKeys(t, m.ClassFiltered)
		internKeys(t, m.ConstraintFiltered)
		internKeys(t, m.ClassExhausted)
		internKeys(t, m.DimensionExhausted)
		internKeys(t, m.Scores)
		for _, s := range m.ScoreMetaData {
			if s == nil {
				continue
			}
			tx.nodeStrings(&s.NodeID, nil)
			internKeys(t, s.Scores)
		}
	}
	if r := a.AllocatedResources; r != nil {
		internKeys(t, r.Tasks)
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

// internEval swaps the strings of an eval about to be stored. Its maps
// are left alone: callers may pass a copy of a stored eval.
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
