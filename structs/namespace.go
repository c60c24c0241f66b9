package structs

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
)

// Namespaces partition jobs (and everything that belongs to a job) and
// scope what ACL tokens may do. The "default" namespace always exists:
// the leader writes it when a cluster starts, and it cannot be deleted.

// DefaultNamespaceDescription is the description of the built-in
// namespace, as Nomad words it.
const DefaultNamespaceDescription = "Default shared namespace"

const maxNamespaceDescriptionLength = 256

// validNamespaceName is Nomad's pattern for namespace names.
var validNamespaceName = regexp.MustCompile(`^[a-zA-Z0-9-]{1,128}$`)

// Namespace is a named partition of the cluster's jobs. Its JSON is
// Nomad's.
type Namespace struct {
	Name        string
	Description string
	// Quota names a resource quota; quotas are an Enterprise feature, so
	// any value is refused.
	Quota string
	// Capabilities restrict the task drivers and network modes the jobs
	// of the namespace may use.
	Capabilities *NamespaceCapabilities
	// NodePoolConfiguration is kept and shown; it has no effect (as in
	// Nomad's community edition).
	NodePoolConfiguration *NamespaceNodePoolConfiguration
	Meta                  map[string]string
	// Hash is a digest of the fields above, set on every write.
	Hash        []byte
	CreateIndex uint64
	ModifyIndex uint64
}

// NamespaceCapabilities restrict what the jobs of a namespace may use.
// Empty lists restrict nothing.
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

// Copy returns a deep copy of n.
func (n *Namespace) Copy() *Namespace {
	if n == nil {
		return nil
	}
	c := *n
	if n.Capabilities != nil {
		caps := *n.Capabilities
		caps.EnabledTaskDrivers = slices.Clone(caps.EnabledTaskDrivers)
		caps.DisabledTaskDrivers = slices.Clone(caps.DisabledTaskDrivers)
		caps.EnabledNetworkModes = slices.Clone(caps.EnabledNetworkModes)
		caps.DisabledNetworkModes = slices.Clone(caps.DisabledNetworkModes)
		c.Capabilities = &caps
	}
	if n.NodePoolConfiguration != nil {
		np := *n.NodePoolConfiguration
		np.Allowed = slices.Clone(np.Allowed)
		np.Denied = slices.Clone(np.Denied)
		c.NodePoolConfiguration = &np
	}
	c.Meta = maps.Clone(n.Meta)
	c.Hash = slices.Clone(n.Hash)
	return &c
}

// SetHash computes and sets n.Hash from every field but the indexes.
func (n *Namespace) SetHash() []byte {
	h := sha256.New()
	fmt.Fprintf(h, "%q %q %q", n.Name, n.Description, n.Quota)
	if c := n.Capabilities; c != nil {
		fmt.Fprintf(h, " caps %q %q %q %q", c.EnabledTaskDrivers, c.DisabledTaskDrivers,
			c.EnabledNetworkModes, c.DisabledNetworkModes)
	}
	if p := n.NodePoolConfiguration; p != nil {
		fmt.Fprintf(h, " pools %q %q %q", p.Default, p.Allowed, p.Denied)
	}
	keys := slices.Collect(maps.Keys(n.Meta))
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(h, " meta %q=%q", k, n.Meta[k])
	}
	n.Hash = h.Sum(nil)
	return n.Hash
}

// Validate checks a namespace as a write requires; the problems are
// joined in one error of kind ErrInvalid, worded as Nomad words them.
func (n *Namespace) Validate() error {
	if n == nil {
		return KindErrorf(ErrInvalid, "namespace is nil")
	}
	var errs []error
	if !validNamespaceName.MatchString(n.Name) {
		errs = append(errs, fmt.Errorf("invalid name %q. Must match regex %s", n.Name, validNamespaceName))
	}
	if len(n.Description) > maxNamespaceDescriptionLength {
		errs = append(errs, fmt.Errorf("description longer than %d", maxNamespaceDescriptionLength))
	}
	if n.Quota != "" {
		errs = append(errs, fmt.Errorf("namespace %q using non-existent quota %q", n.Name, n.Quota))
	}
	if len(errs) == 0 {
		return nil
	}
	return WithKind(ErrInvalid, errors.Join(errs...))
}

// NewDefaultNamespace returns the built-in namespace the leader writes
// when a cluster starts.
func NewDefaultNamespace() *Namespace {
	n := &Namespace{Name: DefaultNamespace, Description: DefaultNamespaceDescription}
	n.SetHash()
	return n
}

// NamespaceUpsertRequest writes namespaces: Namespace.UpsertNamespaces,
// and its Raft entry.
type NamespaceUpsertRequest struct {
	Namespaces []*Namespace
	WriteRequest
}

// NamespaceDeleteRequest removes namespaces by name:
// Namespace.DeleteNamespaces, and its Raft entry.
type NamespaceDeleteRequest struct {
	Namespaces []string
	WriteRequest
}

// NamespaceListRequest lists namespaces; Prefix filters names.
type NamespaceListRequest struct {
	QueryOptions
}

// NamespaceListResponse answers Namespace.ListNamespaces, by name.
type NamespaceListResponse struct {
	Namespaces []*Namespace
	QueryMeta
}

// NamespaceSpecificRequest names one namespace: Namespace.GetNamespace.
type NamespaceSpecificRequest struct {
	Name string
	QueryOptions
}

// SingleNamespaceResponse answers Namespace.GetNamespace; Namespace is
// nil when it does not exist.
type SingleNamespaceResponse struct {
	Namespace *Namespace
	QueryMeta
}

// NamespaceSetRequest names several namespaces: Namespace.GetNamespaces.
type NamespaceSetRequest struct {
	Namespaces []string
	QueryOptions
}

// NamespaceSetResponse answers Namespace.GetNamespaces with those that
// exist, by name.
type NamespaceSetResponse struct {
	Namespaces map[string]*Namespace
	QueryMeta
}

// CheckJob refuses a job that uses a task driver or a group network mode
// the namespace's capabilities do not allow, in Nomad's words. A group
// network without a mode is in mode "host". An enabled list, when not
// empty, allows only what it names; a disabled list refuses what it
// names.
func (n *Namespace) CheckJob(job *Job) error {
	c := n.Capabilities
	if c == nil {
		return nil
	}
	allowed := func(v string, enabled, disabled []string) bool {
		if len(enabled) > 0 && !slices.Contains(enabled, v) {
			return false
		}
		return !slices.Contains(disabled, v)
	}
	var errs []error
	seen := map[string]bool{}
	for _, tg := range job.TaskGroups {
		for _, t := range tg.Tasks {
			if !seen["driver "+t.Driver] && !allowed(t.Driver, c.EnabledTaskDrivers, c.DisabledTaskDrivers) {
				errs = append(errs, fmt.Errorf("used task driver %q is not allowed in namespace %q", t.Driver, n.Name))
			}
			seen["driver "+t.Driver] = true
		}
		for _, net := range tg.Networks {
			mode := net.Mode
			if mode == "" {
				mode = "host"
			}
			if !seen["mode "+mode] && !allowed(mode, c.EnabledNetworkModes, c.DisabledNetworkModes) {
				errs = append(errs, fmt.Errorf("used group network mode %q is not allowed in namespace %q", mode, n.Name))
			}
			seen["mode "+mode] = true
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return WithKind(ErrInvalid, errors.Join(errs...))
}
