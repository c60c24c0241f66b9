package api

import (
	"net/http"
	"sort"
)

// Namespace is a named partition of the cluster's jobs; its JSON is
// Nomad's.
type Namespace struct {
	Name        string
	Description string
	// Quota is an Enterprise feature; servers refuse any value.
	Quota                 string
	Capabilities          *NamespaceCapabilities
	NodePoolConfiguration *NamespaceNodePoolConfiguration
	Meta                  map[string]string
	CreateIndex           uint64
	ModifyIndex           uint64
}

// NamespaceCapabilities restrict the task drivers and network modes the
// jobs of a namespace may use.
type NamespaceCapabilities struct {
	EnabledTaskDrivers   []string
	DisabledTaskDrivers  []string
	EnabledNetworkModes  []string
	DisabledNetworkModes []string
}

// NamespaceNodePoolConfiguration names the node pools of a namespace's
// jobs.
type NamespaceNodePoolConfiguration struct {
	Default string
	Allowed []string
	Denied  []string
}

// NamespaceIndexSort orders namespaces newest first (highest CreateIndex),
// as Nomad's client lists them.
type NamespaceIndexSort []*Namespace

func (n NamespaceIndexSort) Len() int           { return len(n) }
func (n NamespaceIndexSort) Less(i, j int) bool { return n[i].CreateIndex > n[j].CreateIndex }
func (n NamespaceIndexSort) Swap(i, j int)      { n[i], n[j] = n[j], n[i] }

// Namespaces is the /v1/namespace endpoint group.
type Namespaces struct {
	client *Client
}

// Namespaces returns the namespace endpoint group.
func (c *Client) Namespaces() *Namespaces { return &Namespaces{client: c} }

// List returns the namespaces the token may use, newest first.
func (n *Namespaces) List(q *QueryOptions) ([]*Namespace, *QueryMeta, error) {
	var resp []*Namespace
	qm, err := n.client.query("/v1/namespaces", &resp, q)
	if err != nil {
		return nil, nil, err
	}
	sort.Stable(NamespaceIndexSort(resp))
	return resp, qm, nil
}

// PrefixList is List of the namespaces whose names start with prefix.
func (n *Namespaces) PrefixList(prefix string, q *QueryOptions) ([]*Namespace, *QueryMeta, error) {
	if q == nil {
		q = &QueryOptions{}
	}
	q.Prefix = prefix
	return n.List(q)
}

// Info returns one namespace; a missing one is a 404 error.
func (n *Namespaces) Info(name string, q *QueryOptions) (*Namespace, *QueryMeta, error) {
	var resp Namespace
	qm, err := n.client.query("/v1/namespace/"+escape(name), &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return &resp, qm, nil
}

// Register creates or replaces a namespace.
func (n *Namespaces) Register(namespace *Namespace, w *WriteOptions) (*WriteMeta, error) {
	return n.client.write(http.MethodPut, "/v1/namespace", namespace, nil, w)
}

// Delete removes a namespace: never the default one, nor one that still
// has jobs that are not dead.
func (n *Namespaces) Delete(name string, w *WriteOptions) (*WriteMeta, error) {
	return n.client.write(http.MethodDelete, "/v1/namespace/"+escape(name), nil, nil, w)
}
