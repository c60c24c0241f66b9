package command

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/opennomad/nomad/api"
)

// formatDeploymentKV is a deployment's key/value block: the short form
// `job status` shows under "Latest Deployment", or with the job's ID and
// version the full form the `job run` monitor ends with.
func formatDeploymentKV(d *api.Deployment, length int, full bool) string {
	rows := []string{"ID|" + limit(d.ID, length)}
	if full {
		rows = append(rows, "Job ID|"+d.JobID, "Job Version|"+strconv.FormatUint(d.JobVersion, 10))
	}
	rows = append(rows, "Status|"+d.Status, "Description|"+d.StatusDescription)
	return formatKV(rows)
}

// formatDeploymentGroups is the per-group table of a deployment. Columns
// only some deployments need appear only then: Auto Revert when a group
// reverts, Promoted and Canaries when a group has canaries, Progress
// Deadline when a group has one.
func formatDeploymentGroups(d *api.Deployment) string {
	var autoRevert, canaries, deadline bool
	for _, st := range d.TaskGroups {
		autoRevert = autoRevert || st.AutoRevert
		canaries = canaries || st.DesiredCanaries > 0
		deadline = deadline || st.ProgressDeadline != 0
	}
	header := []string{"Task Group"}
	if autoRevert {
		header = append(header, "Auto Revert")
	}
	if canaries {
		header = append(header, "Promoted")
	}
	header = append(header, "Desired")
	if canaries {
		header = append(header, "Canaries")
	}
	header = append(header, "Placed", "Healthy", "Unhealthy")
	if deadline {
		header = append(header, "Progress Deadline")
	}
	rows := []string{strings.Join(header, "|")}
	for _, name := range sortedKeys(d.TaskGroups) {
		st := d.TaskGroups[name]
		row := []string{name}
		if autoRevert {
			row = append(row, strconv.FormatBool(st.AutoRevert))
		}
		if canaries {
			promoted := "N/A"
			if st.DesiredCanaries > 0 {
				promoted = strconv.FormatBool(st.Promoted)
			}
			row = append(row, promoted)
		}
		row = append(row, strconv.Itoa(st.DesiredTotal))
		if canaries {
			row = append(row, strconv.Itoa(st.DesiredCanaries))
		}
		row = append(row, strconv.Itoa(st.PlacedAllocs), strconv.Itoa(st.HealthyAllocs), strconv.Itoa(st.UnhealthyAllocs))
		if deadline {
			row = append(row, formatTimeOrNA(st.RequireProgressBy))
		}
		rows = append(rows, strings.Join(row, "|"))
	}
	return formatList(rows)
}

// deploymentTerminal reports whether a deployment has ended.
func deploymentTerminal(status string) bool {
	switch status {
	case api.DeploymentStatusSuccessful, api.DeploymentStatusFailed, api.DeploymentStatusCancelled:
		return true
	}
	return false
}

// followDeployment watches a deployment until it ends, printing its
// description whenever it changes, then its outcome, state and groups.
// It returns 0 when it succeeded and 1 when it failed or was cancelled
// (or could not be read).
func (m *evalMonitor) followDeployment(id string) int {
	short := limit(id, m.length)
	m.info("Monitoring deployment %q", short)
	var (
		index uint64
		desc  string
	)
	for {
		q := m.meta.query()
		q.WaitIndex, q.WaitTime = index, m.wait
		d, qm, err := m.client.Deployments().Info(id, q)
		if err != nil {
			if m.meta.ctx().Err() != nil {
				m.info("Monitoring stopped; the deployment goes on. Check it with 'nomad job status %s'", m.jobID)
			} else {
				m.meta.Ui.Error(fmt.Sprintf("Error monitoring deployment %q: %s", short, m.meta.describe(err)))
			}
			return exitError
		}
		if d.StatusDescription != desc && !deploymentTerminal(d.Status) {
			desc = d.StatusDescription
			m.output("Deployment %q %s: %s", short, d.Status, desc)
		}
		if deploymentTerminal(d.Status) {
			return m.deploymentOutcome(d)
		}
		if err := pollPause(m.meta, qm, index, m.wait); err != nil {
			return exitError
		}
		index = max(index, qm.LastIndex)
	}
}

// deploymentOutcome prints how a deployment ended and returns the exit
// code.
func (m *evalMonitor) deploymentOutcome(d *api.Deployment) int {
	ui := m.meta.Ui
	code := exitOK
	if d.Status == api.DeploymentStatusSuccessful {
		ui.Output(fmt.Sprintf("  ✓ Deployment %q successful", limit(d.ID, m.length)))
	} else {
		ui.Output(fmt.Sprintf("  ! Deployment %q %s", limit(d.ID, m.length), d.Status))
		code = exitError
	}
	ui.Output("")
	ui.Output(indent(formatTime(m.meta.now()) + "\n" + formatDeploymentKV(d, m.length, true)))
	ui.Output("")
	ui.Output(indent("Deployed\n" + formatDeploymentGroups(d)))
	return code
}

// indent prefixes every line with four spaces.
func indent(s string) string {
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}
