// Package taskenv builds a task's environment (the NOMAD_* variables, its
// ports and meta, the task's own `env` block on top of the host's
// environment) and interpolates ${...} references in the task's env and
// driver config, as Nomad does:
//
//	${NOMAD_ALLOC_ID}, ${FOO}          any variable of the task's environment
//	${node.unique.id}                  the node's ID
//	${node.unique.name}                the node's name
//	${node.datacenter}, ${node.region}, ${node.class}, ${node.pool}
//	${attr.<name>}                     a node attribute (attr.kernel.name)
//	${meta.<key>}                      a node meta value
//
// A reference that names nothing known is left as written, so that
// shell-style ${VAR} meant for the task's own shell survives.
package taskenv

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/opennomad/nomad/structs"
)

// Dirs are the host paths a task's directory variables point at.
type Dirs struct {
	AllocDir   string
	TaskDir    string
	SecretsDir string
}

// Params is everything the environment is built from.
type Params struct {
	Alloc  *structs.Allocation
	Task   *structs.Task
	Node   *structs.Node
	Region string
	Dirs   Dirs
	// HostEnv is the client's environment after the deny list.
	HostEnv map[string]string
}

// Env is a built environment; it is immutable.
type Env struct {
	vars map[string]string
	node map[string]string
}

// DefaultEnvDenylist are host variables never passed to tasks, because
// they carry the agent's credentials.
var DefaultEnvDenylist = []string{
	"CONSUL_TOKEN", "CONSUL_HTTP_TOKEN", "VAULT_TOKEN", "NOMAD_TOKEN",
	"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
	"GOOGLE_APPLICATION_CREDENTIALS",
}

// HostEnv turns "KEY=value" pairs (os.Environ()) into a map without the
// denied keys.
func HostEnv(environ []string, deny []string) map[string]string {
	out := make(map[string]string, len(environ))
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" || slices.Contains(deny, k) {
			continue
		}
		out[k] = v
	}
	return out
}

// New builds the task's environment. Later layers win: the host's
// environment, then the NOMAD_* variables, then the task's `env` block
// (interpolated against everything before it).
func New(p Params) *Env {
	e := &Env{vars: maps.Clone(p.HostEnv), node: nodeVars(p.Node, p.Region)}
	if e.vars == nil {
		e.vars = map[string]string{}
	}
	nomadVars(e.vars, p)
	if p.Task != nil {
		interpolated := make(map[string]string, len(p.Task.Env))
		for k, v := range p.Task.Env {
			interpolated[k] = e.Replace(v)
		}
		maps.Copy(e.vars, interpolated)
	}
	return e
}

// Map returns a copy of the variables.
func (e *Env) Map() map[string]string { return maps.Clone(e.vars) }

// Get returns one variable.
func (e *Env) Get(k string) (string, bool) {
	v, ok := e.vars[k]
	return v, ok
}

func nodeVars(n *structs.Node, region string) map[string]string {
	m := map[string]string{"node.region": region}
	if n == nil {
		return m
	}
	m["node.unique.id"] = n.ID
	m["node.unique.name"] = n.Name
	m["node.datacenter"] = n.Datacenter
	m["node.class"] = n.NodeClass
	m["node.pool"] = n.NodePool
	for k, v := range n.Attributes {
		m["attr."+k] = v
	}
	for k, v := range n.Meta {
		m["meta."+k] = v
	}
	return m
}

func nomadVars(m map[string]string, p Params) {
	a, t := p.Alloc, p.Task
	if p.Region != "" {
		m["NOMAD_REGION"] = p.Region
	}
	if p.Node != nil {
		m["NOMAD_DC"] = p.Node.Datacenter
	}
	if p.Dirs.AllocDir != "" {
		m["NOMAD_ALLOC_DIR"] = p.Dirs.AllocDir
		m["NOMAD_TASK_DIR"] = p.Dirs.TaskDir
		m["NOMAD_SECRETS_DIR"] = p.Dirs.SecretsDir
	}
	if t != nil {
		m["NOMAD_TASK_NAME"] = t.Name
	}
	if a == nil {
		return
	}
	m["NOMAD_ALLOC_ID"] = a.ID
	m["NOMAD_SHORT_ALLOC_ID"] = structs.ShortID(a.ID)
	m["NOMAD_ALLOC_NAME"] = a.Name
	m["NOMAD_ALLOC_INDEX"] = strconv.Itoa(a.Index())
	m["NOMAD_GROUP_NAME"] = a.TaskGroup
	m["NOMAD_NAMESPACE"] = a.Namespace
	m["NOMAD_JOB_ID"] = a.JobID
	if j := a.Job; j != nil {
		m["NOMAD_JOB_NAME"] = j.Name
		if j.ParentID != "" {
			m["NOMAD_JOB_PARENT_ID"] = j.ParentID
		}
		if t != nil {
			for k, v := range j.CombinedTaskMeta(a.TaskGroup, t.Name) {
				m["NOMAD_META_"+cleanEnvName(k)] = v
				m["NOMAD_META_"+strings.ToUpper(cleanEnvName(k))] = v
			}
		}
	}
	if t != nil {
		resourceVars(m, a, t)
	}
	hostIP := ""
	if p.Node != nil {
		hostIP = p.Node.Attributes["unique.network.ip-address"]
	}
	for _, pt := range AllocPorts(a, t) {
		ip := pt.HostIP
		if ip == "" {
			ip = hostIP
		}
		label := cleanEnvName(pt.Label)
		inside := pt.Value
		if pt.To > 0 {
			inside = pt.To
		}
		hostPort := strconv.Itoa(pt.Value)
		m["NOMAD_PORT_"+label] = strconv.Itoa(inside)
		m["NOMAD_HOST_PORT_"+label] = hostPort
		m["NOMAD_IP_"+label] = ip
		m["NOMAD_HOST_IP_"+label] = ip
		m["NOMAD_ADDR_"+label] = joinHostPort(ip, hostPort)
		m["NOMAD_HOST_ADDR_"+label] = joinHostPort(ip, hostPort)
	}
}

func resourceVars(m map[string]string, a *structs.Allocation, t *structs.Task) {
	var cpu, mem, memMax int64
	var cores []uint16
	if ar := a.AllocatedResources; ar != nil && ar.Tasks[t.Name] != nil {
		tr := ar.Tasks[t.Name]
		cpu, mem, memMax, cores = tr.Cpu.CpuShares, tr.Memory.MemoryMB, tr.Memory.MemoryMaxMB, tr.Cpu.ReservedCores
	} else if r := t.Resources; r != nil {
		cpu, mem, memMax = int64(r.CPU), int64(r.MemoryMB), int64(r.MemoryMaxMB)
	}
	m["NOMAD_CPU_LIMIT"] = strconv.FormatInt(cpu, 10)
	m["NOMAD_MEMORY_LIMIT"] = strconv.FormatInt(mem, 10)
	if memMax > 0 {
		m["NOMAD_MEMORY_MAX_LIMIT"] = strconv.FormatInt(memMax, 10)
	}
	if len(cores) > 0 {
		s := make([]string, len(cores))
		for i, c := range cores {
			s[i] = strconv.Itoa(int(c))
		}
		m["NOMAD_CPU_CORES"] = strings.Join(s, ",")
	}
}

// AllocPorts gathers the alloc's ports: the group-level port mappings,
// plus ports of network blocks (group and legacy task level).
func AllocPorts(a *structs.Allocation, t *structs.Task) []structs.AllocatedPortMapping {
	ar := a.AllocatedResources
	if ar == nil {
		return nil
	}
	out := slices.Clone(ar.Shared.Ports)
	seen := map[string]bool{}
	for _, p := range out {
		seen[p.Label] = true
	}
	nets := slices.Clone(ar.Shared.Networks)
	if t != nil && ar.Tasks[t.Name] != nil {
		nets = append(nets, ar.Tasks[t.Name].Networks...)
	}
	for _, n := range nets {
		for _, p := range append(slices.Clone(n.ReservedPorts), n.DynamicPorts...) {
			if seen[p.Label] {
				continue
			}
			seen[p.Label] = true
			out = append(out, structs.AllocatedPortMapping{Label: p.Label, Value: p.Value, To: p.To, HostIP: n.IP})
		}
	}
	return out
}

func joinHostPort(ip, port string) string {
	if strings.Contains(ip, ":") {
		return "[" + ip + "]:" + port
	}
	return ip + ":" + port
}

// cleanEnvName replaces every character that may not appear in an
// environment variable name with '_'.
func cleanEnvName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, s)
}
