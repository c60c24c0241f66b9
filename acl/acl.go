package acl

import "strings"

// ACL is what a token may do: the merge of its policies. It is built once
// by NewACL and never changed, so it is safe for concurrent use.
//
// A nil *ACL allows nothing: every method answers false. Code that has
// not resolved a token therefore fails closed.
type ACL struct {
	management bool

	namespaces  labelTable
	nodePools   labelTable
	hostVolumes labelTable
	// variables is keyed by namespace + "\x00" + path, so a glob in
	// either part is matched and ranked over the pair.
	variables labelTable

	// Levels: "", or a policy value, the highest of the token's policies.
	agent, node, operator, quota, plugin string
	operatorCaps                         capabilitySet
}

// ManagementACL allows everything: the ACL of a management token.
var ManagementACL = &ACL{management: true}

// ACLsDisabled allows everything: the ACL used when a server runs with
// ACLs off. It is not the same pointer as ManagementACL, so a caller may
// tell the two apart, but it behaves the same, IsManagement included.
var ACLsDisabled = &ACL{management: true}

// variablesKeySep joins namespace and path in the variables table; it
// can appear in neither.
const variablesKeySep = "\x00"

// NewACL merges policies into the ACL of a token. A management token
// gets ManagementACL whatever its policies.
//
// Merging follows Nomad: for namespaces, node pools, host volumes,
// variables paths and operator capabilities, capabilities are united per
// exact label, and deny wipes a label's set and blocks later additions;
// agent, node, operator, quota and plugin take the highest level, deny
// above write above read above list. Policies are trusted to come from
// Parse: unknown values are kept but never asked for. The error is
// reserved; none is returned today.
func NewACL(management bool, policies []*Policy) (*ACL, error) {
	if management {
		return ManagementACL, nil
	}
	a := &ACL{operatorCaps: capabilitySet{}}
	for _, p := range policies {
		if p == nil {
			continue
		}
		for _, ns := range p.Namespaces {
			a.namespaces.builder(ns.Name).add(ns.Capabilities)
			// A namespace's deny does not cancel its variables rules.
			if ns.Variables != nil {
				for _, path := range ns.Variables.Paths {
					a.variables.builder(ns.Name + variablesKeySep + path.PathSpec).add(path.Capabilities)
				}
			}
		}
		for _, np := range p.NodePools {
			a.nodePools.builder(np.Name).add(np.Capabilities)
		}
		for _, hv := range p.HostVolumes {
			a.hostVolumes.builder(hv.Name).add(hv.Capabilities)
		}
		if p.Agent != nil {
			a.agent = maxLevel(a.agent, p.Agent.Policy)
		}
		if p.Node != nil {
			a.node = maxLevel(a.node, p.Node.Policy)
		}
		if p.Quota != nil {
			a.quota = maxLevel(a.quota, p.Quota.Policy)
		}
		if p.Plugin != nil {
			a.plugin = maxLevel(a.plugin, p.Plugin.Policy)
		}
		if p.Operator != nil {
			a.operator = maxLevel(a.operator, p.Operator.Policy)
			a.operatorCaps.add(p.Operator.Capabilities)
		}
	}
	a.namespaces.seal()
	a.nodePools.seal()
	a.hostVolumes.seal()
	a.variables.seal()
	return a, nil
}

// maxLevel is the higher of two levels: deny > write > read > list.
// Anything else (scale outside a namespace, "") ranks below list, so
// maxLevel("scale", "") is "": scale grants nothing there.
func maxLevel(a, b string) string {
	for _, level := range []string{PolicyDeny, PolicyWrite, PolicyRead, PolicyList} {
		if a == level || b == level {
			return level
		}
	}
	return ""
}

// IsManagement reports whether a allows everything: a management token,
// or a server with ACLs off.
func (a *ACL) IsManagement() bool { return a != nil && a.management }

// AllowNamespaceOperation reports whether a grants capability in
// namespace ns. The exact namespace's rules win; else those of the
// closest matching glob (see the package doc). ns "*" asks whether any
// namespace grants it, as list endpoints across namespaces do.
func (a *ACL) AllowNamespaceOperation(ns, capability string) bool {
	switch {
	case a == nil:
		return false
	case a.management:
		return true
	case ns == "*":
		return a.namespaces.any(func(c capabilitySet) bool { return c.allows(capability) })
	}
	c, ok := a.namespaces.lookup(ns)
	return ok && c.allows(capability)
}

// AllowNsOpAny reports whether a grants any of capabilities in ns.
func (a *ACL) AllowNsOpAny(ns string, capabilities ...string) bool {
	for _, c := range capabilities {
		if a.AllowNamespaceOperation(ns, c) {
			return true
		}
	}
	return false
}

// AllowNamespace reports whether a grants anything at all in ns (any
// capability but deny): whether the namespace may be listed or read. ns
// "*" asks it of any namespace.
func (a *ACL) AllowNamespace(ns string) bool {
	grantsSome := func(c capabilitySet) bool { return len(c) > 0 && !c.denied() }
	switch {
	case a == nil:
		return false
	case a.management:
		return true
	case ns == "*":
		return a.namespaces.any(grantsSome)
	}
	c, ok := a.namespaces.lookup(ns)
	return ok && grantsSome(c)
}

// AllowNodePoolOperation reports whether a grants capability on node
// pool pool, looked up as namespaces are.
func (a *ACL) AllowNodePoolOperation(pool, capability string) bool {
	switch {
	case a == nil:
		return false
	case a.management:
		return true
	}
	c, ok := a.nodePools.lookup(pool)
	return ok && c.allows(capability)
}

// AllowHostVolumeOperation reports whether a grants capability
// (mount-readonly, mount-readwrite) on host volume volume, looked up as
// namespaces are.
func (a *ACL) AllowHostVolumeOperation(volume, capability string) bool {
	switch {
	case a == nil:
		return false
	case a.management:
		return true
	}
	c, ok := a.hostVolumes.lookup(volume)
	return ok && c.allows(capability)
}

// AllowVariableOperation reports whether a grants capability (list,
// read, write, destroy) on the variable at path in namespace ns. The
// rule whose namespace and path are both exact wins; else the closest
// glob over the pair. ns "*" asks whether any namespace's rules grant it
// for path.
//
// Nomad also grants a workload identity implicit read and list on
// nomad/jobs, nomad/jobs/<job>, .../<group> and .../<group>/<task> of its
// own namespace; tokens here carry no workload claims yet, so those rules
// are not applied.
func (a *ACL) AllowVariableOperation(ns, path, capability string) bool {
	switch {
	case a == nil:
		return false
	case a.management:
		return true
	case ns == "*":
		return a.variables.anyKey(func(key string, c capabilitySet) bool {
			_, pathSpec, _ := strings.Cut(key, variablesKeySep)
			return globMatch(pathSpec, path) && c.allows(capability)
		})
	}
	c, ok := a.variables.lookup(ns + variablesKeySep + path)
	return ok && c.allows(capability)
}

func (a *ACL) level(get func(*ACL) string, levels ...string) bool {
	switch {
	case a == nil:
		return false
	case a.management:
		return true
	}
	have := get(a)
	for _, l := range levels {
		if have == l {
			return true
		}
	}
	return false
}

// AllowAgentRead reports whether a may read agent information.
func (a *ACL) AllowAgentRead() bool {
	return a.level(func(a *ACL) string { return a.agent }, PolicyRead, PolicyWrite)
}

// AllowAgentWrite reports whether a may change an agent.
func (a *ACL) AllowAgentWrite() bool {
	return a.level(func(a *ACL) string { return a.agent }, PolicyWrite)
}

// AllowNodeRead reports whether a may read client nodes.
func (a *ACL) AllowNodeRead() bool {
	return a.level(func(a *ACL) string { return a.node }, PolicyRead, PolicyWrite)
}

// AllowNodeWrite reports whether a may change client nodes.
func (a *ACL) AllowNodeWrite() bool {
	return a.level(func(a *ACL) string { return a.node }, PolicyWrite)
}

// AllowOperatorRead reports whether a may read operator settings. Only
// the operator policy value counts: an operator block with capabilities
// alone does not grant it.
func (a *ACL) AllowOperatorRead() bool {
	return a.level(func(a *ACL) string { return a.operator }, PolicyRead, PolicyWrite)
}

// AllowOperatorWrite reports whether a may change operator settings;
// like AllowOperatorRead it looks at the policy value only.
func (a *ACL) AllowOperatorWrite() bool {
	return a.level(func(a *ACL) string { return a.operator }, PolicyWrite)
}

// AllowQuotaRead reports whether a may read quotas.
func (a *ACL) AllowQuotaRead() bool {
	return a.level(func(a *ACL) string { return a.quota }, PolicyRead, PolicyWrite)
}

// AllowQuotaWrite reports whether a may change quotas.
func (a *ACL) AllowQuotaWrite() bool {
	return a.level(func(a *ACL) string { return a.quota }, PolicyWrite)
}

// AllowPluginRead reports whether a may read CSI plugins. As in Nomad,
// only plugin read grants it: plugin write does not.
func (a *ACL) AllowPluginRead() bool {
	return a.level(func(a *ACL) string { return a.plugin }, PolicyRead)
}

// AllowPluginList reports whether a may list CSI plugins: plugin list or
// read (not write, as in Nomad).
func (a *ACL) AllowPluginList() bool {
	return a.level(func(a *ACL) string { return a.plugin }, PolicyList, PolicyRead)
}

// AllowOperatorCapability reports whether a grants an operator
// capability (snapshot-save, license-read, keyring-rotate, keyring-read,
// keyring-delete). A management ACL always does.
func (a *ACL) AllowOperatorCapability(capability string) bool {
	switch {
	case a == nil:
		return false
	case a.management:
		return true
	}
	return a.operatorCaps.allows(capability)
}
