package command

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/opennomad/nomad/api"
)

// Tables shared by several commands: jobs, allocations, evaluations and
// nodes. Rows are sorted so output is stable from one run to the next.

// formatJobList renders job stubs: `ID|Type|Priority|Status|Submit Date`,
// with a Namespace column when listing every namespace.
func formatJobList(jobs []*api.JobListStub, allNamespaces bool) string {
	sort.Slice(jobs, func(i, j int) bool {
		if jobs[i].Namespace != jobs[j].Namespace {
			return jobs[i].Namespace < jobs[j].Namespace
		}
		return jobs[i].ID < jobs[j].ID
	})
	header := "ID|Type|Priority|Status|Submit Date"
	if allNamespaces {
		header = "ID|Namespace|Type|Priority|Status|Submit Date"
	}
	rows := []string{header}
	for _, j := range jobs {
		typ := j.Type
		switch {
		case j.Periodic:
			typ += "/periodic"
		case j.ParameterizedJob:
			typ += "/parameterized"
		}
		if allNamespaces {
			rows = append(rows, fmt.Sprintf("%s|%s|%s|%d|%s|%s", j.ID, j.Namespace, typ, j.Priority, jobStubStatus(j), formatUnixNano(j.SubmitTime)))
		} else {
			rows = append(rows, fmt.Sprintf("%s|%s|%d|%s|%s", j.ID, typ, j.Priority, jobStubStatus(j), formatUnixNano(j.SubmitTime)))
		}
	}
	return formatList(rows)
}

// jobStubStatus marks a stopped job that is still running down.
func jobStubStatus(j *api.JobListStub) string {
	if j.Stop && j.Status != api.JobStatusDead {
		return j.Status + " (stopped)"
	}
	return j.Status
}

// formatAllocStubs renders allocations:
// `ID|Node ID|Task Group|Version|Desired|Status|Created|Modified`, with a
// Job ID column when the allocations may belong to different jobs.
func formatAllocStubs(allocs []*api.AllocationListStub, length int, withJob bool) string {
	sort.Slice(allocs, func(i, j int) bool {
		if allocs[i].CreateIndex != allocs[j].CreateIndex {
			return allocs[i].CreateIndex > allocs[j].CreateIndex
		}
		return allocs[i].ID < allocs[j].ID
	})
	header := "ID|Node ID|Task Group|Version|Desired|Status|Created|Modified"
	if withJob {
		header = "ID|Job ID|Node ID|Task Group|Version|Desired|Status|Created|Modified"
	}
	rows := []string{header}
	for _, a := range allocs {
		cols := []string{limit(a.ID, length)}
		if withJob {
			cols = append(cols, a.JobID)
		}
		cols = append(cols, limit(a.NodeID, length), a.TaskGroup, strconv.FormatUint(a.JobVersion, 10),
			a.DesiredStatus, a.ClientStatus, formatUnixNano(a.CreateTime), formatUnixNano(a.ModifyTime))
		rows = append(rows, strings.Join(cols, "|"))
	}
	return formatList(rows)
}

// formatEvalList renders evaluations:
// `ID|Priority|Triggered By|Job ID|Namespace|Node ID|Status|Placement Failures`.
// With short set (job status -evals) the job, namespace and node columns
// are left out.
func formatEvalList(evals []*api.Evaluation, length int, short bool) string {
	sort.Slice(evals, func(i, j int) bool {
		if evals[i].CreateIndex != evals[j].CreateIndex {
			return evals[i].CreateIndex > evals[j].CreateIndex
		}
		return evals[i].ID < evals[j].ID
	})
	header := "ID|Priority|Triggered By|Job ID|Namespace|Node ID|Status|Placement Failures"
	if short {
		header = "ID|Priority|Triggered By|Status|Placement Failures"
	}
	rows := []string{header}
	for _, e := range evals {
		failures := strconv.FormatBool(len(e.FailedTGAllocs) > 0)
		if short {
			rows = append(rows, fmt.Sprintf("%s|%d|%s|%s|%s", limit(e.ID, length), e.Priority, e.TriggeredBy, e.Status, failures))
			continue
		}
		node := limit(e.NodeID, length)
		if node == "" {
			node = "<none>"
		}
		rows = append(rows, fmt.Sprintf("%s|%d|%s|%s|%s|%s|%s|%s", limit(e.ID, length), e.Priority, e.TriggeredBy,
			e.JobID, e.Namespace, node, e.Status, failures))
	}
	return formatList(rows)
}

// formatNodeList renders nodes: `ID|Node Pool|DC|Name|Class|Drain|Eligibility|Status`.
func formatNodeList(nodes []*api.NodeListStub, length int) string {
	sortNodes(nodes)
	rows := []string{"ID|Node Pool|DC|Name|Class|Drain|Eligibility|Status"}
	for _, n := range nodes {
		class := n.NodeClass
		if class == "" {
			class = "<none>"
		}
		rows = append(rows, fmt.Sprintf("%s|%s|%s|%s|%s|%t|%s|%s", limit(n.ID, length), n.NodePool, n.Datacenter,
			n.Name, class, n.Drain, n.SchedulingEligibility, n.Status))
	}
	return formatList(rows)
}

// sortNodes orders nodes by name, then ID.
func sortNodes(nodes []*api.NodeListStub) {
	sort.Slice(nodes, func(i, j int) bool {
		if nodes[i].Name != nodes[j].Name {
			return nodes[i].Name < nodes[j].Name
		}
		return nodes[i].ID < nodes[j].ID
	})
}
