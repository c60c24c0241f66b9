package state

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"reflect"

	"github.com/hashicorp/go-memdb"
	"github.com/hashicorp/go-msgpack/v2/codec"

	"github.com/opennomad/nomad/structs"
)

// SnapshotType is the first byte of each record of a persisted store,
// naming the kind of object the msgpack body holds. The numbers are part
// of the on-disk format of Raft snapshots and follow Nomad's: never
// renumber or reuse one. Numbers not listed belong to objects this server
// does not store.
type SnapshotType byte

// Record types, numbered as in Nomad.
const (
	NodeSnapshot            SnapshotType = 0
	JobSnapshot             SnapshotType = 1
	IndexSnapshot           SnapshotType = 2
	EvalSnapshot            SnapshotType = 3
	AllocSnapshot           SnapshotType = 4
	PeriodicLaunchSnapshot  SnapshotType = 6
	JobSummarySnapshot      SnapshotType = 7
	JobVersionSnapshot      SnapshotType = 9
	DeploymentSnapshot      SnapshotType = 10
	SchedulerConfigSnapshot SnapshotType = 13
	ClusterMetadataSnapshot SnapshotType = 14

	// NodeAllocIndexSnapshot is ours: Nomad has no such record. It is
	// numbered far above Nomad's so that the two never meet, and below
	// 128 so that the type byte reads as one msgpack positive fixint.
	NodeAllocIndexSnapshot SnapshotType = 100
	// RootKeySnapshot is ours too: Nomad keeps its keys' metadata and
	// wrapped material in two records of other shapes.
	RootKeySnapshot SnapshotType = 101
	// The ACL objects are ours too (Nomad numbers its own elsewhere).
	// The bootstrap record is a row of the index table.
	ACLPolicySnapshot    SnapshotType = 102
	ACLTokenSnapshot     SnapshotType = 103
	ACLRoleSnapshot      SnapshotType = 104
	OneTimeTokenSnapshot SnapshotType = 105
	// NamespaceSnapshot is ours too, numbered after the ACL objects.
	NamespaceSnapshot SnapshotType = 106
	NodePoolSnapshot  SnapshotType = 107
	// VariablesSnapshot holds variables, their items sealed as stored.
	VariablesSnapshot SnapshotType = 108
	// ScalingEventsSnapshot is ours too: a job's scaling events.
	ScalingEventsSnapshot SnapshotType = 109
	// Auth methods and binding rules are ours too.
	ACLAuthMethodSnapshot  SnapshotType = 110
	ACLBindingRuleSnapshot SnapshotType = 111
	// AutopilotConfigSnapshot is ours too (Nomad keeps it elsewhere).
	AutopilotConfigSnapshot SnapshotType = 113
	// JobSubmissionSnapshot holds the sources of job versions (Nomad has
	// a record for them too, numbered in its own range).
	JobSubmissionSnapshot SnapshotType = 114
	// ServiceRegistrationSnapshot is ours too: native service
	// registrations.
	ServiceRegistrationSnapshot SnapshotType = 112
	// HostVolumeSnapshot holds dynamic host volumes (ours; Nomad's is 31).
	HostVolumeSnapshot SnapshotType = 115
)

// SnapshotHeader opens a persisted store. It is empty today; fields may
// be added, which older readers ignore.
type SnapshotHeader struct{}

// persistOrder lists the tables in the order they are written. Job
// versions come before allocs so that a restore can point each alloc at
// the version object it already holds instead of keeping its own copy.
var persistOrder = []struct {
	table string
	typ   SnapshotType
}{
	{TableIndex, IndexSnapshot},
	{TableNodes, NodeSnapshot},
	{TableJobs, JobSnapshot},
	{TableJobVersion, JobVersionSnapshot},
	{TableJobSummary, JobSummarySnapshot},
	{TableEvals, EvalSnapshot},
	{TableAllocs, AllocSnapshot},
	{TablePeriodicLaunch, PeriodicLaunchSnapshot},
	{TableDeployment, DeploymentSnapshot},
	{TableSchedulerConfig, SchedulerConfigSnapshot},
	{TableClusterMeta, ClusterMetadataSnapshot},
	{TableAutopilotConfig, AutopilotConfigSnapshot},
	{TableNodeAllocIndex, NodeAllocIndexSnapshot},
	{TableRootKeys, RootKeySnapshot},
	{TableACLPolicies, ACLPolicySnapshot},
	{TableACLTokens, ACLTokenSnapshot},
	{TableACLRoles, ACLRoleSnapshot},
	{TableACLAuthMethods, ACLAuthMethodSnapshot},
	{TableACLBindingRules, ACLBindingRuleSnapshot},
	{TableOneTimeTokens, OneTimeTokenSnapshot},
	{TableNamespaces, NamespaceSnapshot},
	{TableNodePools, NodePoolSnapshot},
	{TableVariables, VariablesSnapshot},
	{TableScalingEvents, ScalingEventsSnapshot},
	{TableJobSubmissions, JobSubmissionSnapshot},
	{TableServiceRegistrations, ServiceRegistrationSnapshot},
	{TableHostVolumes, HostVolumeSnapshot},
}

// Persist writes the whole snapshot to w: a msgpack SnapshotHeader, then
// one record per object, each a SnapshotType byte followed by the msgpack
// object (structs.MsgpackHandle). Raft calls it on its own goroutine
// while the FSM keeps applying; the snapshot does not change meanwhile.
func (s *StateSnapshot) Persist(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := codec.NewEncoder(bw, structs.MsgpackHandle)
	if err := enc.Encode(&SnapshotHeader{}); err != nil {
		return fmt.Errorf("writing snapshot header: %w", err)
	}
	txn := s.db.Txn(false)
	for _, p := range persistOrder {
		it, err := txn.Get(p.table, indexID)
		if err != nil {
			return fmt.Errorf("reading table %q: %w", p.table, err)
		}
		for raw := it.Next(); raw != nil; raw = it.Next() {
			// The encoder flushes into bw after every value, so the type
			// byte written beside it lands in order.
			if err := bw.WriteByte(byte(p.typ)); err != nil {
				return fmt.Errorf("writing %q record: %w", p.table, err)
			}
			if err := enc.Encode(raw); err != nil {
				return fmt.Errorf("writing %q record: %w", p.table, err)
			}
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing snapshot: %w", err)
	}
	return nil
}

// Restore builds a new store from what Persist wrote. The FSM swaps it in
// for the old store and then abandons the old one, which wakes everything
// blocked on it. Unknown record types are an error: a snapshot from a
// newer server must not be half-read.
//
// Decoding the records costs about as much as storing them (interning,
// sharing job versions, indexing), and a restarting server has nothing
// else to do, so a goroutine decodes while this one stores: the decoded
// objects are handed over in batches, in order, and are not touched by
// the decoder once sent.
func Restore(r io.Reader, config *Config) (*StateStore, error) {
	s, err := NewStateStore(config)
	if err != nil {
		return nil, err
	}
	// The decoder reads through one buffered reader; the type bytes go
	// through the decoder too (a byte below 0x80 is a msgpack positive
	// fixint of the same value), so nothing reads around it.
	dec := codec.NewDecoder(bufio.NewReaderSize(r, 64<<10), structs.MsgpackHandle)
	var header SnapshotHeader
	if err := dec.Decode(&header); err != nil {
		return nil, fmt.Errorf("reading snapshot header: %w", err)
	}

	batches := make(chan []snapshotRecord, restoreQueue)
	stop := make(chan struct{})
	var decodeErr error
	go func() {
		// decodeErr is read after batches is closed.
		defer close(batches)
		decodeErr = decodeRecords(dec, batches, stop)
	}()
	// On any return, stop the decoder and wait for it: r is the
	// caller's to close once Restore returns.
	defer func() {
		close(stop)
		for range batches {
		}
	}()

	txn := s.db.Txn(true)
	defer txn.Abort()
	rs := &restorer{txn: txn, tx: &Txn{txn: txn, intern: s.intern}, jobs: make(map[jobVersionKey][]*structs.Job)}
	n := 0
	for batch := range batches {
		for _, rec := range batch {
			if err := rs.restore(rec); err != nil {
				return nil, fmt.Errorf("snapshot record %d: %w", n, err)
			}
			n++
		}
	}
	if decodeErr != nil {
		return nil, decodeErr
	}
	if err := rebuildLiveAllocs(txn); err != nil {
		return nil, err
	}
	counts, err := recountBacklog(txn)
	if err != nil {
		return nil, err
	}
	txn.Commit()
	s.backlog.c = counts
	return s, nil
}

// restoreBatch is the number of records the decoder hands over at once,
// restoreQueue the batches it may decode ahead of the store.
const (
	restoreBatch = 256
	restoreQueue = 4
)

// snapshotRecord is one decoded record: the table it goes to and the
// object.
type snapshotRecord struct {
	table string
	obj   interface{}
}

// decodeRecords decodes the records after the header and sends them to
// out in batches until the end of the stream, an error, or stop.
func decodeRecords(dec *codec.Decoder, out chan<- []snapshotRecord, stop <-chan struct{}) error {
	batch := make([]snapshotRecord, 0, restoreBatch)
	send := func() bool {
		select {
		case out <- batch:
			batch = make([]snapshotRecord, 0, restoreBatch)
			return true
		case <-stop:
			return false
		}
	}
	for n := 0; ; n++ {
		var typ uint8
		if err := dec.Decode(&typ); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return fmt.Errorf("reading type of snapshot record %d: %w", n, err)
		}
		rec, err := decodeRecord(dec, SnapshotType(typ))
		if err != nil {
			return fmt.Errorf("snapshot record %d: %w", n, err)
		}
		batch = append(batch, rec)
		if len(batch) == restoreBatch && !send() {
			return nil
		}
	}
	if len(batch) > 0 {
		send()
	}
	return nil
}

type jobVersionKey struct {
	namespace, id string
	version       uint64
	modifyIndex   uint64
}

func versionKey(j *structs.Job) jobVersionKey {
	return jobVersionKey{j.Namespace, j.ID, j.Version, j.JobModifyIndex}
}

// restorer inserts decoded records into a fresh store.
type restorer struct {
	txn *memdb.Txn
	// tx wraps txn for interning the restored objects' strings, as the
	// FSM's writes do (see intern.go).
	tx *Txn
	// jobs holds the distinct decoded objects seen per job version (the
	// jobs table's, the versions table's, the ones allocs carried), so
	// that the thousands of allocs of a job share one object as they did
	// before the snapshot, instead of each keeping a private copy.
	jobs map[jobVersionKey][]*structs.Job
	// deploymentIDs holds the first instance seen of each deployment ID:
	// deployments are restored after the evals and allocs that name
	// them, so these cannot point at the deployment's own, as the FSM's
	// writes do; all of them point at the first one instead.
	deploymentIDs map[string]string
}

// deploymentID points *id at the first instance of it restored.
func (rs *restorer) deploymentID(id *string) {
	if *id == "" {
		return
	}
	if kept, ok := rs.deploymentIDs[*id]; ok {
		swap(id, kept)
		return
	}
	if rs.deploymentIDs == nil {
		rs.deploymentIDs = make(map[string]string)
	}
	rs.deploymentIDs[*id] = *id
}

// maxSharedVariants bounds the objects remembered per job version; they
// differ only in server-maintained fields such as Status.
const maxSharedVariants = 4

// share returns an already restored object equal to j, or remembers j.
func (rs *restorer) share(j *structs.Job) *structs.Job {
	k := versionKey(j)
	seen := rs.jobs[k]
	for _, c := range seen {
		if sameServerFields(c, j) && reflect.DeepEqual(c, j) {
			return c
		}
	}
	if len(seen) > 0 {
		shareJobParts(j, seen[0])
	}
	if len(seen) < maxSharedVariants {
		rs.jobs[k] = append(seen, j)
	}
	return j
}

// sameServerFields compares the fields in which the variants of one job
// version differ, the ones the servers set. They come last in a Job, so
// comparing them first spares reflect.DeepEqual a walk through the task
// groups of every variant that is not the one.
func sameServerFields(a, b *structs.Job) bool {
	return a.Status == b.Status && a.StatusDescription == b.StatusDescription &&
		a.Stable == b.Stable && a.SubmitTime == b.SubmitTime &&
		a.CreateIndex == b.CreateIndex && a.ModifyIndex == b.ModifyIndex &&
		a.Stop == b.Stop
}

// shareJobParts points each pointer, slice and map of j at from's where
// they are deeply equal. The variants of one job version differ only in
// fields the servers set on the job itself (status, stability, tag): in
// the live store they are shallow copies sharing everything below, and
// restored they share it again instead of each keeping a copy of the
// task groups.
func shareJobParts(j, from *structs.Job) {
	jv, fv := reflect.ValueOf(j).Elem(), reflect.ValueOf(from).Elem()
	for i := range jv.NumField() {
		f := jv.Field(i)
		switch f.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Map:
		default:
			continue
		}
		if !f.CanSet() || f.IsNil() {
			continue
		}
		if g := fv.Field(i); reflect.DeepEqual(f.Interface(), g.Interface()) {
			f.Set(g)
		}
	}
}

// decodeRecord decodes the object of a record of type typ.
func decodeRecord(dec *codec.Decoder, typ SnapshotType) (snapshotRecord, error) {
	var (
		table string
		obj   interface{}
	)
	switch typ {
	case IndexSnapshot:
		table, obj = TableIndex, new(IndexEntry)
	case NodeSnapshot:
		table, obj = TableNodes, new(structs.Node)
	case JobSnapshot:
		table, obj = TableJobs, new(structs.Job)
	case JobVersionSnapshot:
		table, obj = TableJobVersion, new(structs.Job)
	case JobSummarySnapshot:
		table, obj = TableJobSummary, new(structs.JobSummary)
	case EvalSnapshot:
		table, obj = TableEvals, new(structs.Evaluation)
	case AllocSnapshot:
		table, obj = TableAllocs, new(structs.Allocation)
	case PeriodicLaunchSnapshot:
		table, obj = TablePeriodicLaunch, new(structs.PeriodicLaunch)
	case DeploymentSnapshot:
		table, obj = TableDeployment, new(structs.Deployment)
	case SchedulerConfigSnapshot:
		table, obj = TableSchedulerConfig, new(structs.SchedulerConfiguration)
	case AutopilotConfigSnapshot:
		table, obj = TableAutopilotConfig, new(structs.AutopilotConfig)
	case ClusterMetadataSnapshot:
		table, obj = TableClusterMeta, new(structs.ClusterMetadata)
	case NodeAllocIndexSnapshot:
		table, obj = TableNodeAllocIndex, new(NodeAllocIndex)
	case RootKeySnapshot:
		table, obj = TableRootKeys, new(structs.RootKey)
	case ACLPolicySnapshot:
		table, obj = TableACLPolicies, new(structs.ACLPolicy)
	case ACLTokenSnapshot:
		table, obj = TableACLTokens, new(structs.ACLToken)
	case ACLRoleSnapshot:
		table, obj = TableACLRoles, new(structs.ACLRole)
	case ACLAuthMethodSnapshot:
		table, obj = TableACLAuthMethods, new(structs.ACLAuthMethod)
	case ACLBindingRuleSnapshot:
		table, obj = TableACLBindingRules, new(structs.ACLBindingRule)
	case OneTimeTokenSnapshot:
		table, obj = TableOneTimeTokens, new(structs.OneTimeToken)
	case NamespaceSnapshot:
		table, obj = TableNamespaces, new(structs.Namespace)
	case NodePoolSnapshot:
		table, obj = TableNodePools, new(structs.NodePool)
	case VariablesSnapshot:
		table, obj = TableVariables, new(structs.VariableEncrypted)
	case ScalingEventsSnapshot:
		table, obj = TableScalingEvents, new(structs.JobScalingEvents)
	case JobSubmissionSnapshot:
		table, obj = TableJobSubmissions, new(structs.JobSubmission)
	case ServiceRegistrationSnapshot:
		table, obj = TableServiceRegistrations, new(structs.ServiceRegistration)
	case HostVolumeSnapshot:
		table, obj = TableHostVolumes, new(structs.HostVolume)
	default:
		return snapshotRecord{}, fmt.Errorf("unknown snapshot record type %d", typ)
	}
	if err := dec.Decode(obj); err != nil {
		return snapshotRecord{}, fmt.Errorf("decoding %q record: %w", table, err)
	}
	return snapshotRecord{table: table, obj: obj}, nil
}

// restore stores a decoded record, its strings interned and its job
// shared with an equal one already restored.
func (rs *restorer) restore(rec snapshotRecord) error {
	table, obj := rec.table, rec.obj
	switch o := obj.(type) {
	case *structs.Node:
		rs.tx.internNode(o)
	case *structs.Job:
		// A version's (and an alloc's) ID is the job's, restored first.
		rs.tx.jobStrings(&o.Namespace, &o.ID)
		rs.tx.internJob(o)
		rs.tx.InternJobParts(o)
		rs.share(o)
	case *structs.Allocation:
		if o.Job != nil {
			rs.tx.jobStrings(&o.Job.Namespace, &o.Job.ID)
			rs.tx.internJob(o.Job)
			rs.tx.InternJobParts(o.Job)
			o.Job = rs.share(o.Job)
		}
		rs.tx.internAlloc(o, nil)
		rs.deploymentID(&o.DeploymentID)
	case *structs.Evaluation:
		rs.tx.internEval(o, nil)
		rs.deploymentID(&o.DeploymentID)
	case *structs.Deployment:
		rs.tx.internDeployment(o, nil)
		rs.deploymentID(&o.ID)
	case *structs.JobSummary:
		rs.tx.jobStrings(&o.Namespace, &o.JobID)
		rs.tx.intern.shareSummary(o)
	}
	if err := rs.txn.Insert(table, obj); err != nil {
		return fmt.Errorf("restoring %q record: %w", table, err)
	}
	return nil
}
