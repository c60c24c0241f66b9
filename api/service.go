package api

import (
	"fmt"
	"time"
)

// Service defaults and on_update modes.
const (
	ServiceProviderConsul = "consul"
	ServiceProviderNomad  = "nomad"

	OnUpdateRequireHealthy = "require_healthy"
	OnUpdateIgnoreWarn     = "ignore_warnings"
	OnUpdateIgnore         = "ignore"
)

// Service registers a task or group in a service catalog (the `service`
// block). Connect, weights and identity sub-blocks are not modelled.
type Service struct {
	Name              string            `hcl:"name,optional"`
	Tags              []string          `hcl:"tags,optional"`
	CanaryTags        []string          `hcl:"canary_tags,optional"`
	EnableTagOverride bool              `hcl:"enable_tag_override,optional"`
	PortLabel         string            `hcl:"port,optional"`
	AddressMode       string            `hcl:"address_mode,optional"`
	Address           string            `hcl:"address,optional"`
	Checks            []ServiceCheck    `hcl:"check,block"`
	CheckRestart      *CheckRestart     `hcl:"check_restart,block"`
	Meta              map[string]string `hcl:"meta,block"`
	CanaryMeta        map[string]string `hcl:"canary_meta,block"`
	TaggedAddresses   map[string]string `hcl:"tagged_addresses,block"`
	TaskName          string            `hcl:"task,optional"`
	OnUpdate          string            `hcl:"on_update,optional"`
	Provider          string            `hcl:"provider,optional"`
	Cluster           string            `hcl:"cluster,optional"`
	Kind              string            `hcl:"kind,optional"`
}

// Canonicalize names an unnamed service "<job>-<group>[-<task>]" and fills
// Nomad's service and check defaults. t is nil for a group service.
func (s *Service) Canonicalize(t *Task, tg *TaskGroup, job *Job) {
	if s == nil {
		return
	}
	if s.Name == "" {
		if t != nil {
			s.Name = fmt.Sprintf("%s-%s-%s", deref(job.Name), deref(tg.Name), t.Name)
		} else {
			s.Name = fmt.Sprintf("%s-%s", deref(job.Name), deref(tg.Name))
		}
	}
	if s.AddressMode == "" {
		s.AddressMode = "auto"
	}
	if s.OnUpdate == "" {
		s.OnUpdate = OnUpdateRequireHealthy
	}
	if s.Provider == "" {
		s.Provider = ServiceProviderConsul
	}
	if s.Cluster == "" {
		s.Cluster = "default"
	}
	if len(s.Meta) == 0 {
		s.Meta = nil
	}
	if len(s.CanaryMeta) == 0 {
		s.CanaryMeta = nil
	}
	if len(s.TaggedAddresses) == 0 {
		s.TaggedAddresses = nil
	}
	for i := range s.Checks {
		c := &s.Checks[i]
		c.CheckRestart = s.CheckRestart.Merge(c.CheckRestart)
		c.CheckRestart.Canonicalize()
		c.SuccessBeforePassing = max(c.SuccessBeforePassing, 0)
		c.FailuresBeforeCritical = max(c.FailuresBeforeCritical, 0)
		c.FailuresBeforeWarning = max(c.FailuresBeforeWarning, 0)
		if c.OnUpdate == "" {
			c.OnUpdate = s.OnUpdate
		}
	}
}

// ServiceCheck is a health check of a service (the `check` block).
type ServiceCheck struct {
	Name                   string              `hcl:"name,optional"`
	Type                   string              `hcl:"type,optional"`
	Command                string              `hcl:"command,optional"`
	Args                   []string            `hcl:"args,optional"`
	Path                   string              `hcl:"path,optional"`
	Protocol               string              `hcl:"protocol,optional"`
	PortLabel              string              `hcl:"port,optional"`
	Expose                 bool                `hcl:"expose,optional"`
	AddressMode            string              `hcl:"address_mode,optional"`
	Advertise              string              `hcl:"advertise,optional"`
	Interval               time.Duration       `hcl:"interval,optional"`
	Timeout                time.Duration       `hcl:"timeout,optional"`
	InitialStatus          string              `hcl:"initial_status,optional"`
	Notes                  string              `hcl:"notes,optional"`
	TLSServerName          string              `hcl:"tls_server_name,optional"`
	TLSSkipVerify          bool                `hcl:"tls_skip_verify,optional"`
	Header                 map[string][]string `hcl:"header,block"`
	Method                 string              `hcl:"method,optional"`
	CheckRestart           *CheckRestart       `hcl:"check_restart,block"`
	GRPCService            string              `hcl:"grpc_service,optional"`
	GRPCUseTLS             bool                `hcl:"grpc_use_tls,optional"`
	TaskName               string              `hcl:"task,optional"`
	SuccessBeforePassing   int                 `hcl:"success_before_passing,optional"`
	FailuresBeforeCritical int                 `hcl:"failures_before_critical,optional"`
	FailuresBeforeWarning  int                 `hcl:"failures_before_warning,optional"`
	Body                   string              `hcl:"body,optional"`
	OnUpdate               string              `hcl:"on_update,optional"`
}

// CheckRestart restarts a task whose checks keep failing (the
// `check_restart` block).
type CheckRestart struct {
	Limit          int            `hcl:"limit,optional"`
	Grace          *time.Duration `hcl:"grace,optional"`
	IgnoreWarnings bool           `hcl:"ignore_warnings,optional"`
}

// Canonicalize defaults the grace period to 1s. A nil receiver is allowed.
func (c *CheckRestart) Canonicalize() {
	if c != nil && c.Grace == nil {
		c.Grace = new(time.Second)
	}
}

// Merge returns a copy of c overlaid with the fields o sets; either may be
// nil.
func (c *CheckRestart) Merge(o *CheckRestart) *CheckRestart {
	if c == nil {
		return o
	}
	n := *c
	if c.Grace != nil {
		n.Grace = new(*c.Grace)
	}
	if o == nil {
		return &n
	}
	if o.Limit > 0 {
		n.Limit = o.Limit
	}
	if o.Grace != nil {
		n.Grace = o.Grace
	}
	if o.IgnoreWarnings {
		n.IgnoreWarnings = true
	}
	return &n
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
