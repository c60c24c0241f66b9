package state

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/hashicorp/go-msgpack/v2/codec"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

// populatedStore fills a store with every kind of object: nodes, jobs
// with several versions, summaries, evals, deployments, allocations
// (with client state), configuration and cluster metadata.
func populatedStore(t testing.TB, numAllocs int) *StateStore {
	t.Helper()
	s := testStore(t)
	index := uint64(1)
	next := func() uint64 { index++; return index }

	var nodes []*structs.Node
	for i := 0; i < 200; i++ {
		n := mockNode()
		n.Name = fmt.Sprintf("node-%d", i)
		must.NoError(t, s.UpsertNode(next(), n))
		nodes = append(nodes, n)
	}
	drain := &structs.DrainStrategy{DrainSpec: structs.DrainSpec{Deadline: time.Hour},
		ForceDeadline: time.Unix(1_700_003_600, 0).UTC(), StartedAt: time.Unix(1_700_000_000, 0).UTC()}
	must.NoError(t, s.UpdateNodeDrain(next(), nodes[0].ID, drain, false, 1_700_000_000, nil, map[string]string{"why": "test"}))

	var jobs []*structs.Job
	for i := 0; i < 50; i++ {
		j := mockJob()
		j.ID = fmt.Sprintf("job-%03d", i)
		if i%10 == 0 {
			j.Namespace = "prod"
		}
		must.NoError(t, s.UpsertJob(next(), j))
		v2 := mockJob()
		v2.ID, v2.Namespace = j.ID, j.Namespace
		v2.Meta = map[string]string{"rev": "2"}
		must.NoError(t, s.UpsertJob(next(), v2))
		stored, err := s.JobByID(nil, j.Namespace, j.ID)
		must.NoError(t, err)
		jobs = append(jobs, stored)

		ev := mockEval(stored)
		ev.Status = structs.EvalStatusComplete
		ev.QueuedAllocations = map[string]int{"web": 0}
		ev.FailedTGAllocs = map[string]*structs.AllocMetric{"web": {NodesEvaluated: 3,
			DimensionExhausted: map[string]int{"cpu": 3}}}
		blocked := mockEval(stored)
		blocked.Status = structs.EvalStatusBlocked
		blocked.WaitUntil = time.Unix(1_700_000_500, 0).UTC()
		must.NoError(t, s.UpsertEvals(next(), []*structs.Evaluation{ev, blocked}))

		d := mockDeployment(stored)
		d.TaskGroups["web"].RequireProgressBy = time.Unix(1_700_000_900, 0).UTC()
		must.NoError(t, s.UpsertDeployment(next(), d))
	}

	// Scaling events, one with a count and an eval, one error only.
	count, evalID := int64(3), structs.GenerateUUID()
	must.NoError(t, s.UpsertScalingEvent(next(), &structs.ScalingEventRequest{Namespace: jobs[1].Namespace,
		JobID: jobs[1].ID, TaskGroup: "web", ScalingEvent: &structs.ScalingEvent{Time: 1_700_000_000_000_000_000,
			Count: &count, PreviousCount: 1, Message: "up", Meta: map[string]interface{}{"by": "test"}, EvalID: &evalID}}))
	must.NoError(t, s.UpsertScalingEvent(next(), &structs.ScalingEventRequest{Namespace: jobs[1].Namespace,
		JobID: jobs[1].ID, TaskGroup: "web", ScalingEvent: &structs.ScalingEvent{Time: 1_700_000_000_000_000_001,
			PreviousCount: 3, Message: "autoscaler failed", Error: true}}))
	// The source of a job version.
	src := mockJob()
	src.ID = "with-source"
	must.NoError(t, s.WithWriteTxn(next(), func(tx *Txn) error {
		if err := tx.UpsertJob(src); err != nil {
			return err
		}
		return tx.UpsertJobSubmission(src.Namespace, src.ID, &structs.JobSubmission{Source: "job \"with-source\" {}",
			Format: "hcl2", VariableFlags: map[string]string{"x": "1"}, Variables: "y = 2"})
	}))
	// A tagged version.
	must.NoError(t, s.UpdateJobVersionTag(next(), jobs[2].Namespace, &structs.JobApplyTagRequest{JobID: jobs[2].ID,
		Name: "golden", Version: 0, Tag: &structs.JobVersionTag{Name: "golden", Description: "first", TaggedTime: 1}}))

	// A periodic template records its registration as its first launch.
	tmpl := mockJob()
	tmpl.ID, tmpl.Type = "report", structs.JobTypeBatch
	tmpl.Periodic = &structs.PeriodicConfig{Enabled: true, Spec: "*/5 * * * *"}
	must.NoError(t, s.UpsertJob(next(), tmpl))

	healthy := true
	batch := make([]*structs.Allocation, 0, 1000)
	flush := func() {
		must.NoError(t, s.UpsertAllocs(next(), batch))
		var updates []*structs.Allocation
		for _, a := range batch {
			updates = append(updates, &structs.Allocation{
				ID: a.ID, ClientStatus: structs.AllocClientStatusRunning, ModifyTime: 1_700_000_001_000_000_000,
				TaskStates: map[string]*structs.TaskState{"server": {
					State: structs.TaskStateRunning, StartedAt: time.Unix(1_700_000_001, 0).UTC(),
					Events: []*structs.TaskEvent{{Type: structs.TaskStarted, Time: 1_700_000_001_000_000_000,
						Details: map[string]string{"message": "started"}}},
				}},
				DeploymentStatus: &structs.AllocDeploymentStatus{Healthy: &healthy, Timestamp: time.Unix(1_700_000_002, 0).UTC()},
			})
		}
		must.NoError(t, s.UpdateAllocsFromClient(next(), updates))
		batch = batch[:0]
	}
	for i := 0; i < numAllocs; i++ {
		j := jobs[i%len(jobs)]
		a := mockAlloc(j, nodes[i%len(nodes)])
		a.Name = structs.AllocName(j.ID, "web", i)
		a.Metrics = &structs.AllocMetric{NodesEvaluated: 10, NodesAvailable: map[string]int{"dc1": 200}}
		if i%3 == 0 {
			a.RescheduleTracker = &structs.RescheduleTracker{Events: []*structs.RescheduleEvent{{
				RescheduleTime: 1_700_000_000_000_000_000, PrevAllocID: "prev", PrevNodeID: "node", Delay: 30 * time.Second}}}
		}
		batch = append(batch, a)
		if len(batch) == cap(batch) {
			flush()
		}
	}
	if len(batch) > 0 {
		flush()
	}
	// Service registrations of two running allocs.
	live, err := s.Allocs(nil, "*")
	must.NoError(t, err)
	var regs []*structs.ServiceRegistration
	for _, a := range live[:min(2, len(live))] {
		regs = append(regs, mockServiceRegistration(a, "web"))
	}
	must.NoError(t, s.UpsertServiceRegistrations(next(), regs))
	// Two dynamic host volumes: one pending, one the node reports.
	must.NoError(t, s.UpsertHostVolumes(next(), []*structs.HostVolume{mockHostVolume(nodes[0].ID, "pending"),
		mockHostVolume(nodes[1].ID, "ready")}))
	hvs, err := s.HostVolumesByNodeID(nil, nodes[1].ID)
	must.NoError(t, err)
	reporting := nodes[1].Copy()
	reporting.HostVolumes = map[string]*structs.ClientHostVolumeConfig{"ready": {Name: "ready", Path: "/srv/hv/" + hvs[0].ID, ID: hvs[0].ID}}
	must.NoError(t, s.UpsertNode(next(), reporting))

	must.NoError(t, s.SchedulerSetConfig(next(), &structs.SchedulerConfiguration{
		SchedulerAlgorithm: structs.SchedulerAlgorithmSpread, PauseEvalBroker: true,
		PreemptionConfig: structs.PreemptionConfig{SystemSchedulerEnabled: true}}))
	must.NoError(t, s.ClusterSetMetadata(next(), &structs.ClusterMetadata{ClusterID: "cluster-1", CreateTime: 12345}))
	must.NoError(t, s.AutopilotSetConfig(next(), &structs.AutopilotConfig{
		CleanupDeadServers: false, LastContactThreshold: time.Second, MaxTrailingLogs: 99, MinQuorum: 3,
		ServerStabilizationTime: 7 * time.Second, EnableRedundancyZones: true}))
	must.NoError(t, s.UpsertRootKeys(next(), []*structs.RootKey{
		mockRootKey(structs.RootKeyStateInactive, 1), mockRootKey(structs.RootKeyStateActive, 2)}))
	must.NoError(t, s.UpsertACLPolicies(next(), []*structs.ACLPolicy{mockACLPolicy("readonly"), mockACLPolicy("ops")}))
	must.NoError(t, s.UpsertNamespaces(next(), []*structs.Namespace{structs.NewDefaultNamespace(), {
		Name: "team-a", Description: "a team", Meta: map[string]string{"owner": "a"},
		Capabilities:          &structs.NamespaceCapabilities{EnabledTaskDrivers: []string{"exec"}},
		NodePoolConfiguration: &structs.NamespaceNodePoolConfiguration{Default: "default", Allowed: []string{"*"}}}}))
	// The nodes' registrations wrote the default pool.
	must.NoError(t, s.UpsertNodePools(next(), []*structs.NodePool{structs.BuiltInNodePools()[0],
		{Name: "gpu", Description: "gpus", Meta: map[string]string{"rack": "r1"}}}))
	for _, path := range []string{"app/db", "app/web"} {
		v := &structs.VariableEncrypted{
			VariableMetadata: structs.VariableMetadata{Namespace: "team-a", Path: path, ModifyTime: 5},
			VariableData:     structs.VariableData{Data: []byte("sealed " + path), KeyID: "key-1"},
		}
		if path == "app/web" {
			v.Lock = &structs.VariableLock{ID: "lock-1", TTL: time.Minute, LockDelay: time.Second}
			_, err := s.VarApply(next(), structs.VarOpLockAcquire, v)
			must.NoError(t, err)
			continue
		}
		_, err := s.VarApply(next(), structs.VarOpSet, v)
		must.NoError(t, err)
	}
	boot := &structs.ACLToken{Name: "Bootstrap Token", Type: structs.ACLManagementToken, Global: true}
	boot.Canonicalize(time.Unix(1_700_000_000, 0))
	must.NoError(t, s.BootstrapACLToken(next(), 0, boot))
	expiring := mockACLToken("readonly")
	expiring.ExpirationTTL = time.Hour
	exp := expiring.CreateTime.Add(time.Hour)
	expiring.ExpirationTime = &exp
	must.NoError(t, s.UpsertACLTokens(next(), []*structs.ACLToken{expiring}))
	must.NoError(t, s.UpsertACLRoles(next(), []*structs.ACLRole{{ID: structs.GenerateUUID(), Name: "ops",
		Policies: []*structs.ACLRolePolicyLink{{Name: "ops"}}}}))
	must.NoError(t, s.UpsertACLAuthMethods(next(), []*structs.ACLAuthMethod{mockAuthMethod("sso", true)}))
	must.NoError(t, s.UpsertACLBindingRules(next(), []*structs.ACLBindingRule{mockBindingRule("sso")}))
	must.NoError(t, s.UpsertOneTimeToken(next(), &structs.OneTimeToken{OneTimeSecretID: structs.GenerateUUID(),
		AccessorID: expiring.AccessorID, ExpiresAt: time.Unix(1_700_000_600, 0).UTC()}))
	return s
}

// mustEqualStores compares every table of two stores, object by object.
func mustEqualStores(t *testing.T, want, got *StateStore) {
	t.Helper()
	wantIdx, err := want.Indexes()
	must.NoError(t, err)
	gotIdx, err := got.Indexes()
	must.NoError(t, err)
	must.Eq(t, wantIdx, gotIdx)

	wt, gt := want.db.Txn(false), got.db.Txn(false)
	for _, p := range persistOrder {
		wi, err := wt.Get(p.table, indexID)
		must.NoError(t, err)
		gi, err := gt.Get(p.table, indexID)
		must.NoError(t, err)
		n := 0
		for w := wi.Next(); w != nil; w = wi.Next() {
			g := gi.Next()
			must.NotNil(t, g, must.Sprintf("table %s: restored store has fewer rows", p.table))
			// DeepEqual first: go-cmp is slow on 10k allocs, and only
			// needed to explain a difference.
			if !reflect.DeepEqual(w, g) {
				must.Eq(t, w, g, must.Sprintf("table %s row %d", p.table, n))
			}
			n++
		}
		must.Nil(t, gi.Next(), must.Sprintf("table %s: restored store has more rows", p.table))
	}
}

func TestPersistRestore_RoundTrip(t *testing.T) {
	s := populatedStore(t, 10_000)
	var buf bytes.Buffer
	must.NoError(t, s.Snapshot().Persist(&buf))

	restored, err := Restore(&buf, nil)
	must.NoError(t, err)
	mustEqualStores(t, s, restored)

	allocs, err := restored.Allocs(nil, "*")
	must.NoError(t, err)
	must.Len(t, 10_000, allocs)

	// Allocations of one job version share one job object again.
	byJob, err := restored.AllocsByJob(nil, "default", "job-001", false)
	must.NoError(t, err)
	must.Greater(t, 1, len(byJob))
	for _, a := range byJob[1:] {
		must.True(t, a.Job == byJob[0].Job, must.Sprint("alloc jobs are shared after restore"))
	}

	// The restored store is live: indexes, lookups and writes work.
	latest, _ := restored.LatestIndex()
	want, _ := s.LatestIndex()
	must.Eq(t, want, latest)
	n, _ := restored.Nodes(nil)
	byNode, err := restored.AllocsByNodeTerminal(nil, n[0].ID, false)
	must.NoError(t, err)
	must.Len(t, 50, byNode)
	must.NoError(t, restored.UpsertNode(latest+1, mockNode()))
}

func TestPersistRestore_Empty(t *testing.T) {
	var buf bytes.Buffer
	must.NoError(t, testStore(t).Snapshot().Persist(&buf))
	restored, err := Restore(&buf, nil)
	must.NoError(t, err)
	latest, _ := restored.LatestIndex()
	must.Eq(t, 0, latest)
}

func TestRestore_Errors(t *testing.T) {
	header := func() *bytes.Buffer {
		var b bytes.Buffer
		must.NoError(t, codec.NewEncoder(&b, structs.MsgpackHandle).Encode(&SnapshotHeader{}))
		return &b
	}

	unknown := header()
	unknown.WriteByte(99)
	must.NoError(t, codec.NewEncoder(unknown, structs.MsgpackHandle).Encode(map[string]string{}))

	var full bytes.Buffer
	must.NoError(t, populatedStore(t, 10).Snapshot().Persist(&full))
	truncated := bytes.NewBuffer(full.Bytes()[:full.Len()-7])

	badType := header()
	badType.WriteByte(byte(NodeSnapshot))
	must.NoError(t, codec.NewEncoder(badType, structs.MsgpackHandle).Encode("not a node"))

	// The decoder runs ahead of the store: a record the store refuses
	// first, and a bad one after many batches, end the restore alike.
	nodes := func(n int) *bytes.Buffer {
		b := header()
		enc := codec.NewEncoder(b, structs.MsgpackHandle)
		for range n {
			b.WriteByte(byte(NodeSnapshot))
			must.NoError(t, enc.Encode(mockNode()))
		}
		return b
	}
	refusedFirst := header()
	refusedFirst.WriteByte(byte(NodeSnapshot))
	must.NoError(t, codec.NewEncoder(refusedFirst, structs.MsgpackHandle).Encode(&structs.Node{}))
	refusedFirst.Write(nodes(4 * restoreBatch * restoreQueue).Bytes()[header().Len():])
	badLate := nodes(4 * restoreBatch * restoreQueue)
	badLate.WriteByte(99)

	cases := []struct {
		name string
		in   *bytes.Buffer
		want string
	}{
		{"empty stream", &bytes.Buffer{}, "reading snapshot header"},
		{"unknown record type", unknown, "unknown snapshot record type 99"},
		{"truncated", truncated, "snapshot record"},
		{"wrong body", badType, `decoding "nodes" record`},
		{"refused by the store, decoder ahead", refusedFirst, `snapshot record 0: restoring "nodes" record`},
		{"bad record after many batches", badLate, fmt.Sprintf("snapshot record %d: unknown snapshot record type 99", 4*restoreBatch*restoreQueue)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Restore(tc.in, nil)
			must.ErrorContains(t, err, tc.want)
		})
	}
}

// TestRestore_JobVariantsShareParts: the versions table's and the jobs
// table's objects of one job version differ in their status and
// stability; restored, they are equal to what was persisted and share
// their task groups, as the shallow copies of the live store do.
func TestRestore_JobVariantsShareParts(t *testing.T) {
	s := testStore(t)
	node := mockNode()
	must.NoError(t, s.UpsertNode(1, node))
	job := registered(t, s, 2, mockJob())
	must.NoError(t, s.UpsertAllocs(3, []*structs.Allocation{mockAlloc(job, node)}))
	must.NoError(t, s.UpdateJobStability(4, job.Namespace, job.ID, job.Version, true))

	cur, _ := s.JobByID(nil, job.Namespace, job.ID)
	version, _ := s.JobByIDAndVersion(nil, job.Namespace, job.ID, job.Version)
	must.NotEq(t, cur.Status, version.Status)

	var buf bytes.Buffer
	must.NoError(t, s.Snapshot().Persist(&buf))
	r, err := Restore(&buf, nil)
	must.NoError(t, err)
	rCur, _ := r.JobByID(nil, job.Namespace, job.ID)
	rVersion, _ := r.JobByIDAndVersion(nil, job.Namespace, job.ID, job.Version)
	must.Eq(t, cur, rCur)
	must.Eq(t, version, rVersion)
	must.True(t, &rCur.TaskGroups[0] == &rVersion.TaskGroups[0], must.Sprint("task groups not shared"))
}
