package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// The built-in node pools.
const (
	// NodePoolAll holds every node; jobs in it may run anywhere.
	NodePoolAll = "all"
	// NodePoolDefault is the pool of nodes and jobs that name none.
	NodePoolDefault = "default"
)

// NodePool is a named group of client nodes; its JSON is Nomad's.
type NodePool struct {
	Name        string            `hcl:"name,label"`
	Description string            `hcl:"description,optional"`
	Meta        map[string]string `hcl:"meta,block"`
	// NodeIdentityTTL is sent as a duration string ("720h0m0s"); servers
	// answer nanoseconds, and both are read.
	NodeIdentityTTL time.Duration `hcl:"node_identity_ttl,optional"`
	// SchedulerConfiguration is an Enterprise feature; servers refuse
	// any value.
	SchedulerConfiguration *NodePoolSchedulerConfiguration `hcl:"scheduler_config,block"`
	CreateIndex            uint64
	ModifyIndex            uint64
}

// NodePoolSchedulerConfiguration overrides the scheduler configuration
// for one pool (Enterprise).
type NodePoolSchedulerConfiguration struct {
	SchedulerAlgorithm            string `hcl:"scheduler_algorithm,optional"`
	MemoryOversubscriptionEnabled *bool  `hcl:"memory_oversubscription_enabled,optional"`
}

// nodePoolJSON is NodePool with its TTL as a raw JSON value.
type nodePoolJSON struct {
	Name                   string
	Description            string
	Meta                   map[string]string
	NodeIdentityTTL        json.RawMessage
	SchedulerConfiguration *NodePoolSchedulerConfiguration
	CreateIndex            uint64
	ModifyIndex            uint64
}

// MarshalJSON writes NodeIdentityTTL as a duration string, "" when zero,
// as Nomad's client sends it.
func (p *NodePool) MarshalJSON() ([]byte, error) {
	ttl := ""
	if p.NodeIdentityTTL != 0 {
		ttl = p.NodeIdentityTTL.String()
	}
	raw, _ := json.Marshal(ttl)
	return json.Marshal(nodePoolJSON{Name: p.Name, Description: p.Description, Meta: p.Meta,
		NodeIdentityTTL: raw, SchedulerConfiguration: p.SchedulerConfiguration,
		CreateIndex: p.CreateIndex, ModifyIndex: p.ModifyIndex})
}

// UnmarshalJSON reads NodeIdentityTTL as nanoseconds or a duration
// string.
func (p *NodePool) UnmarshalJSON(data []byte) error {
	var aux nodePoolJSON
	if err := json.Unmarshal(data, &aux); err != nil {
		return err
	}
	*p = NodePool{Name: aux.Name, Description: aux.Description, Meta: aux.Meta,
		SchedulerConfiguration: aux.SchedulerConfiguration, CreateIndex: aux.CreateIndex, ModifyIndex: aux.ModifyIndex}
	if len(aux.NodeIdentityTTL) == 0 || string(aux.NodeIdentityTTL) == "null" {
		return nil
	}
	var s string
	if err := json.Unmarshal(aux.NodeIdentityTTL, &s); err == nil {
		if s == "" {
			return nil
		}
		d, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("NodeIdentityTTL: %w", err)
		}
		p.NodeIdentityTTL = d
		return nil
	}
	var n float64
	if err := json.Unmarshal(aux.NodeIdentityTTL, &n); err != nil {
		return fmt.Errorf("NodeIdentityTTL: want a duration string or nanoseconds, got %s", aux.NodeIdentityTTL)
	}
	p.NodeIdentityTTL = time.Duration(n)
	return nil
}

// NodePools is the /v1/node/pools endpoint group.
type NodePools struct {
	client *Client
}

// NodePools returns the node pools endpoint group.
func (c *Client) NodePools() *NodePools { return &NodePools{client: c} }

// List returns the node pools the token may read, by name.
func (n *NodePools) List(q *QueryOptions) ([]*NodePool, *QueryMeta, error) {
	var resp []*NodePool
	qm, err := n.client.query("/v1/node/pools", &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return resp, qm, nil
}

// PrefixList is List of the pools whose names start with prefix.
func (n *NodePools) PrefixList(prefix string, q *QueryOptions) ([]*NodePool, *QueryMeta, error) {
	if q == nil {
		q = &QueryOptions{}
	}
	q.Prefix = prefix
	return n.List(q)
}

// Info returns one pool; a missing one is a 404 error.
func (n *NodePools) Info(name string, q *QueryOptions) (*NodePool, *QueryMeta, error) {
	if name == "" {
		return nil, nil, errors.New("missing node pool name")
	}
	var resp NodePool
	qm, err := n.client.query("/v1/node/pool/"+escape(name), &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return &resp, qm, nil
}

// Register creates or replaces a pool.
func (n *NodePools) Register(pool *NodePool, w *WriteOptions) (*WriteMeta, error) {
	if pool == nil {
		return nil, errors.New("missing node pool")
	}
	if pool.Name == "" {
		return nil, errors.New("missing node pool name")
	}
	return n.client.write(http.MethodPut, "/v1/node/pools", pool, nil, w)
}

// Delete removes a pool: never a built-in one, nor one that still has
// nodes or jobs that are not dead.
func (n *NodePools) Delete(name string, w *WriteOptions) (*WriteMeta, error) {
	if name == "" {
		return nil, errors.New("missing node pool name")
	}
	return n.client.write(http.MethodDelete, "/v1/node/pool/"+escape(name), nil, nil, w)
}

// ListJobs returns the stubs of a pool's jobs in the query's namespace
// ("*": every namespace the token may list).
func (n *NodePools) ListJobs(poolName string, q *QueryOptions) ([]*JobListStub, *QueryMeta, error) {
	var resp []*JobListStub
	qm, err := n.client.query("/v1/node/pool/"+escape(poolName)+"/jobs", &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return resp, qm, nil
}

// ListNodes returns the stubs of a pool's nodes ("all": every node).
func (n *NodePools) ListNodes(poolName string, q *QueryOptions) ([]*NodeListStub, *QueryMeta, error) {
	var resp []*NodeListStub
	qm, err := n.client.query("/v1/node/pool/"+escape(poolName)+"/nodes", &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return resp, qm, nil
}
