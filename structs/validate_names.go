package structs

import (
	"slices"
	"strings"
)

// A NUL byte ends a string for the operating system and for most tools:
// a name or meta entry holding one reads as a different, shorter one in
// a task's environment, in file paths and in logs than in the state
// store, and an environment variable with one cannot be set at all. So
// the names and free-text maps of jobs and nodes refuse it, each with the
// field that holds it.

// noNUL adds a problem when value holds a NUL byte.
func (p *problems) noNUL(prefix, what, value string) {
	if strings.IndexByte(value, 0) >= 0 {
		p.add(prefix, "%s %q must not contain null characters", what, value)
	}
}

// noNULMap checks a map's keys and values, in key order.
func (p *problems) noNULMap(prefix, what string, m map[string]string) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		p.noNUL(prefix, what+" key", k)
		if strings.IndexByte(m[k], 0) >= 0 {
			p.add(prefix, "%s %q: value must not contain null characters", what, k)
		}
	}
}

// validateNames checks the job's own names; its ID and name are checked
// with their other rules.
func (j *Job) validateNames(p *problems) {
	p.noNUL("", "namespace", j.Namespace)
	p.noNUL("", "region", j.Region)
	for _, dc := range j.Datacenters {
		p.noNUL("", "datacenter", dc)
	}
	p.noNULMap("", "meta", j.Meta)
	if pj := j.ParameterizedJob; pj != nil {
		for _, k := range pj.MetaRequired {
			p.noNUL("parameterized", "meta_required key", k)
		}
		for _, k := range pj.MetaOptional {
			p.noNUL("parameterized", "meta_optional key", k)
		}
	}
}

// validateNames checks the group's names.
func (tg *TaskGroup) validateNames(p *problems, prefix string) {
	p.noNUL(prefix, "group name", tg.Name)
	p.noNULMap(prefix, "meta", tg.Meta)
}

// validateNames checks the task's names and the strings that reach the
// operating system as they are; its name is checked with its other rules.
func (t *Task) validateNames(p *problems, prefix string) {
	p.noNUL(prefix, "driver", t.Driver)
	p.noNUL(prefix, "user", t.User)
	p.noNUL(prefix, "kill_signal", t.KillSignal)
	p.noNULMap(prefix, "meta", t.Meta)
	p.noNULMap(prefix, "env", t.Env)
}

// NULProblems lists the node's names, meta and attributes that hold a
// NUL byte, each naming its field; registration refuses such a node.
// Constraints match jobs against exactly these strings.
func (n *Node) NULProblems() []string {
	var p problems
	p.noNUL("", "node ID", n.ID)
	p.noNUL("", "node name", n.Name)
	p.noNUL("", "datacenter", n.Datacenter)
	p.noNUL("", "node class", n.NodeClass)
	p.noNUL("", "node pool", n.NodePool)
	p.noNUL("", "HTTP address", n.HTTPAddr)
	p.noNULMap("", "meta", n.Meta)
	p.noNULMap("", "attribute", n.Attributes)
	return p.list
}
