package structs

import (
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
)

// ComputeClass sets the node's ComputedClass: a hash of every field a
// constraint can read except the unique.* ones. Nodes with equal classes
// are interchangeable for feasibility, which lets the scheduler check one
// node per class and lets blocked evaluations wait on classes, not nodes.
func (n *Node) ComputeClass() {
	h := fnv.New64a()
	write := func(s string) {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	write(n.Datacenter)
	write(n.NodeClass)
	write(n.NodePool)
	hashFilteredMap(write, "attr", n.Attributes)
	hashFilteredMap(write, "meta", n.Meta)
	// Driver health decides feasibility too; include it so a node whose
	// driver turns unhealthy gets a class of its own.
	drivers := make([]string, 0, len(n.Drivers))
	for name, d := range n.Drivers {
		drivers = append(drivers, name+"="+strconv.FormatBool(d.Detected && d.Healthy))
	}
	slices.Sort(drivers)
	for _, d := range drivers {
		write(d)
	}
	n.ComputedClass = "v1:" + strconv.FormatUint(h.Sum64(), 10)
}

func hashFilteredMap(write func(string), prefix string, m map[string]string) {
	keys := make([]string, 0, len(m))
	for k := range m {
		if IsUniqueNamespace(k) {
			continue
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	write(prefix)
	for _, k := range keys {
		write(k)
		write(m[k])
	}
}

// IsUniqueNamespace reports whether an attribute or meta key is unique to
// one node and therefore excluded from its computed class.
func IsUniqueNamespace(key string) bool {
	return strings.HasPrefix(key, "unique.")
}
