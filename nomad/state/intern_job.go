package state

import (
	"encoding/binary"
	"math"
	"slices"

	"github.com/opennomad/nomad/structs"
)

// A registered job was decoded from its entry, so each of its groups and
// tasks has parts of its own: the update, migrate, restart and
// reschedule blocks, the disk, log and resource requests, the driver
// config, env and meta maps. Almost every job of a cluster has the
// default blocks, and jobs of one shape (a team's services, the jobs a
// tool generates) ask for the same resources and config: about a
// kilobyte per job of parts equal to parts of other jobs. Stored jobs
// never change, so a new job's parts are swapped for equal ones kept
// here, as an alloc's strings and metrics are (intern.go).

// sharedPartMaxBytes bounds the content of a map or list shared: the
// table keeps up to internMax of each, after the jobs that held them are
// gone, so what it may keep must be small. Larger ones (a script in a
// driver config, say) are rarely equal to another's anyway.
const sharedPartMaxBytes = 1024

// jobParts keeps one instance of each job part seen.
type jobParts struct {
	updates     sharedValues[structs.UpdateStrategy]
	migrates    sharedValues[structs.MigrateStrategy]
	restarts    sharedValues[structs.RestartPolicy]
	reschedules sharedValues[structs.ReschedulePolicy]
	disks       sharedValues[structs.EphemeralDisk]
	logs        sharedValues[structs.LogConfig]
	lifecycles  sharedValues[structs.TaskLifecycleConfig]
	resources   map[resourcesKey]*structs.Resources

	// metas keeps one instance of each env or meta map (sharedMaps,
	// keyed by content); configs of each driver config whose values are
	// plain data, keyed by configKey's encoding.
	metas     sharedMaps[string]
	configs   map[string]map[string]interface{}
	configKey []byte

	// datacenters keeps one instance of each datacenter list, by its
	// names joined with NULs (which no name holds).
	datacenters map[string][]string
	dcKey       []byte

	// tasks and groups keep one instance of each task and group whose
	// parts are kept ones (intern_task.go).
	tasks  map[taskKey]*structs.Task
	groups map[groupKey]*structs.TaskGroup
}

// sharedValues keeps one instance of each value of a comparable part.
type sharedValues[T comparable] map[T]*T

// share returns the kept part equal to *p, keeping p if there is none.
func (s *sharedValues[T]) share(p *T) *T {
	if p == nil {
		return nil
	}
	return keep((*map[T]*T)(s), *p, p)
}

// resourcesKey is a task's resources without networks, the only ones
// shared: a network request names ports and is rarely equal to another.
type resourcesKey struct {
	cpu, cores, memoryMB, memoryMaxMB, diskMB, iops int
}

func (p *jobParts) shareResources(r *structs.Resources) *structs.Resources {
	// A nil list and an empty one encode differently; only nil is shared.
	if r == nil || r.Networks != nil {
		return r
	}
	k := resourcesKey{r.CPU, r.Cores, r.MemoryMB, r.MemoryMaxMB, r.DiskMB, r.IOPS}
	return keep(&p.resources, k, r)
}

// shareConfig returns the kept driver config equal to c, keeping c if
// there is none. A config holding a value configKey does not know (none
// that a decoded entry holds) is left alone.
// kept reports whether the config returned is nil or a kept one.
func (p *jobParts) shareConfig(t *internTable, c map[string]interface{}) (_ map[string]interface{}, kept bool) {
	if c == nil {
		return nil, true
	}
	if len(c) > sharedMapMaxLen {
		return c, false
	}
	key, ok := appendConfigMap(p.configKey[:0], c)
	p.configKey = key
	if !ok || len(key) > sharedPartMaxBytes {
		return c, false
	}
	if k, ok := p.configs[string(key)]; ok && configMapsEqual(k, c) {
		return k, true
	}
	if p.configs == nil || len(p.configs) >= internMax {
		p.configs = make(map[string]map[string]interface{})
	}
	internKeys(t, c)
	p.configs[string(key)] = c
	return c, true
}

// Tags of configKey's encoding: each value is its tag, then its content.
const (
	cfgNil byte = iota
	cfgString
	cfgBool
	cfgInt
	cfgUint
	cfgFloat
	cfgList
	cfgStrings
	cfgMap
)

// appendConfigMap appends an encoding of m that differs for maps that
// differ in any key, value or value's type; ok is false if m holds a
// value of a type it does not know.
func appendConfigMap(b []byte, m map[string]interface{}) ([]byte, bool) {
	var names [sharedMapMaxLen]string
	sorted := names[:0]
	if len(m) > sharedMapMaxLen {
		sorted = make([]string, 0, len(m))
	}
	for k := range m {
		sorted = append(sorted, k)
	}
	slices.Sort(sorted)
	b = append(b, cfgMap)
	b = binary.AppendUvarint(b, uint64(len(m)))
	for _, k := range sorted {
		b = appendConfigString(b, k)
		var ok bool
		if b, ok = appendConfigValue(b, m[k]); !ok {
			return b, false
		}
	}
	return b, true
}

func appendConfigString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendConfigValue(b []byte, v interface{}) ([]byte, bool) {
	switch v := v.(type) {
	case nil:
		return append(b, cfgNil), true
	case string:
		return appendConfigString(append(b, cfgString), v), true
	case bool:
		if v {
			return append(b, cfgBool, 1), true
		}
		return append(b, cfgBool, 0), true
	case int64:
		return binary.AppendVarint(append(b, cfgInt), v), true
	case uint64:
		return binary.AppendUvarint(append(b, cfgUint), v), true
	case float64:
		return binary.LittleEndian.AppendUint64(append(b, cfgFloat), math.Float64bits(v)), true
	case []interface{}:
		b = binary.AppendUvarint(append(b, cfgList), uint64(len(v)))
		for _, e := range v {
			var ok bool
			if b, ok = appendConfigValue(b, e); !ok {
				return b, false
			}
		}
		return b, true
	case []string:
		b = binary.AppendUvarint(append(b, cfgStrings), uint64(len(v)))
		for _, e := range v {
			b = appendConfigString(b, e)
		}
		return b, true
	case map[string]interface{}:
		return appendConfigMap(b, v)
	}
	return b, false
}

// configMapsEqual compares two configs configKey encodes alike. The key
// alone would do; comparing (without reflection, which allocates) keeps
// a mistake in it from sharing configs that differ.
func configMapsEqual(a, b map[string]interface{}) bool {
	if len(a) != len(b) {
		return false
	}
	for k, va := range a {
		vb, ok := b[k]
		if !ok || !configValuesEqual(va, vb) {
			return false
		}
	}
	return true
}

func configValuesEqual(a, b interface{}) bool {
	switch a := a.(type) {
	case []interface{}:
		b, ok := b.([]interface{})
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !configValuesEqual(a[i], b[i]) {
				return false
			}
		}
		return true
	case []string:
		b, ok := b.([]string)
		return ok && slices.Equal(a, b)
	case map[string]interface{}:
		b, ok := b.(map[string]interface{})
		return ok && configMapsEqual(a, b)
	case float64:
		// By bits, as the key: -0 and 0 encode apart.
		b, ok := b.(float64)
		return ok && math.Float64bits(a) == math.Float64bits(b)
	case nil, string, bool, int64, uint64:
		return a == b
	}
	return false
}

// shareStrings returns the kept env or meta map equal to m, keeping m if
// there is none; kept reports whether the map returned is nil or a kept
// one.
func (p *jobParts) shareStrings(t *internTable, m map[string]string) (_ map[string]string, kept bool) {
	if m == nil {
		return nil, true
	}
	if len(m) > sharedMapMaxLen {
		return m, false
	}
	size := 0
	for k, v := range m {
		size += len(k) + len(v)
	}
	if size > sharedPartMaxBytes {
		return m, false
	}
	return p.metas.share(t, m), true
}

// shareDatacenters returns the kept list equal to dcs, keeping dcs if
// there is none.
func (p *jobParts) shareDatacenters(t *internTable, dcs []string) []string {
	if len(dcs) == 0 || len(dcs) > sharedMapMaxLen {
		return dcs
	}
	key := p.dcKey[:0]
	for _, dc := range dcs {
		key = append(append(key, dc...), 0)
	}
	p.dcKey = key
	if len(key) > sharedPartMaxBytes {
		return dcs
	}
	// A list's capacity is not part of its value; the kept one is used
	// as read-only like any stored object's.
	if kept, ok := p.datacenters[string(key)]; ok {
		return kept
	}
	if p.datacenters == nil || len(p.datacenters) >= internMax {
		p.datacenters = make(map[string][]string)
	}
	for i := range dcs {
		t.set(&dcs[i])
	}
	p.datacenters[string(key)] = dcs
	return dcs
}

// InternJobParts swaps the parts of a job about to be stored (its
// groups' and tasks' blocks, requests and maps, its datacenters, and
// then whole tasks and groups) for equal ones already kept, and its
// groups' and tasks' few-valued strings for kept instances. The job must
// be the caller's own: decoded from an entry or deeply copied, with no
// reader holding its groups or tasks. It does nothing in a snapshot's
// transaction.
func (tx *Txn) InternJobParts(j *structs.Job) {
	t := tx.intern
	if t == nil || j == nil {
		return
	}
	p := &t.jobs
	j.Datacenters = p.shareDatacenters(t, j.Datacenters)
	j.Meta, _ = p.shareStrings(t, j.Meta)
	for i, tg := range j.TaskGroups {
		if tg == nil {
			continue
		}
		t.set(&tg.Name)
		tg.Update = p.updates.share(tg.Update)
		tg.Migrate = p.migrates.share(tg.Migrate)
		tg.RestartPolicy = p.restarts.share(tg.RestartPolicy)
		tg.ReschedulePolicy = p.reschedules.share(tg.ReschedulePolicy)
		tg.EphemeralDisk = p.disks.share(tg.EphemeralDisk)
		var metaKept bool
		tg.Meta, metaKept = p.shareStrings(t, tg.Meta)
		partsKept := metaKept
		for k, task := range tg.Tasks {
			if task == nil {
				partsKept = false
				continue
			}
			t.set(&task.Name)
			t.set(&task.Driver)
			t.set(&task.User)
			t.set(&task.KillSignal)
			var configKept, envKept, metaKept bool
			task.Config, configKept = p.shareConfig(t, task.Config)
			task.Env, envKept = p.shareStrings(t, task.Env)
			task.Meta, metaKept = p.shareStrings(t, task.Meta)
			task.Resources = p.shareResources(task.Resources)
			task.LogConfig = p.logs.share(task.LogConfig)
			task.Lifecycle = p.lifecycles.share(task.Lifecycle)
			kept, ok := p.shareTask(task, configKept && envKept && metaKept)
			tg.Tasks[k] = kept
			partsKept = partsKept && ok
		}
		if partsKept {
			j.TaskGroups[i] = p.shareGroup(tg)
		}
	}
}
