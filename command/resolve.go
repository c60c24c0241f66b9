package command

import (
	"fmt"
	"strings"

	"github.com/opennomad/nomad/api"
)

// Allocations, evaluations and nodes are named by UUID; users type a
// prefix. These helpers turn a prefix into exactly one object or an error
// that says what went wrong (nothing matched, or several did, listed).

// ambiguousError reports a prefix that matched more than one object.
type ambiguousError struct {
	kind string // plural noun: "allocations"
	list string // formatted table of the matches
}

func (e *ambiguousError) Error() string {
	return fmt.Sprintf("Prefix matched multiple %s\n\n%s", e.kind, e.list)
}

// notFoundError reports a prefix that matched nothing.
type notFoundError struct {
	kind   string // singular noun: "allocation"
	prefix string
}

func (e *notFoundError) Error() string {
	return fmt.Sprintf("No %s with prefix or ID %q found", e.kind, e.prefix)
}

// uuidPrefix checks a UUID prefix and returns the form to send to the
// server: hex digits pair up into bytes in the servers' ID indexes, so an
// odd-length prefix is shortened by one and the result is filtered here.
func uuidPrefix(prefix string) (string, error) {
	if len(prefix) < 2 {
		return "", fmt.Errorf("identifier %q must contain at least two characters", prefix)
	}
	hex := strings.ReplaceAll(prefix, "-", "")
	if len(hex)%2 == 1 {
		return prefix[:len(prefix)-1], nil
	}
	return prefix, nil
}

// resolveAlloc returns the allocation whose ID starts with prefix.
func resolveAlloc(m *Meta, c *api.Client, prefix string, length int) (*api.Allocation, error) {
	sent, err := uuidPrefix(prefix)
	if err != nil {
		return nil, err
	}
	q := m.query()
	q.Prefix = sent
	stubs, _, err := c.Allocations().List(q)
	if err != nil {
		return nil, fmt.Errorf("querying allocations: %s", m.describe(err))
	}
	var matches []*api.AllocationListStub
	for _, s := range stubs {
		if strings.HasPrefix(s.ID, prefix) {
			matches = append(matches, s)
		}
	}
	switch len(matches) {
	case 0:
		return nil, &notFoundError{kind: "allocation", prefix: prefix}
	case 1:
	default:
		return nil, &ambiguousError{kind: "allocations", list: formatAllocStubs(matches, length, true)}
	}
	alloc, _, err := c.Allocations().Info(matches[0].ID, m.query())
	if err != nil {
		return nil, fmt.Errorf("querying allocation %q: %s", matches[0].ID, m.describe(err))
	}
	return alloc, nil
}

// resolveEval returns the evaluation whose ID starts with prefix.
func resolveEval(m *Meta, c *api.Client, prefix string, length int) (*api.Evaluation, error) {
	sent, err := uuidPrefix(prefix)
	if err != nil {
		return nil, err
	}
	q := m.query()
	q.Prefix = sent
	evals, _, err := c.Evaluations().List(q)
	if err != nil {
		return nil, fmt.Errorf("querying evaluations: %s", m.describe(err))
	}
	var matches []*api.Evaluation
	for _, e := range evals {
		if strings.HasPrefix(e.ID, prefix) {
			matches = append(matches, e)
		}
	}
	switch len(matches) {
	case 0:
		return nil, &notFoundError{kind: "evaluation", prefix: prefix}
	case 1:
	default:
		return nil, &ambiguousError{kind: "evaluations", list: formatEvalList(matches, length, false)}
	}
	eval, _, err := c.Evaluations().Info(matches[0].ID, m.query())
	if err != nil {
		return nil, fmt.Errorf("querying evaluation %q: %s", matches[0].ID, m.describe(err))
	}
	return eval, nil
}

// resolveNode returns the node whose ID starts with prefix.
func resolveNode(m *Meta, c *api.Client, prefix string, length int) (*api.Node, error) {
	sent, err := uuidPrefix(prefix)
	if err != nil {
		return nil, err
	}
	q := m.query()
	q.Prefix = sent
	stubs, _, err := c.Nodes().List(q)
	if err != nil {
		return nil, fmt.Errorf("querying nodes: %s", m.describe(err))
	}
	var matches []*api.NodeListStub
	for _, s := range stubs {
		if strings.HasPrefix(s.ID, prefix) {
			matches = append(matches, s)
		}
	}
	switch len(matches) {
	case 0:
		return nil, &notFoundError{kind: "node", prefix: prefix}
	case 1:
	default:
		return nil, &ambiguousError{kind: "nodes", list: formatNodeList(matches, length)}
	}
	node, _, err := c.Nodes().Info(matches[0].ID, m.query())
	if err != nil {
		return nil, fmt.Errorf("querying node %q: %s", matches[0].ID, m.describe(err))
	}
	return node, nil
}

// resolveJobID returns the ID of the job named by id or, failing an exact
// match, the only job whose ID starts with it.
func resolveJobID(m *Meta, c *api.Client, id string) (string, error) {
	q := m.query()
	q.Prefix = id
	jobs, _, err := c.Jobs().List(q)
	if err != nil {
		return "", fmt.Errorf("querying jobs: %s", m.describe(err))
	}
	for _, j := range jobs {
		if j.ID == id {
			return id, nil
		}
	}
	switch len(jobs) {
	case 0:
		return "", &notFoundError{kind: "job", prefix: id}
	case 1:
		return jobs[0].ID, nil
	}
	return "", &ambiguousError{kind: "jobs", list: formatJobList(jobs, m.allNamespaces())}
}
