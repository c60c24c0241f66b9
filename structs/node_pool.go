package structs

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"
)

// Node pools group client nodes; a job is placed only on the nodes of its
// pool (NodePoolAll: on any node). Two pools are built in: the leader
// writes them when a cluster starts, and nobody may change or delete them.
// A node that registers in a pool nobody created creates it.

// Descriptions of the built-in pools, as Nomad words them.
const (
	NodePoolAllDescription     = "Node pool with all nodes in the cluster."
	NodePoolDefaultDescription = "Default node pool."
)

// DefaultNodeIdentityTTL is a pool's NodeIdentityTTL when none is given.
const DefaultNodeIdentityTTL = 24 * time.Hour

const maxNodePoolDescriptionLength = 256

// NodePool is a named group of client nodes. Its JSON is Nomad's:
// NodeIdentityTTL is written as integer nanoseconds and read as either
// nanoseconds or a duration string ("720h").
type NodePool struct {
	Name        string
	Description string
	Meta        map[string]string
	// SchedulerConfiguration is an Enterprise feature: any value is
	// refused.
	SchedulerConfiguration *NodePoolSchedulerConfiguration
	// NodeIdentityTTL is how long the identities of the pool's nodes
	// live.
	NodeIdentityTTL time.Duration
	// Hash is a digest of the fields above, set on every write.
	Hash        []byte
	CreateIndex uint64
	ModifyIndex uint64
}

// NodePoolSchedulerConfiguration overrides the cluster's scheduler
// configuration for one pool (Enterprise).
type NodePoolSchedulerConfiguration struct {
	SchedulerAlgorithm            string
	MemoryOversubscriptionEnabled *bool
}

// UnmarshalJSON reads NodeIdentityTTL as nanoseconds or as a duration
// string: Nomad's Go client sends the string, other clients the number.
func (p *NodePool) UnmarshalJSON(data []byte) error {
	type plain NodePool
	aux := struct {
		NodeIdentityTTL json.RawMessage
		*plain
	}{plain: (*plain)(p)}
	if err := json.Unmarshal(data, &aux); err != nil {
		return err
	}
	ttl, err := parseJSONDuration(aux.NodeIdentityTTL)
	if err != nil {
		return fmt.Errorf("NodeIdentityTTL: %w", err)
	}
	p.NodeIdentityTTL = ttl
	return nil
}

// parseJSONDuration reads a duration given as a JSON number of
// nanoseconds, a duration string, or nothing (zero).
func parseJSONDuration(raw json.RawMessage) (time.Duration, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		if s == "" {
			return 0, nil
		}
		return time.ParseDuration(s)
	}
	var n float64
	if err := json.Unmarshal(raw, &n); err != nil {
		return 0, fmt.Errorf("want a duration string or nanoseconds, got %s", raw)
	}
	return time.Duration(n), nil
}

// IsBuiltInNodePool reports whether name is one of the pools nobody may change
// or delete.
func IsBuiltInNodePool(name string) bool {
	return name == NodePoolAll || name == NodePoolDefault
}

// Copy returns a deep copy of p.
func (p *NodePool) Copy() *NodePool {
	if p == nil {
		return nil
	}
	c := *p
	c.Meta = maps.Clone(p.Meta)
	c.Hash = slices.Clone(p.Hash)
	if p.SchedulerConfiguration != nil {
		sc := *p.SchedulerConfiguration
		if sc.MemoryOversubscriptionEnabled != nil {
			v := *sc.MemoryOversubscriptionEnabled
			sc.MemoryOversubscriptionEnabled = &v
		}
		c.SchedulerConfiguration = &sc
	}
	return &c
}

// Canonicalize fills the defaults a write leaves out.
func (p *NodePool) Canonicalize() {
	if p.NodeIdentityTTL == 0 {
		p.NodeIdentityTTL = DefaultNodeIdentityTTL
	}
}

// SetHash computes and sets p.Hash from every field but the indexes.
func (p *NodePool) SetHash() []byte {
	h := sha256.New()
	fmt.Fprintf(h, "%q %q %d", p.Name, p.Description, p.NodeIdentityTTL)
	if sc := p.SchedulerConfiguration; sc != nil {
		fmt.Fprintf(h, " sched %q", sc.SchedulerAlgorithm)
		if sc.MemoryOversubscriptionEnabled != nil {
			fmt.Fprintf(h, " %t", *sc.MemoryOversubscriptionEnabled)
		}
	}
	keys := slices.Collect(maps.Keys(p.Meta))
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(h, " meta %q=%q", k, p.Meta[k])
	}
	p.Hash = h.Sum(nil)
	return p.Hash
}

// Validate checks a pool as a write requires; the problems, each naming
// its field, are joined in one error of kind ErrInvalid.
func (p *NodePool) Validate() error {
	if p == nil {
		return KindErrorf(ErrInvalid, "node pool is nil")
	}
	var errs []error
	if !validNodePoolName.MatchString(p.Name) {
		errs = append(errs, fmt.Errorf("invalid name %q, must match regex %s", p.Name, validNodePoolName))
	}
	if len(p.Description) > maxNodePoolDescriptionLength {
		errs = append(errs, fmt.Errorf("description longer than %d", maxNodePoolDescriptionLength))
	}
	if p.NodeIdentityTTL < 0 {
		errs = append(errs, fmt.Errorf("node identity TTL %s must not be negative", p.NodeIdentityTTL))
	}
	if p.SchedulerConfiguration != nil {
		errs = append(errs, errors.New(`Feature "Node Pools Governance" is unlicensed`))
	}
	if len(errs) == 0 {
		return nil
	}
	return WithKind(ErrInvalid, errors.Join(errs...))
}

// BuiltInNodePools returns the pools the leader writes when a cluster
// starts.
func BuiltInNodePools() []*NodePool {
	pools := []*NodePool{
		{Name: NodePoolAll, Description: NodePoolAllDescription},
		{Name: NodePoolDefault, Description: NodePoolDefaultDescription},
	}
	for _, p := range pools {
		p.Canonicalize()
		p.SetHash()
	}
	return pools
}

// NodePoolUpsertRequest writes node pools: NodePool.UpsertNodePools, and
// its Raft entry.
type NodePoolUpsertRequest struct {
	NodePools []*NodePool
	WriteRequest
}

// NodePoolDeleteRequest removes node pools by name:
// NodePool.DeleteNodePools, and its Raft entry.
type NodePoolDeleteRequest struct {
	Names []string
	WriteRequest
}

// NodePoolListRequest lists node pools; Prefix filters names.
type NodePoolListRequest struct {
	QueryOptions
}

// NodePoolListResponse answers NodePool.List, by name.
type NodePoolListResponse struct {
	NodePools []*NodePool
	QueryMeta
}

// NodePoolSpecificRequest names one node pool: NodePool.GetNodePool.
type NodePoolSpecificRequest struct {
	Name string
	QueryOptions
}

// SingleNodePoolResponse answers NodePool.GetNodePool; NodePool is nil
// when it does not exist.
type SingleNodePoolResponse struct {
	NodePool *NodePool
	QueryMeta
}

// NodePoolJobsRequest lists the jobs of a pool: NodePool.ListJobs. The
// request's namespace ("*": every namespace the token may list) scopes
// them; Fields.Meta adds each job's meta.
type NodePoolJobsRequest struct {
	Name   string
	Fields *JobStubFields
	QueryOptions
}

// NodePoolJobsResponse answers NodePool.ListJobs.
type NodePoolJobsResponse struct {
	Jobs []*JobListStub
	QueryMeta
}

// NodePoolNodesRequest lists the nodes of a pool: NodePool.ListNodes;
// the pool "all" lists every node.
type NodePoolNodesRequest struct {
	Name   string
	Fields *NodeStubFields
	QueryOptions
}

// NodePoolNodesResponse answers NodePool.ListNodes.
type NodePoolNodesResponse struct {
	Nodes []*NodeListStub
	QueryMeta
}

// ValidNodePoolName reports whether name is a node pool name Nomad
// accepts.
func ValidNodePoolName(name string) bool {
	return validNodePoolName.MatchString(name)
}
