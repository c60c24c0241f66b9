package acl

import (
	"sort"
	"strings"
)

// globMatch reports whether name matches pattern, where "*" stands for
// any run of characters, "/" included, and every other character for
// itself.
func globMatch(pattern, name string) bool {
	return matchParts(strings.Split(pattern, "*"), name)
}

// matchParts is globMatch on a pattern already split at its stars.
func matchParts(parts []string, name string) bool {
	if len(parts) == 1 {
		return parts[0] == name
	}
	first, last := parts[0], parts[len(parts)-1]
	if len(name) < len(first)+len(last) || !strings.HasPrefix(name, first) || !strings.HasSuffix(name, last) {
		return false
	}
	// The middle parts must appear in order between the prefix and the
	// suffix; taking each at its leftmost place leaves the most room for
	// the rest.
	middle := name[len(first) : len(name)-len(last)]
	for _, part := range parts[1 : len(parts)-1] {
		i := strings.Index(middle, part)
		if i < 0 {
			return false
		}
		middle = middle[i+len(part):]
	}
	return true
}

// globDistance ranks a glob that matches name: the smaller, the closer
// the match. It is len(name) - len(glob) + count("*"), the number of
// characters the stars stand for plus one per star.
func globDistance(glob, name string) int {
	return len(name) - len(glob) + strings.Count(glob, "*")
}

// capabilitySet is a set of capabilities. A set holding deny grants
// nothing and takes no further capability.
type capabilitySet map[string]struct{}

func (c capabilitySet) has(capability string) bool {
	_, ok := c[capability]
	return ok
}

// denied reports whether the set holds deny.
func (c capabilitySet) denied() bool { return c.has(PolicyDeny) }

// allows reports whether the set grants capability: it holds it and no
// deny. Asking for deny itself is never granted.
func (c capabilitySet) allows(capability string) bool {
	return capability != PolicyDeny && !c.denied() && c.has(capability)
}

// add merges capabilities into the set: deny wipes it and blocks every
// later addition.
func (c capabilitySet) add(capabilities []string) {
	if c.denied() {
		return
	}
	for _, capability := range capabilities {
		if capability == PolicyDeny {
			clear(c)
			c[PolicyDeny] = struct{}{}
			return
		}
		c[capability] = struct{}{}
	}
}

// globRule is a labelled capability set whose label holds a "*".
type globRule struct {
	glob  string
	parts []string // glob split at its stars, once
	caps  capabilitySet
}

// labelTable holds capability sets by label, for namespaces, node pools,
// host volumes and variables. Once built it is only read.
type labelTable struct {
	exact map[string]capabilitySet
	globs []globRule // sorted by glob, so lookups are deterministic
}

// builder returns the set for label, creating it if needed; used while
// the table is built.
func (t *labelTable) builder(label string) capabilitySet {
	if !strings.Contains(label, "*") {
		if t.exact == nil {
			t.exact = map[string]capabilitySet{}
		}
		if c, ok := t.exact[label]; ok {
			return c
		}
		c := capabilitySet{}
		t.exact[label] = c
		return c
	}
	for _, g := range t.globs {
		if g.glob == label {
			return g.caps
		}
	}
	c := capabilitySet{}
	t.globs = append(t.globs, globRule{glob: label, parts: strings.Split(label, "*"), caps: c})
	return c
}

// seal orders the globs once building is done.
func (t *labelTable) seal() {
	sort.Slice(t.globs, func(i, j int) bool { return t.globs[i].glob < t.globs[j].glob })
}

// lookup returns the set that governs name: its exact label if there is
// one, else the matching glob with the smallest globDistance; on a tie,
// the glob that sorts first.
func (t *labelTable) lookup(name string) (capabilitySet, bool) {
	if c, ok := t.exact[name]; ok {
		return c, true
	}
	var best capabilitySet
	bestDistance, found := 0, false
	for _, g := range t.globs {
		if !matchParts(g.parts, name) {
			continue
		}
		// globDistance, with count("*") = len(parts) - 1.
		if d := len(name) - len(g.glob) + len(g.parts) - 1; !found || d < bestDistance {
			best, bestDistance, found = g.caps, d, true
		}
	}
	return best, found
}

// any reports whether some set of the table satisfies ok.
func (t *labelTable) any(ok func(capabilitySet) bool) bool {
	return t.anyKey(func(_ string, c capabilitySet) bool { return ok(c) })
}

// anyKey reports whether some label and its set satisfy ok.
func (t *labelTable) anyKey(ok func(label string, c capabilitySet) bool) bool {
	for label, c := range t.exact {
		if ok(label, c) {
			return true
		}
	}
	for _, g := range t.globs {
		if ok(g.glob, g.caps) {
			return true
		}
	}
	return false
}
