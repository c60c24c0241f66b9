package structs

import "strconv"

// serviceDiffs pairs services by name and port label, as a service is
// known in the catalog, so a changed tag or check shows as an edit of
// that service. Tags are sets; checks pair by name.
func serviceDiffs(old, new []*Service, contextual bool) []*ObjectDiff {
	key := func(s *Service) string { return s.Name + "\x00" + s.PortLabel }
	index := func(list []*Service) map[string]*Service {
		m := make(map[string]*Service, len(list))
		for _, s := range list {
			if s != nil {
				m[key(s)] = s
			}
		}
		return m
	}
	oldSet, newSet := index(old), index(new)
	var out []*ObjectDiff
	for _, k := range unionKeys(oldSet, newSet) {
		o, n := oldSet[k], newSet[k]
		var oldTags, newTags, oldCanary, newCanary []string
		var oldMeta, newMeta map[string]string
		var oldChecks, newChecks []*ServiceCheck
		if o != nil {
			oldTags, oldCanary, oldMeta, oldChecks = o.Tags, o.CanaryTags, o.Meta, o.Checks
		}
		if n != nil {
			newTags, newCanary, newMeta, newChecks = n.Tags, n.CanaryTags, n.Meta, n.Checks
		}
		fields := fieldDiffs(flattenPrimitives(o), flattenPrimitives(n), contextual)
		objects := appendObjects(nil,
			stringSetDiff("Tags", oldTags, newTags, contextual),
			stringSetDiff("CanaryTags", oldCanary, newCanary, contextual),
			flatObjectDiff("Meta", oldMeta, newMeta, contextual))
		objects = append(objects, checkDiffs(oldChecks, newChecks, contextual)...)
		if d := composeObject("Service", o != nil, n != nil, fields, objects); d != nil {
			out = append(out, d)
		}
	}
	return out
}

func checkDiffs(old, new []*ServiceCheck, contextual bool) []*ObjectDiff {
	index := func(list []*ServiceCheck) map[string]*ServiceCheck {
		m := make(map[string]*ServiceCheck, len(list))
		for _, c := range list {
			if c != nil {
				m[c.Name+"\x00"+c.Type+"\x00"+c.PortLabel] = c
			}
		}
		return m
	}
	oldSet, newSet := index(old), index(new)
	var out []*ObjectDiff
	for _, k := range unionKeys(oldSet, newSet) {
		if d := primitiveObjectDiff("Check", oldSet[k], newSet[k], contextual); d != nil {
			out = append(out, d)
		}
	}
	return out
}

// actionDiffs diffs a task's actions, matched by name; the arguments are
// an object of their positions, as their order matters.
func actionDiffs(old, new []*Action, contextual bool) []*ObjectDiff {
	index := func(list []*Action) map[string]*Action {
		m := make(map[string]*Action, len(list))
		for _, a := range list {
			if a != nil {
				m[a.Name] = a
			}
		}
		return m
	}
	args := func(a *Action) map[string]string {
		if a == nil || len(a.Args) == 0 {
			return nil
		}
		m := make(map[string]string, len(a.Args))
		for i, arg := range a.Args {
			m[strconv.Itoa(i)] = arg
		}
		return m
	}
	oldSet, newSet := index(old), index(new)
	var out []*ObjectDiff
	for _, k := range unionKeys(oldSet, newSet) {
		o, n := oldSet[k], newSet[k]
		fields := fieldDiffs(flattenPrimitives(o), flattenPrimitives(n), contextual)
		objects := appendObjects(nil, flatObjectDiff("Args", args(o), args(n), contextual))
		if d := composeObject("Action", o != nil, n != nil, fields, objects); d != nil {
			out = append(out, d)
		}
	}
	return out
}
