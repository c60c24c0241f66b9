package acl

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode"

	"github.com/hashicorp/hcl"
	"github.com/hashicorp/hcl/hcl/ast"
	hclparser "github.com/hashicorp/hcl/hcl/parser"
	"github.com/hashicorp/hcl/hcl/token"
	jsonparser "github.com/hashicorp/hcl/json/parser"

	"github.com/opennomad/nomad/structs"
)

// Policy is one parsed ACL policy: the rules of one ACLPolicy object.
// Every capability list holds, after Parse, the explicit capabilities
// followed by those the block's policy value expands to, so an ACL built
// from it needs no further knowledge of shorthands.
type Policy struct {
	// Namespaces are the namespace blocks, in the order written. Two
	// blocks may carry the same label; NewACL merges them.
	Namespaces []*NamespacePolicy
	// NodePools are the node_pool blocks, in the order written.
	NodePools []*NodePoolPolicy
	// HostVolumes are the host_volume blocks, in the order written.
	HostVolumes []*HostVolumePolicy
	// Agent, Node, Quota and Plugin are the level-only blocks; nil when
	// the policy has none.
	Agent  *LevelPolicy
	Node   *LevelPolicy
	Quota  *LevelPolicy
	Plugin *LevelPolicy
	// Operator is the operator block, nil when absent.
	Operator *OperatorPolicy
	// Raw is the rules text as given to Parse.
	Raw string
}

// NamespacePolicy is a namespace "<name-or-glob>" block.
type NamespacePolicy struct {
	// Name is the block's label: a namespace name, or a glob with "*".
	Name string
	// Policy is the shorthand value (deny, read, write, scale), or "".
	Policy string
	// Capabilities are the explicit capabilities plus the expansion of
	// Policy and of the host-volume capabilities.
	Capabilities []string
	// Variables are the block's variables rules, nil when absent.
	Variables *VariablesPolicy
}

// VariablesPolicy is a namespace block's variables { ... } block.
type VariablesPolicy struct {
	Paths []*VariablesPathPolicy
}

// VariablesPathPolicy is a path "<glob>" block inside variables.
type VariablesPathPolicy struct {
	// PathSpec is the label: a variable path or a glob; no leading "/".
	PathSpec string
	// Capabilities are as written, with read implying list and deny
	// replacing everything else.
	Capabilities []string
}

// NodePoolPolicy is a node_pool "<name-or-glob>" block.
type NodePoolPolicy struct {
	Name         string
	Policy       string
	Capabilities []string
}

// HostVolumePolicy is a host_volume "<name-or-glob>" block.
type HostVolumePolicy struct {
	Name         string
	Policy       string
	Capabilities []string
}

// LevelPolicy is a block that only has a policy level: agent, node,
// quota and plugin.
type LevelPolicy struct {
	Policy string
}

// OperatorPolicy is the operator block: a level, checked by
// AllowOperatorRead/Write, and capabilities, checked by
// AllowOperatorCapability. Capabilities include the level's expansion.
type OperatorPolicy struct {
	Policy       string
	Capabilities []string
}

// IsEmpty reports whether p has no block at all.
func (p *Policy) IsEmpty() bool {
	return len(p.Namespaces) == 0 && len(p.NodePools) == 0 && len(p.HostVolumes) == 0 &&
		p.Agent == nil && p.Node == nil && p.Quota == nil && p.Plugin == nil && p.Operator == nil
}

var (
	validNamespaceLabel  = regexp.MustCompile(`^[a-zA-Z0-9-*]{1,128}$`)
	validNodePoolLabel   = regexp.MustCompile(`^[a-zA-Z0-9-_*]{1,128}$`)
	validHostVolumeLabel = regexp.MustCompile(`^[a-zA-Z0-9-*]{1,128}$`)
)

// The shapes hcl decodes into. Each level records the keys it does not
// know (unusedKeyPositions) and the nodes of its values, for the line
// numbers of errors.
type (
	rawPolicy struct {
		Namespaces  []*rawNamespace        `hcl:"namespace"`
		NodePools   []*rawLabeled          `hcl:"node_pool"`
		HostVolumes []*rawLabeled          `hcl:"host_volume"`
		Agent       *rawLevel              `hcl:"agent"`
		Node        *rawLevel              `hcl:"node"`
		Quota       *rawLevel              `hcl:"quota"`
		Plugin      *rawLevel              `hcl:"plugin"`
		Operator    *rawCapabilities       `hcl:"operator"`
		Unused      map[string][]token.Pos `hcl:",unusedKeyPositions"`
	}
	rawLevel struct {
		Policy     string                 `hcl:"policy"`
		PolicyNode ast.Node               `hcl:"policy"`
		Unused     map[string][]token.Pos `hcl:",unusedKeyPositions"`
	}
	rawCapabilities struct {
		Policy           string                 `hcl:"policy"`
		PolicyNode       ast.Node               `hcl:"policy"`
		Capabilities     []string               `hcl:"capabilities"`
		CapabilitiesNode ast.Node               `hcl:"capabilities"`
		Unused           map[string][]token.Pos `hcl:",unusedKeyPositions"`
	}
	rawLabeled struct {
		Name            string `hcl:",key"`
		rawCapabilities `hcl:",squash"`
	}
	rawNamespace struct {
		Name            string `hcl:",key"`
		rawCapabilities `hcl:",squash"`
		Variables       *rawVariables `hcl:"variables"`
	}
	rawVariables struct {
		Paths  []*rawPath             `hcl:"path"`
		Unused map[string][]token.Pos `hcl:",unusedKeyPositions"`
	}
	rawPath struct {
		Name             string                 `hcl:",key"`
		Capabilities     []string               `hcl:"capabilities"`
		CapabilitiesNode ast.Node               `hcl:"capabilities"`
		Unused           map[string][]token.Pos `hcl:",unusedKeyPositions"`
	}
)

// invalidf returns an error of kind structs.ErrInvalid, so that an HTTP
// handler answers 400.
func invalidf(format string, args ...interface{}) error {
	return structs.KindErrorf(structs.ErrInvalid, format, args...)
}

// Parse parses rules, HCL1 or, when its first non-space character is
// "{", HCL1-JSON, and validates them strictly, as Nomad does when a
// policy is written:
//
//   - text hcl cannot read: "Failed to parse ACL Policy: <hcl error>";
//   - keys no block knows, or an argument set twice in one block:
//     "Invalid or duplicate policy keys: <key> at line <n> in <block>, ...";
//   - no block at all: "Invalid policy: <rules>";
//   - a bad label, policy value or capability: an error naming the block,
//     the value and its line.
//
// Empty rules are the one exception, as in Nomad: they give an empty
// Policy, which grants nothing, and no error.
//
// Every error is of kind structs.ErrInvalid. Parse never panics.
func Parse(rules string) (p *Policy, err error) {
	p = &Policy{Raw: rules}
	if rules == "" {
		return p, nil
	}
	defer func() {
		// The hcl decoder panics on some malformed input; such input
		// is invalid, never a crash.
		if r := recover(); r != nil {
			p, err = nil, invalidf("Failed to parse ACL Policy: %v", r)
		}
	}()

	file, err := parseHCL(rules)
	if err != nil {
		return nil, invalidf("Failed to parse ACL Policy: %v", err)
	}
	// An argument set twice in one block confuses the decoder; report
	// it first, in the same words as an unknown key.
	if dups := duplicateKeys(file); len(dups) > 0 {
		return nil, invalidf("Invalid or duplicate policy keys: %s", strings.Join(dups, ", "))
	}
	if err := checkLabels(file); err != nil {
		return nil, err
	}
	var raw rawPolicy
	if err := hcl.DecodeObject(&raw, file); err != nil {
		return nil, invalidf("Failed to parse ACL Policy: %v", err)
	}
	if bad := unusedKeys(&raw); len(bad) > 0 {
		return nil, invalidf("Invalid or duplicate policy keys: %s", strings.Join(bad, ", "))
	}
	if err := raw.build(p, file); err != nil {
		return nil, err
	}
	if p.IsEmpty() {
		return nil, invalidf("Invalid policy: %s", rules)
	}
	return p, nil
}

// parseHCL picks the syntax as hcl.Parse does, but lets an argument set
// twice through (Nomad's policies are decoded that way), for
// duplicateKeys to report in Parse's own words.
func parseHCL(rules string) (*ast.File, error) {
	if !isJSON(rules) {
		return hclparser.ParseDontErrorOnDuplicateKeys([]byte(rules))
	}
	file, err := jsonparser.Parse([]byte(rules))
	if err == nil {
		unfoldJSON(file.Node)
	}
	return file, err
}

// unfoldJSON undoes what hcl's JSON parser does to nested objects: it
// folds {"namespace":{"a":{"variables":{"path":{"x":{...}}}}}} into one
// item keyed namespace.a.variables.path.x, which the decoder unfolds
// only one level deep (it would put the path's capabilities on the
// namespace) and whose inner keys it takes for unknown ones. unfoldJSON
// nests every such item back, one key per level, which the decoder reads
// as the HCL syntax namespace "a" { variables { path "x" {...} } }.
func unfoldJSON(n ast.Node) {
	list, ok := n.(*ast.ObjectList)
	if !ok {
		return
	}
	for _, item := range list.Items {
		for at := item; len(at.Keys) > 1; {
			inner := &ast.ObjectItem{Keys: at.Keys[1:], Val: at.Val}
			at.Keys = at.Keys[:1]
			at.Val = &ast.ObjectType{List: &ast.ObjectList{Items: []*ast.ObjectItem{inner}}}
			at = inner
		}
		ast.Walk(item.Val, func(n ast.Node) (ast.Node, bool) {
			if obj, ok := n.(*ast.ObjectType); ok {
				unfoldJSON(obj.List)
				return n, false
			}
			return n, true
		})
	}
}

// isJSON reports whether rules are HCL1-JSON: their first non-space
// character is "{", as hcl decides.
func isJSON(rules string) bool {
	return strings.HasPrefix(strings.TrimLeftFunc(rules, unicode.IsSpace), "{")
}

// keyProblem is one unknown or duplicate key.
type keyProblem struct {
	key, where string
	pos        token.Pos
}

func (k keyProblem) String() string {
	s := fmt.Sprintf("%q", k.key)
	if k.pos.Line > 0 {
		s += fmt.Sprintf(" at line %d", k.pos.Line)
	}
	if k.where != "" {
		s += " in " + k.where
	}
	return s
}

// unusedKeys lists, in the order written, the keys the decoder did not
// use at any level.
func unusedKeys(raw *rawPolicy) []string {
	var probs []keyProblem
	add := func(where string, unused map[string][]token.Pos) {
		for k, positions := range unused {
			for _, pos := range positions {
				probs = append(probs, keyProblem{key: k, where: where, pos: pos})
			}
		}
	}
	add("", raw.Unused)
	for _, ns := range raw.Namespaces {
		where := fmt.Sprintf("namespace %q", ns.Name)
		add(where, ns.Unused)
		if ns.Variables != nil {
			add(where+" variables", ns.Variables.Unused)
			for _, path := range ns.Variables.Paths {
				add(fmt.Sprintf("%s variables path %q", where, path.Name), path.Unused)
			}
		}
	}
	for _, np := range raw.NodePools {
		add(fmt.Sprintf("node_pool %q", np.Name), np.Unused)
	}
	for _, hv := range raw.HostVolumes {
		add(fmt.Sprintf("host_volume %q", hv.Name), hv.Unused)
	}
	for name, lvl := range map[string]*rawLevel{"agent": raw.Agent, "node": raw.Node, "quota": raw.Quota, "plugin": raw.Plugin} {
		if lvl != nil {
			add(name, lvl.Unused)
		}
	}
	if raw.Operator != nil {
		add("operator", raw.Operator.Unused)
	}
	return sortProblems(probs)
}

// duplicateKeys lists the arguments (not blocks) given more than once in
// one block.
func duplicateKeys(file *ast.File) []string {
	var probs []keyProblem
	ast.Walk(file.Node, func(n ast.Node) (ast.Node, bool) {
		list, ok := n.(*ast.ObjectList)
		if !ok {
			return n, true
		}
		seen := map[string]bool{}
		for _, item := range list.Items {
			if len(item.Keys) != 1 {
				continue
			}
			if _, isBlock := item.Val.(*ast.ObjectType); isBlock {
				continue
			}
			key, _ := item.Keys[0].Token.Value().(string)
			if seen[key] {
				probs = append(probs, keyProblem{key: key, where: "a block that already sets it", pos: item.Keys[0].Pos()})
			}
			seen[key] = true
		}
		return n, true
	})
	return sortProblems(probs)
}

// Which blocks take a label. The decoder accepts a missing or extra label
// without a word (namespace { policy = "read" } would be a namespace
// named "policy"), so checkLabels looks at the syntax tree first.
var (
	labelledBlocks   = set("namespace", "node_pool", "host_volume")
	unlabelledBlocks = set("agent", "node", "quota", "plugin", "operator")
)

// checkLabels refuses a block with a missing, extra or unexpected label.
// In HCL1-JSON, unfolded by unfoldJSON, a label is a nested key: a
// missing one shows as arguments right in the block, an unexpected one as
// an unknown key.
func checkLabels(file *ast.File) error {
	var err error
	ast.Walk(file.Node, func(n ast.Node) (ast.Node, bool) {
		list, ok := n.(*ast.ObjectList)
		if !ok || err != nil {
			return n, err == nil
		}
		topLevel := list == file.Node
		for _, item := range list.Items {
			kind, _ := item.Keys[0].Token.Value().(string)
			labelled := topLevel && labelledBlocks[kind] || !topLevel && kind == "path"
			switch {
			case topLevel && unlabelledBlocks[kind] && len(item.Keys) > 1:
				label, _ := item.Keys[1].Token.Value().(string)
				err = invalidf("Invalid %s block: it takes no label, found %q%s", kind, label, atLine(item.Keys[1]))
			case labelled && len(item.Keys) == 1 && hasArguments(item.Val):
				err = invalidf("Invalid %s block: it needs a label%s", kind, atLine(item.Keys[0]))
			case labelled && len(item.Keys) > 2:
				label, _ := item.Keys[2].Token.Value().(string)
				err = invalidf("Invalid %s block: it takes one label, found also %q%s", kind, label, atLine(item.Keys[2]))
			}
			if err != nil {
				return n, false
			}
		}
		return n, true
	})
	return err
}

// hasArguments reports whether n is an object with some argument in it
// (not only nested blocks), which a label-less block holds.
func hasArguments(n ast.Node) bool {
	obj, ok := n.(*ast.ObjectType)
	if !ok {
		return false
	}
	for _, item := range obj.List.Items {
		if _, isObject := item.Val.(*ast.ObjectType); !isObject {
			return true
		}
	}
	return false
}

// sortProblems orders problems as written and formats them.
func sortProblems(probs []keyProblem) []string {
	sort.SliceStable(probs, func(i, j int) bool {
		if probs[i].pos.Line != probs[j].pos.Line {
			return probs[i].pos.Line < probs[j].pos.Line
		}
		return probs[i].pos.Column < probs[j].pos.Column
	})
	out := make([]string, len(probs))
	for i, pr := range probs {
		out[i] = pr.String()
	}
	return out
}

// atLine is " (line n)" for a node the parser placed, "" otherwise.
func atLine(n ast.Node) string {
	if n == nil || n.Pos().Line == 0 {
		return ""
	}
	return fmt.Sprintf(" (line %d)", n.Pos().Line)
}

// capLine is the line of the capability c in a capabilities list node,
// falling back on the list's own line.
func capLine(list ast.Node, c string) string {
	if lt, ok := list.(*ast.ListType); ok {
		for _, elem := range lt.List {
			if lit, ok := elem.(*ast.LiteralType); ok {
				if v, ok := lit.Token.Value().(string); ok && v == c {
					return atLine(lit)
				}
			}
		}
	}
	return atLine(list)
}

// labelLines maps each label of a top-level block kind to the line of its
// first block, from the syntax tree.
func labelLines(file *ast.File, kind string) map[string]string {
	lines := map[string]string{}
	list, ok := file.Node.(*ast.ObjectList)
	if !ok {
		return lines
	}
	for _, item := range list.Items {
		if len(item.Keys) < 2 {
			continue
		}
		if k, _ := item.Keys[0].Token.Value().(string); k != kind {
			continue
		}
		label, _ := item.Keys[1].Token.Value().(string)
		if _, seen := lines[label]; !seen {
			lines[label] = atLine(item.Keys[1])
		}
	}
	return lines
}

// build validates raw, expands its shorthands and fills p.
func (raw *rawPolicy) build(p *Policy, file *ast.File) error {
	nsLines := labelLines(file, "namespace")
	for _, ns := range raw.Namespaces {
		where := fmt.Sprintf("namespace %q", ns.Name)
		if !validNamespaceLabel.MatchString(ns.Name) {
			return invalidf("Invalid namespace name %q%s", ns.Name, nsLines[ns.Name])
		}
		caps, err := ns.rawCapabilities.check(where, policyValues, namespaceCapabilities)
		if err != nil {
			return err
		}
		caps = append(caps, expandNamespacePolicy(ns.Policy)...)
		out := &NamespacePolicy{Name: ns.Name, Policy: ns.Policy, Capabilities: expandHostVolumeNamespaceCaps(caps)}
		if ns.Variables != nil {
			out.Variables = &VariablesPolicy{}
			for _, path := range ns.Variables.Paths {
				if path.Name == "" || strings.HasPrefix(path.Name, "/") {
					return invalidf("Invalid variable path %q in %s%s: a path may not be empty or start with \"/\"",
						path.Name, where, atLine(path.CapabilitiesNode))
				}
				for _, c := range path.Capabilities {
					if !variablesCapabilities[c] {
						return invalidf("Invalid variable capability %q for path %q in %s%s",
							c, path.Name, where, capLine(path.CapabilitiesNode, c))
					}
				}
				out.Variables.Paths = append(out.Variables.Paths, &VariablesPathPolicy{
					PathSpec:     path.Name,
					Capabilities: expandVariablesCapabilities(path.Capabilities),
				})
			}
		}
		p.Namespaces = append(p.Namespaces, out)
	}

	npLines := labelLines(file, "node_pool")
	for _, np := range raw.NodePools {
		if !validNodePoolLabel.MatchString(np.Name) {
			return invalidf("Invalid node pool name %q%s", np.Name, npLines[np.Name])
		}
		caps, err := np.check(fmt.Sprintf("node_pool %q", np.Name), policyValues, nodePoolCapabilities)
		if err != nil {
			return err
		}
		p.NodePools = append(p.NodePools, &NodePoolPolicy{
			Name: np.Name, Policy: np.Policy, Capabilities: append(caps, expandNodePoolPolicy(np.Policy)...),
		})
	}

	hvLines := labelLines(file, "host_volume")
	for _, hv := range raw.HostVolumes {
		if !validHostVolumeLabel.MatchString(hv.Name) {
			return invalidf("Invalid host volume name %q%s", hv.Name, hvLines[hv.Name])
		}
		caps, err := hv.check(fmt.Sprintf("host_volume %q", hv.Name), policyValues, hostVolumeCapabilities)
		if err != nil {
			return err
		}
		p.HostVolumes = append(p.HostVolumes, &HostVolumePolicy{
			Name: hv.Name, Policy: hv.Policy, Capabilities: append(caps, expandHostVolumePolicy(hv.Policy)...),
		})
	}

	var err error
	if p.Agent, err = raw.Agent.level("agent", policyValues); err != nil {
		return err
	}
	if p.Node, err = raw.Node.level("node", policyValues); err != nil {
		return err
	}
	if p.Quota, err = raw.Quota.level("quota", policyValues); err != nil {
		return err
	}
	if p.Plugin, err = raw.Plugin.level("plugin", pluginPolicyValues); err != nil {
		return err
	}
	if raw.Operator != nil {
		caps, err := raw.Operator.check("operator", policyValues, operatorCapabilities)
		if err != nil {
			return err
		}
		p.Operator = &OperatorPolicy{
			Policy: raw.Operator.Policy, Capabilities: append(caps, expandOperatorPolicy(raw.Operator.Policy)...),
		}
	}
	return nil
}

// check validates a block's policy value and capabilities and returns a
// copy of the capabilities.
func (rc *rawCapabilities) check(where string, values, caps map[string]bool) ([]string, error) {
	if rc.Policy != "" && !values[rc.Policy] {
		return nil, invalidf("Invalid %s policy %q%s", where, rc.Policy, atLine(rc.PolicyNode))
	}
	for _, c := range rc.Capabilities {
		if !caps[c] {
			return nil, invalidf("Invalid %s capability %q%s", where, c, capLine(rc.CapabilitiesNode, c))
		}
	}
	return append([]string{}, rc.Capabilities...), nil
}

// level validates a level-only block.
func (rl *rawLevel) level(where string, values map[string]bool) (*LevelPolicy, error) {
	if rl == nil {
		return nil, nil
	}
	if rl.Policy != "" && !values[rl.Policy] {
		return nil, invalidf("Invalid %s policy %q%s", where, rl.Policy, atLine(rl.PolicyNode))
	}
	return &LevelPolicy{Policy: rl.Policy}, nil
}
