package jobspec

import (
	"time"

	"github.com/opennomad/nomad/api"
)

// normalizeJob applies the rewrites Nomad's parser makes before a job is
// canonicalized, so that a parsed job equals Nomad's parse of the same
// file:
//   - a periodic block with `cron` gets SpecType "cron";
//   - `port` blocks with a `static` value become reserved ports, the
//     rest stay dynamic;
//   - templates and vault blocks get the defaults the parser (not
//     Canonicalize) fills.
func normalizeJob(j *api.Job) {
	if j.Periodic != nil && j.Periodic.Spec != nil {
		j.Periodic.SpecType = new(api.PeriodicSpecCron)
	}
	for _, tg := range j.TaskGroups {
		normalizePorts(tg.Networks)
		for _, t := range tg.Tasks {
			if t.Resources != nil {
				normalizePorts(t.Resources.Networks)
			}
			for _, tmpl := range t.Templates {
				normalizeTemplate(tmpl)
			}
			normalizeVault(t.Vault)
		}
	}
}

func normalizePorts(networks []*api.NetworkResource) {
	for _, n := range networks {
		if len(n.DynamicPorts) == 0 {
			continue
		}
		var dynamic, reserved []api.Port
		for _, port := range n.DynamicPorts {
			if port.Value > 0 {
				reserved = append(reserved, port)
			} else {
				dynamic = append(dynamic, port)
			}
		}
		n.DynamicPorts = dynamic
		n.ReservedPorts = append(n.ReservedPorts, reserved...)
	}
}

func normalizeTemplate(t *api.Template) {
	if t.ChangeMode == nil {
		t.ChangeMode = new("restart")
	}
	if t.Perms == nil {
		t.Perms = new("0644")
	}
	if t.Splay == nil {
		t.Splay = new(5 * time.Second)
	}
	if t.ErrMissingKey == nil {
		t.ErrMissingKey = new(false)
	}
	if cs := t.ChangeScript; cs != nil {
		if cs.Args == nil {
			cs.Args = []string{}
		}
		if cs.Timeout == nil {
			cs.Timeout = new(5 * time.Second)
		}
		if cs.FailOnError == nil {
			cs.FailOnError = new(false)
		}
	}
}

func normalizeVault(v *api.Vault) {
	if v == nil {
		return
	}
	if v.Env == nil {
		v.Env = new(true)
	}
	if v.ChangeMode == nil {
		v.ChangeMode = new("restart")
	}
}
