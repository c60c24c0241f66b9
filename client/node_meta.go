package client

import (
	"fmt"
	"maps"
	"sort"
	"strings"
	"unicode"

	"github.com/opennomad/nomad/client/state"
	"github.com/opennomad/nomad/structs"
)

// NodeMeta is the node's metadata as /v1/client/metadata shows it.
type NodeMeta struct {
	// Meta is what the node registers: Static with Dynamic applied.
	Meta map[string]string
	// Dynamic is what was applied at run time; a nil value removes the
	// key from Meta.
	Dynamic map[string]*string
	// Static is the agent configuration's client.meta.
	Static map[string]string
}

// NodeMeta returns the node's metadata.
func (c *Client) NodeMeta() *NodeMeta {
	c.nodeMu.RLock()
	defer c.nodeMu.RUnlock()
	return c.nodeMetaLocked()
}

func (c *Client) nodeMetaLocked() *NodeMeta {
	return &NodeMeta{
		Meta:    maps.Clone(c.node.Meta),
		Dynamic: cloneDynamicMeta(c.dynamicMeta),
		Static:  nonNilMeta(maps.Clone(c.cfg.Meta)),
	}
}

// ApplyNodeMeta merges changes into the dynamic metadata (a nil value
// removes the key from the node's meta, static or not), stores it so a
// restarted client keeps it, and sends the node to the servers so that
// constraints on ${meta.*} see the new values. It refuses invalid keys
// (ErrInvalid) and changes nothing then.
func (c *Client) ApplyNodeMeta(changes map[string]*string) (*NodeMeta, error) {
	if err := validateNodeMetaKeys(changes); err != nil {
		return nil, err
	}
	c.nodeMu.Lock()
	dynamic := cloneDynamicMeta(c.dynamicMeta)
	for k, v := range changes {
		dynamic[k] = v
	}
	if err := state.SaveNodeMeta(c.cfg.StateDir, dynamic); err != nil {
		c.nodeMu.Unlock()
		return nil, fmt.Errorf("node %s: %w", c.node.ID, err)
	}
	c.dynamicMeta = dynamic
	node := c.node.Copy()
	node.Meta = mergeNodeMeta(c.cfg.Meta, dynamic)
	node.ComputeClass()
	c.node = node
	out := c.nodeMetaLocked()
	c.nodeMu.Unlock()

	c.markNodeChanged()
	return out, nil
}

// markNodeChanged asks the loop that registers node changes to send the
// node now.
func (c *Client) markNodeChanged() {
	select {
	case c.nodeChanged <- struct{}{}:
	default:
	}
}

// mergeNodeMeta is static with dynamic applied.
func mergeNodeMeta(static map[string]string, dynamic map[string]*string) map[string]string {
	out := nonNilMeta(maps.Clone(static))
	for k, v := range dynamic {
		if v == nil {
			delete(out, k)
			continue
		}
		out[k] = *v
	}
	return out
}

// applyDynamicMeta sets a freshly built node's meta (built from the static
// meta alone) to include the dynamic meta.
func (c *Client) applyDynamicMeta(n *structs.Node) {
	if len(c.dynamicMeta) == 0 {
		return
	}
	n.Meta = mergeNodeMeta(c.cfg.Meta, c.dynamicMeta)
	n.ComputeClass()
}

func cloneDynamicMeta(m map[string]*string) map[string]*string {
	out := make(map[string]*string, len(m))
	for k, v := range m {
		if v != nil {
			s := *v
			v = &s
		}
		out[k] = v
	}
	return out
}

func nonNilMeta(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// validateNodeMetaKeys lists every key that cannot be one of a node's
// meta: keys are read in job files as ${meta.<key>}, so each must be
// dotted HCL identifiers.
func validateNodeMetaKeys(meta map[string]*string) error {
	keys := make([]string, 0, len(meta))
	for k := range meta {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var problems []string
	for _, k := range keys {
		switch {
		case k == "":
			problems = append(problems, "metadata keys must not be empty")
		case !validDottedIdentifier(k):
			problems = append(problems, fmt.Sprintf("%q is invalid; metadata keys must be valid dotted hcl identifiers", k))
		}
	}
	if len(problems) > 0 {
		return invalid("%s", strings.Join(problems, "; "))
	}
	return nil
}

// validDottedIdentifier reports whether every dot-separated part of s is
// an HCL identifier: a letter or underscore, then letters, digits,
// underscores and dashes.
func validDottedIdentifier(s string) bool {
	for _, part := range strings.Split(s, ".") {
		if part == "" {
			return false
		}
		for i, r := range part {
			letter := unicode.IsLetter(r) || r == '_'
			if i == 0 && !letter {
				return false
			}
			if !letter && !unicode.IsDigit(r) && r != '-' {
				return false
			}
		}
	}
	return true
}
