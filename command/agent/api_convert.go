package agent

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/opennomad/nomad/api"
	"github.com/opennomad/nomad/structs"
)

// This file is the one place where request bodies, decoded into the api
// package's types (pointer fields, so "unset" differs from zero), become
// the server's structs. Jobs are canonicalized on the api side first, as
// Nomad's agent does, so unset fields get Nomad's defaults and not Go's
// zero values.
//
// The api types can describe more than this server acts on (templates,
// volumes, vault, ...). Such blocks are dropped, and each dropped block
// is reported as a warning that the registration response
// carries back to the user: nothing is silently ignored.

// convertJob canonicalizes an api job and converts it. The returned
// warnings name each block that was dropped.
func convertJob(in *api.Job) (*structs.Job, []string) {
	in.Canonicalize()
	c := &jobConverter{}
	out := c.job(in)
	return out, c.warnings
}

type jobConverter struct {
	warnings []string
}

func (c *jobConverter) warn(prefix, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if prefix != "" {
		msg = prefix + ": " + msg
	}
	c.warnings = append(c.warnings, msg)
}

// ignored reports a block this server does not act on.
func (c *jobConverter) ignored(prefix, block string) {
	c.warn(prefix, "%s blocks are not supported by this server and were ignored", block)
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func (c *jobConverter) job(in *api.Job) *structs.Job {
	j := &structs.Job{
		Stop:        deref(in.Stop),
		Region:      deref(in.Region),
		Namespace:   deref(in.Namespace),
		ID:          deref(in.ID),
		ParentID:    deref(in.ParentID),
		Name:        deref(in.Name),
		Type:        deref(in.Type),
		Priority:    deref(in.Priority),
		AllAtOnce:   deref(in.AllAtOnce),
		Datacenters: slices.Clone(in.Datacenters),
		NodePool:    deref(in.NodePool),
		Constraints: convertConstraints(in.Constraints),
		Affinities:  convertAffinities(in.Affinities),
		Spreads:     convertSpreads(in.Spreads),
		Dispatched:  in.Dispatched,
		Payload:     slices.Clone(in.Payload),
		Meta:        maps.Clone(in.Meta),
		// Version, status and indexes are the server's; a submitted job
		// carries whatever a previous read returned, which is ignored.
	}
	if in.Update != nil {
		j.Update = *convertUpdate(in.Update)
	}
	if p := in.Periodic; p != nil {
		j.Periodic = &structs.PeriodicConfig{
			Enabled:         deref(p.Enabled),
			Spec:            deref(p.Spec),
			Specs:           slices.Clone(p.Specs),
			SpecType:        deref(p.SpecType),
			ProhibitOverlap: deref(p.ProhibitOverlap),
			TimeZone:        deref(p.TimeZone),
		}
	}
	if p := in.ParameterizedJob; p != nil {
		j.ParameterizedJob = &structs.ParameterizedJobConfig{
			Payload:      p.Payload,
			MetaRequired: slices.Clone(p.MetaRequired),
			MetaOptional: slices.Clone(p.MetaOptional),
		}
	}
	for i, tg := range in.TaskGroups {
		if tg == nil {
			j.TaskGroups = append(j.TaskGroups, nil)
			continue
		}
		prefix := fmt.Sprintf("group %q", deref(tg.Name))
		if deref(tg.Name) == "" {
			prefix = fmt.Sprintf("group %d", i+1)
		}
		j.TaskGroups = append(j.TaskGroups, c.group(tg, prefix))
	}
	return j
}

func (c *jobConverter) group(in *api.TaskGroup, prefix string) *structs.TaskGroup {
	tg := &structs.TaskGroup{
		Name:                      deref(in.Name),
		Count:                     deref(in.Count),
		Constraints:               convertConstraints(in.Constraints),
		Affinities:                convertAffinities(in.Affinities),
		Spreads:                   convertSpreads(in.Spreads),
		Meta:                      maps.Clone(in.Meta),
		Networks:                  c.networks(in.Networks, prefix),
		ShutdownDelay:             cloneDuration(in.ShutdownDelay),
		StopAfterClientDisconnect: cloneDuration(in.StopAfterClientDisconnect),
		MaxClientDisconnect:       cloneDuration(in.MaxClientDisconnect),
	}
	if in.Update != nil {
		tg.Update = convertUpdate(in.Update)
	}
	if m := in.Migrate; m != nil {
		tg.Migrate = &structs.MigrateStrategy{
			MaxParallel:     deref(m.MaxParallel),
			HealthCheck:     deref(m.HealthCheck),
			MinHealthyTime:  deref(m.MinHealthyTime),
			HealthyDeadline: deref(m.HealthyDeadline),
		}
	}
	tg.RestartPolicy = convertRestart(in.RestartPolicy)
	if r := in.ReschedulePolicy; r != nil {
		tg.ReschedulePolicy = &structs.ReschedulePolicy{
			Attempts:      deref(r.Attempts),
			Interval:      deref(r.Interval),
			Delay:         deref(r.Delay),
			DelayFunction: deref(r.DelayFunction),
			MaxDelay:      deref(r.MaxDelay),
			Unlimited:     deref(r.Unlimited),
		}
	}
	if d := in.EphemeralDisk; d != nil {
		tg.EphemeralDisk = &structs.EphemeralDisk{
			Sticky:  deref(d.Sticky),
			SizeMB:  deref(d.SizeMB),
			Migrate: deref(d.Migrate),
		}
	}
	if d := in.Disconnect; d != nil {
		// The disconnect block is the newer spelling of the two
		// durations the server knows; it wins over them.
		if d.LostAfter != nil {
			tg.MaxClientDisconnect = cloneDuration(d.LostAfter)
		}
		if d.StopOnClientAfter != nil {
			tg.StopAfterClientDisconnect = cloneDuration(d.StopOnClientAfter)
		}
		if d.Replace != nil && !*d.Replace {
			c.warn(prefix, "disconnect.replace = false is not supported by this server and was ignored")
		}
		if d.Reconcile != nil && *d.Reconcile != api.ReconcileOptionBestScore {
			c.warn(prefix, "disconnect.reconcile = %q is not supported by this server and was ignored", *d.Reconcile)
		}
	}
	if deref(in.PreventRescheduleOnLost) {
		c.warn(prefix, "prevent_reschedule_on_lost is not supported by this server and was ignored")
	}
	tg.Services = c.services(in.Services, prefix)
	tg.Volumes = convertVolumes(in.Volumes)
	if p := in.Scaling; p != nil {
		// As the api package canonicalizes it: enabled, Min the count,
		// horizontal.
		tg.Scaling = &structs.ScalingPolicy{
			Type:    p.Type,
			Policy:  maps.Clone(p.Policy),
			Min:     int64(tg.Count),
			Max:     deref(p.Max),
			Enabled: p.Enabled == nil || *p.Enabled,
		}
		if p.Min != nil {
			tg.Scaling.Min = *p.Min
		}
		if tg.Scaling.Type == "" {
			tg.Scaling.Type = structs.ScalingPolicyTypeHorizontal
		}
	}
	if in.Consul != nil {
		c.ignored(prefix, "consul")
	}
	if in.MaxRunDuration != nil {
		c.warn(prefix, "max_run_duration is not supported by this server and was ignored")
	}
	for _, t := range in.Tasks {
		if t == nil {
			tg.Tasks = append(tg.Tasks, nil)
			continue
		}
		tg.Tasks = append(tg.Tasks, c.task(t, in, fmt.Sprintf("%s: task %q", prefix, t.Name)))
	}
	return tg
}

func (c *jobConverter) task(in *api.Task, group *api.TaskGroup, prefix string) *structs.Task {
	t := &structs.Task{
		Name:        in.Name,
		Driver:      in.Driver,
		User:        in.User,
		Config:      maps.Clone(in.Config),
		Env:         maps.Clone(in.Env),
		Constraints: convertConstraints(in.Constraints),
		Affinities:  convertAffinities(in.Affinities),
		Meta:        maps.Clone(in.Meta),
		KillTimeout: deref(in.KillTimeout),
		KillSignal:  in.KillSignal,
		Leader:      in.Leader,
	}
	if r := in.Resources; r != nil {
		t.Resources = &structs.Resources{
			CPU:         deref(r.CPU),
			Cores:       deref(r.Cores),
			MemoryMB:    deref(r.MemoryMB),
			MemoryMaxMB: deref(r.MemoryMaxMB),
			DiskMB:      deref(r.DiskMB),
			IOPS:        deref(r.IOPS),
			Networks:    c.networks(r.Networks, prefix),
		}
		if len(r.Devices) > 0 {
			c.ignored(prefix, "device")
		}
	}
	if l := in.LogConfig; l != nil {
		t.LogConfig = &structs.LogConfig{
			MaxFiles:      deref(l.MaxFiles),
			MaxFileSizeMB: deref(l.MaxFileSizeMB),
			Disabled:      deref(l.Disabled) || (l.Enabled != nil && !*l.Enabled),
		}
	}
	if l := in.Lifecycle; l != nil {
		t.Lifecycle = &structs.TaskLifecycleConfig{Hook: l.Hook, Sidecar: l.Sidecar}
	}
	if d := in.DispatchPayload; d != nil {
		t.DispatchPayload = &structs.DispatchPayloadConfig{File: d.File}
	}
	for _, a := range in.Actions {
		if a == nil {
			t.Actions = append(t.Actions, nil)
			continue
		}
		t.Actions = append(t.Actions, &structs.Action{Name: a.Name, Command: a.Command, Args: slices.Clone(a.Args)})
	}
	// Tasks restart by their group's policy; a task-level restart block
	// that changes it cannot be honoured.
	if in.RestartPolicy != nil && group.RestartPolicy != nil &&
		!equalRestart(convertRestart(in.RestartPolicy), convertRestart(group.RestartPolicy)) {
		c.warn(prefix, "task-level restart blocks are not supported by this server; the group's restart policy applies")
	}
	for _, b := range []struct {
		name string
		set  bool
	}{
		{"artifact", len(in.Artifacts) > 0},
		{"template", len(in.Templates) > 0},
		{"vault", in.Vault != nil},
		{"consul", in.Consul != nil},
		{"csi_plugin", in.CSIPluginConfig != nil},
		{"scaling", len(in.ScalingPolicies) > 0},
		{"identity", in.Identity != nil || len(in.Identities) > 0},
	} {
		if b.set {
			c.ignored(prefix, b.name)
		}
	}
	t.Services = c.services(in.Services, prefix)
	t.VolumeMounts = convertVolumeMounts(in.VolumeMounts)
	if in.ShutdownDelay != 0 {
		c.warn(prefix, "task shutdown_delay is not supported by this server and was ignored")
	}
	if in.Kind != "" {
		c.warn(prefix, "task kind %q is not supported by this server and was ignored", in.Kind)
	}
	return t
}

func (c *jobConverter) networks(in []*api.NetworkResource, prefix string) structs.Networks {
	if in == nil {
		return nil
	}
	out := make(structs.Networks, 0, len(in))
	for _, n := range in {
		if n == nil {
			continue
		}
		if n.DNS != nil {
			c.ignored(prefix, "network dns")
		}
		out = append(out, &structs.NetworkResource{
			Mode:          n.Mode,
			Device:        n.Device,
			CIDR:          n.CIDR,
			IP:            n.IP,
			Hostname:      n.Hostname,
			MBits:         deref(n.MBits),
			ReservedPorts: c.ports(n.ReservedPorts, prefix),
			DynamicPorts:  c.ports(n.DynamicPorts, prefix),
		})
	}
	return out
}

func (c *jobConverter) ports(in []api.Port, prefix string) []structs.Port {
	if in == nil {
		return nil
	}
	out := make([]structs.Port, 0, len(in))
	for _, p := range in {
		if p.IgnoreCollision {
			c.warn(prefix, "port %q: ignore_collision is not supported by this server and was ignored", p.Label)
		}
		out = append(out, structs.Port{Label: p.Label, Value: p.Value, To: p.To, HostNetwork: p.HostNetwork})
	}
	return out
}

func convertUpdate(u *api.UpdateStrategy) *structs.UpdateStrategy {
	return &structs.UpdateStrategy{
		Stagger:          deref(u.Stagger),
		MaxParallel:      deref(u.MaxParallel),
		HealthCheck:      deref(u.HealthCheck),
		MinHealthyTime:   deref(u.MinHealthyTime),
		HealthyDeadline:  deref(u.HealthyDeadline),
		ProgressDeadline: deref(u.ProgressDeadline),
		AutoRevert:       deref(u.AutoRevert),
		AutoPromote:      deref(u.AutoPromote),
		Canary:           deref(u.Canary),
	}
}

func convertRestart(r *api.RestartPolicy) *structs.RestartPolicy {
	if r == nil {
		return nil
	}
	return &structs.RestartPolicy{
		Attempts:        deref(r.Attempts),
		Interval:        deref(r.Interval),
		Delay:           deref(r.Delay),
		Mode:            deref(r.Mode),
		RenderTemplates: deref(r.RenderTemplates),
	}
}

func equalRestart(a, b *structs.RestartPolicy) bool {
	return a == b || (a != nil && b != nil && *a == *b)
}

func convertConstraints(in []*api.Constraint) []*structs.Constraint {
	if in == nil {
		return nil
	}
	out := make([]*structs.Constraint, len(in))
	for i, c := range in {
		if c != nil {
			out[i] = &structs.Constraint{LTarget: c.LTarget, RTarget: c.RTarget, Operand: c.Operand}
		}
	}
	return out
}

func convertAffinities(in []*api.Affinity) []*structs.Affinity {
	if in == nil {
		return nil
	}
	out := make([]*structs.Affinity, len(in))
	for i, a := range in {
		if a != nil {
			out[i] = &structs.Affinity{LTarget: a.LTarget, RTarget: a.RTarget, Operand: a.Operand, Weight: deref(a.Weight)}
		}
	}
	return out
}

func convertSpreads(in []*api.Spread) []*structs.Spread {
	if in == nil {
		return nil
	}
	out := make([]*structs.Spread, len(in))
	for i, s := range in {
		if s == nil {
			continue
		}
		sp := &structs.Spread{Attribute: s.Attribute, Weight: deref(s.Weight)}
		for _, t := range s.SpreadTarget {
			if t != nil {
				sp.SpreadTarget = append(sp.SpreadTarget, &structs.SpreadTarget{Value: t.Value, Percent: t.Percent})
			}
		}
		out[i] = sp
	}
	return out
}

func cloneDuration(d *time.Duration) *time.Duration {
	if d == nil {
		return nil
	}
	v := *d
	return &v
}

// convertDrainSpec turns a drain request into the strategy the server
// stores; nil cancels a drain.
func convertDrainSpec(in *api.DrainSpec) *structs.DrainStrategy {
	if in == nil {
		return nil
	}
	return &structs.DrainStrategy{DrainSpec: structs.DrainSpec{Deadline: in.Deadline, IgnoreSystemJobs: in.IgnoreSystemJobs}}
}

func derefUint(p *uint) uint {
	if p == nil {
		return 0
	}
	return *p
}

// convertSchedulerConfig turns the operator API's body into the stored
// configuration.
func convertSchedulerConfig(in *api.SchedulerConfiguration) structs.SchedulerConfiguration {
	return structs.SchedulerConfiguration{
		SchedulerAlgorithm:            in.SchedulerAlgorithm,
		MemoryOversubscriptionEnabled: in.MemoryOversubscriptionEnabled,
		RejectJobRegistration:         in.RejectJobRegistration,
		PauseEvalBroker:               in.PauseEvalBroker,
		NodeLimitForFeasibilityChecks: in.NodeLimitForFeasibilityChecks,
		EvalBacklogLimit:              derefUint(in.EvalBacklogLimit),
		PreemptionConfig: structs.PreemptionConfig{
			SystemSchedulerEnabled:   in.PreemptionConfig.SystemSchedulerEnabled,
			SysBatchSchedulerEnabled: in.PreemptionConfig.SysBatchSchedulerEnabled,
			BatchSchedulerEnabled:    in.PreemptionConfig.BatchSchedulerEnabled,
			ServiceSchedulerEnabled:  in.PreemptionConfig.ServiceSchedulerEnabled,
		},
		CreateIndex: in.CreateIndex,
		ModifyIndex: in.ModifyIndex,
	}
}
