package state

import (
	"fmt"

	"github.com/hashicorp/go-memdb"

	"github.com/opennomad/nomad/structs"
)

// Table names. The same names key the rows of the index table, so a
// blocking query on a list asks Index(TableJobs) and so on.
const (
	TableIndex           = "index"
	TableNodes           = "nodes"
	TableJobs            = "jobs"
	TableJobVersion      = "job_version"
	TableJobSummary      = "job_summary"
	TableEvals           = "evals"
	TableAllocs          = "allocs"
	TableDeployment      = "deployment"
	TableSchedulerConfig = "scheduler_config"
	TableClusterMeta     = "cluster_meta"
	TableAutopilotConfig = "autopilot-config"
	TablePeriodicLaunch  = "periodic_launch"
	TableNodeAllocIndex  = "node_alloc_index"
	TableNodeLiveAllocs  = "node_live_allocs"
	TableRootKeys        = "root_keys"
	TableACLPolicies     = "acl_policy"
	TableACLTokens       = "acl_token"
	TableACLRoles        = "acl_role"
	TableACLAuthMethods  = "acl_auth_methods"
	TableACLBindingRules = "acl_binding_rules"
	TableOneTimeTokens   = "one_time_token"
	TableNamespaces      = "namespaces"
	TableNodePools       = "node_pools"
	TableVariables       = "variables"
	// TableACLBootstrap is no table but a row of the index table: the
	// Raft index of the last ACL bootstrap.
	TableACLBootstrap = "acl_token_bootstrap"
)

// Index names used by more than one table. There is no namespace index:
// every namespaced table has a job index led by the namespace, and a
// prefix scan of it with (namespace, "") lists the namespace.
const (
	indexID     = "id"
	indexJob    = "job"
	indexStatus = "status"
)

// IndexEntry is a row of the index table: the Raft index of the last
// write to the table named Key.
type IndexEntry struct {
	Key   string
	Value uint64
}

// stateSchema is the memdb schema of the whole store.
func stateSchema() *memdb.DBSchema {
	tables := []*memdb.TableSchema{
		indexTableSchema(),
		nodesTableSchema(),
		jobsTableSchema(),
		jobVersionTableSchema(),
		jobSummaryTableSchema(),
		evalsTableSchema(),
		allocsTableSchema(),
		deploymentTableSchema(),
		singletonTableSchema[*structs.SchedulerConfiguration](TableSchedulerConfig),
		singletonTableSchema[*structs.ClusterMetadata](TableClusterMeta),
		singletonTableSchema[*structs.AutopilotConfig](TableAutopilotConfig),
		periodicLaunchTableSchema(),
		nodeAllocIndexTableSchema(),
		nodeLiveAllocsTableSchema(),
		rootKeysTableSchema(),
		aclPolicyTableSchema(),
		aclTokenTableSchema(),
		aclRoleTableSchema(),
		aclAuthMethodTableSchema(),
		aclBindingRuleTableSchema(),
		oneTimeTokenTableSchema(),
		namespacesTableSchema(),
		nodePoolsTableSchema(),
		variablesTableSchema(),
		scalingEventsTableSchema(),
		jobSubmissionsTableSchema(),
		serviceRegistrationsTableSchema(),
		hostVolumesTableSchema(),
	}
	s := &memdb.DBSchema{Tables: make(map[string]*memdb.TableSchema, len(tables))}
	for _, t := range tables {
		if _, dup := s.Tables[t.Name]; dup {
			panic(fmt.Sprintf("state schema: table %q defined twice", t.Name))
		}
		s.Tables[t.Name] = t
	}
	return s
}

func idIndex(idx memdb.Indexer) *memdb.IndexSchema {
	return &memdb.IndexSchema{Name: indexID, Unique: true, Indexer: idx}
}

func indexTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TableIndex,
		Indexes: map[string]*memdb.IndexSchema{
			indexID: idIndex(strField(func(e *IndexEntry) string { return e.Key })),
		},
	}
}

func nodesTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TableNodes,
		Indexes: map[string]*memdb.IndexSchema{
			indexID: idIndex(strField(func(n *structs.Node) string { return n.ID })),
			"secret_id": {
				Name:    "secret_id",
				Unique:  true,
				Indexer: strField(func(n *structs.Node) string { return n.SecretID }),
			},
			"node_pool": {
				Name:         "node_pool",
				AllowMissing: true,
				Indexer:      strField(func(n *structs.Node) string { return n.NodePool }),
			},
			// drain lets the drainer read, and watch, the draining nodes
			// only: in a big cluster the other nodes change far more often.
			"drain": {
				Name:    "drain",
				Indexer: boolField(func(n *structs.Node) bool { return n.DrainStrategy != nil }),
			},
		},
	}
}

// namespacedID indexes (Namespace, ID) pairs; lookups pass both, or a
// namespace and an ID prefix.
func namespacedID[T any](ns, id func(T) string) *stringsIndex[T] {
	return strFields(ns, id)
}

func jobsTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TableJobs,
		Indexes: map[string]*memdb.IndexSchema{
			indexID: idIndex(namespacedID(
				func(j *structs.Job) string { return j.Namespace },
				func(j *structs.Job) string { return j.ID })),
			// type holds only system and sysbatch jobs, the ones a new
			// or changed node is evaluated for; most jobs are services
			// and batches, looked up by ID.
			"type": {
				Name:         "type",
				AllowMissing: true,
				Indexer:      strField(nodeScopedJobType),
			},
			// gc lets the garbage collector visit only jobs it may purge;
			// live jobs are left out of it.
			"gc": {
				Name:         "gc",
				AllowMissing: true,
				Indexer:      flagField(jobIsGCable),
			},
			// periodic lets the periodic dispatcher restore its templates
			// without scanning every job.
			"periodic": {
				Name:         "periodic",
				AllowMissing: true,
				Indexer:      flagField(func(j *structs.Job) bool { return j.IsPeriodic() }),
			},
		},
	}
}

// nodeScopedJobType is the type of a system or sysbatch job and "" (not
// indexed) for any other.
func nodeScopedJobType(j *structs.Job) string {
	if j.Type == structs.JobTypeSystem || j.Type == structs.JobTypeSysBatch {
		return j.Type
	}
	return ""
}

// jobIsGCable reports whether the garbage collector may purge the job
// once it is old enough. Templates (periodic, parameterized) only go when
// stopped; other jobs must be dead and either stopped or batch-like, since
// a service or system job is only ever finished by its user.
func jobIsGCable(j *structs.Job) bool {
	if j.IsPeriodic() || j.IsParameterized() {
		return j.Stop
	}
	if j.Status != structs.JobStatusDead {
		return false
	}
	return j.Stop || j.Type == structs.JobTypeBatch || j.Type == structs.JobTypeSysBatch
}

func jobVersionTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TableJobVersion,
		Indexes: map[string]*memdb.IndexSchema{
			indexID: idIndex(&memdb.CompoundIndex{Indexes: []memdb.Indexer{
				strField(func(j *structs.Job) string { return j.Namespace }),
				strField(func(j *structs.Job) string { return j.ID }),
				uintField(func(j *structs.Job) uint64 { return j.Version }),
			}}),
		},
	}
}

func jobSummaryTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TableJobSummary,
		Indexes: map[string]*memdb.IndexSchema{
			indexID: idIndex(namespacedID(
				func(s *structs.JobSummary) string { return s.Namespace },
				func(s *structs.JobSummary) string { return s.JobID })),
		},
	}
}

func evalsTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TableEvals,
		Indexes: map[string]*memdb.IndexSchema{
			indexID: idIndex(strField(func(e *structs.Evaluation) string { return e.ID })),
			// job is (Namespace, JobID, Status): the blocked eval of a
			// job, or all its evals, are a prefix scan away.
			indexJob: {
				Name: indexJob,
				Indexer: strFields(
					func(e *structs.Evaluation) string { return e.Namespace },
					func(e *structs.Evaluation) string { return e.JobID },
					func(e *structs.Evaluation) string { return e.Status },
				),
			},
			// status is (Status, class, CreateTime) and serves the
			// broker and blocked-evals restore on a leadership change,
			// and the backlog's oldest waiting eval of each class: only
			// pending and blocked evals matter, so the index holds only
			// those and a finished eval costs no insert in it.
			indexStatus: {
				Name:         indexStatus,
				AllowMissing: true,
				Indexer:      waitingEvalIndex{},
			},
		},
	}
}

// waitingEvalStatus is the status of a pending or blocked eval and ""
// (not indexed) for any other.
func waitingEvalStatus(e *structs.Evaluation) string {
	if e.Status == structs.EvalStatusPending || e.Status == structs.EvalStatusBlocked {
		return e.Status
	}
	return ""
}

func allocsTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TableAllocs,
		Indexes: map[string]*memdb.IndexSchema{
			indexID: idIndex(strField(func(a *structs.Allocation) string { return a.ID })),
			// node is (NodeID, terminal) so the plan applier and the
			// scheduler read a node's live allocs without touching the
			// finished ones.
			"node": {
				Name: "node",
				Indexer: &memdb.CompoundIndex{Indexes: []memdb.Indexer{
					strField(func(a *structs.Allocation) string { return a.NodeID }),
					boolField(func(a *structs.Allocation) bool { return a.TerminalStatus() }),
				}},
			},
			// job is (Namespace, JobID). There is no index by eval or by
			// deployment: an eval or a deployment has the allocs of its
			// own job only, so those are the job's allocs filtered, one
			// index entry per alloc instead of three.
			indexJob: {
				Name: indexJob,
				Indexer: namespacedID(
					func(a *structs.Allocation) string { return a.Namespace },
					func(a *structs.Allocation) string { return a.JobID }),
			},
		},
	}
}

func deploymentTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TableDeployment,
		Indexes: map[string]*memdb.IndexSchema{
			indexID: idIndex(strField(func(d *structs.Deployment) string { return d.ID })),
			indexJob: {
				Name: indexJob,
				Indexer: namespacedID(
					func(d *structs.Deployment) string { return d.Namespace },
					func(d *structs.Deployment) string { return d.JobID }),
			},
		},
	}
}

func periodicLaunchTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TablePeriodicLaunch,
		Indexes: map[string]*memdb.IndexSchema{
			indexID: idIndex(namespacedID(
				func(l *structs.PeriodicLaunch) string { return l.Namespace },
				func(l *structs.PeriodicLaunch) string { return l.ID })),
		},
	}
}

// NodeAllocIndex is a row of the node_alloc_index table: the Raft index of
// the last write that added, changed (server-side, moving its
// AllocModifyIndex) or removed an allocation on the node.
// A client's blocking query for its allocations waits on this row alone,
// so a plan placing allocations elsewhere does not wake it.
type NodeAllocIndex struct {
	NodeID string
	Index  uint64
}

func nodeAllocIndexTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TableNodeAllocIndex,
		Indexes: map[string]*memdb.IndexSchema{
			indexID: idIndex(strField(func(r *NodeAllocIndex) string { return r.NodeID })),
		},
	}
}

// singletonTableSchema is a table holding at most one row of type T,
// read with First(table, "id").
func singletonTableSchema[T any](name string) *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: name,
		Indexes: map[string]*memdb.IndexSchema{
			indexID: idIndex(boolField(func(T) bool { return true })),
		},
	}
}
