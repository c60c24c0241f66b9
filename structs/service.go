package structs

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Service providers. Only the built-in catalog is served; a job asking
// for Consul is refused rather than run without the registrations it
// expects.
const (
	ServiceProviderNomad  = "nomad"
	ServiceProviderConsul = "consul"
)

// Address modes of a service or check: where its address comes from.
const (
	AddressModeAuto   = "auto"
	AddressModeHost   = "host"
	AddressModeDriver = "driver"
	AddressModeAlloc  = "alloc"
)

// Check types the built-in catalog runs.
const (
	ServiceCheckHTTP = "http"
	ServiceCheckTCP  = "tcp"
)

// Shortest check interval and timeout, as Nomad enforces: anything
// shorter would hammer the checked service.
const (
	minCheckInterval = time.Second
	minCheckTimeout  = time.Second
)

// Service is a `service` block of a group or task: a name under which
// the allocation's address and port are published while it runs.
type Service struct {
	Name string
	// TaskName is the task a group service belongs to for its checks;
	// empty for task services, which belong to their task.
	TaskName    string
	PortLabel   string
	AddressMode string
	Address     string
	Tags        []string
	CanaryTags  []string
	Meta        map[string]string
	CanaryMeta  map[string]string
	Checks      []*ServiceCheck
	OnUpdate    string
	Provider    string
}

// ServiceCheck is a `check` block: a probe the client runs against the
// service at an interval.
type ServiceCheck struct {
	Name          string
	Type          string
	Path          string
	Protocol      string
	Method        string
	Header        map[string][]string
	Body          string
	PortLabel     string
	AddressMode   string
	Interval      time.Duration
	Timeout       time.Duration
	InitialStatus string
	TLSSkipVerify bool
	TaskName      string
	OnUpdate      string
}

// Copy returns a deep copy.
func (s *Service) Copy() *Service {
	if s == nil {
		return nil
	}
	n := *s
	n.Tags = slices.Clone(s.Tags)
	n.CanaryTags = slices.Clone(s.CanaryTags)
	n.Meta = maps.Clone(s.Meta)
	n.CanaryMeta = maps.Clone(s.CanaryMeta)
	if s.Checks != nil {
		n.Checks = make([]*ServiceCheck, len(s.Checks))
		for i, c := range s.Checks {
			n.Checks[i] = c.Copy()
		}
	}
	return &n
}

// Copy returns a deep copy.
func (c *ServiceCheck) Copy() *ServiceCheck {
	if c == nil {
		return nil
	}
	n := *c
	if c.Header != nil {
		n.Header = make(map[string][]string, len(c.Header))
		for k, v := range c.Header {
			n.Header[k] = slices.Clone(v)
		}
	}
	return &n
}

// CopyServices deep-copies a list of services.
func CopyServices(in []*Service) []*Service {
	if in == nil {
		return nil
	}
	out := make([]*Service, len(in))
	for i, s := range in {
		out[i] = s.Copy()
	}
	return out
}

// serviceNameRE is RFC 1123's host label, which Nomad requires of service
// names so that they work as DNS names.
var serviceNameRE = regexp.MustCompile(`^(?i:[a-z0-9]|[a-z0-9][a-z0-9-]{0,61}[a-z0-9])$`)

// servicePathElem names a service in a problem path.
func servicePathElem(s *Service, i int) string {
	if s.Name == "" {
		return fmt.Sprintf("service %d", i+1)
	}
	return fmt.Sprintf("service %q", s.Name)
}

// validateServices checks the services of a group (task == nil) or a
// task. ports holds the group's port labels.
func validateServices(p *problems, prefix string, services []*Service, ports map[string]bool, task *Task) {
	seen := map[string]bool{}
	for i, s := range services {
		if s == nil {
			p.add(joinPath(prefix, fmt.Sprintf("service %d", i+1)), "service is empty")
			continue
		}
		sp := joinPath(prefix, servicePathElem(s, i))
		s.validate(p, sp, ports, task)
		key := s.Name + "\x00" + s.PortLabel
		if s.Name != "" && seen[key] {
			p.add(sp, "name %q is used more than once with port %q", s.Name, s.PortLabel)
		}
		seen[key] = true
	}
}

func (s *Service) validate(p *problems, prefix string, ports map[string]bool, task *Task) {
	p.noNUL(prefix, "name", s.Name)
	p.noNULMap(prefix, "meta", s.Meta)
	switch {
	case s.Name == "":
		p.add(prefix, "name: missing service name")
	case !strings.Contains(s.Name, "${") && !serviceNameRE.MatchString(s.Name):
		p.add(prefix, "name: %q must be valid per RFC 1123: alphanumerics and dashes, at most 63 characters, not starting or ending with a dash", s.Name)
	}
	switch s.Provider {
	case ServiceProviderNomad:
	case ServiceProviderConsul, "":
		p.add(prefix, "provider: %q is not supported by this server (Consul is not built in); use provider = %q", ServiceProviderConsul, ServiceProviderNomad)
	default:
		p.add(prefix, "provider: %q is invalid: must be %q", s.Provider, ServiceProviderNomad)
	}
	switch s.AddressMode {
	case "", AddressModeAuto, AddressModeHost, AddressModeAlloc:
	case AddressModeDriver:
		p.add(prefix, "address_mode: %q is not supported by the %q provider", s.AddressMode, ServiceProviderNomad)
	default:
		p.add(prefix, "address_mode: %q is invalid: must be auto, host or alloc", s.AddressMode)
	}
	if s.Address != "" && s.AddressMode != AddressModeAuto && s.AddressMode != "" {
		p.add(prefix, "address: may only be set with address_mode = \"auto\", got %q", s.AddressMode)
	}
	if s.PortLabel != "" && !isNumber(s.PortLabel) && !ports[s.PortLabel] {
		p.add(prefix, "port: label %q is not a port of the group's network", s.PortLabel)
	}
	if task == nil && s.TaskName != "" {
		// Nothing to check here: the group validates that the task exists.
	} else if task != nil && s.TaskName != "" && s.TaskName != task.Name {
		p.add(prefix, "task: a task service belongs to its own task, not %q", s.TaskName)
	}
	for i, c := range s.Checks {
		cp := joinPath(prefix, fmt.Sprintf("check %d", i+1))
		if c == nil {
			p.add(cp, "check is empty")
			continue
		}
		if c.Name != "" {
			cp = joinPath(prefix, fmt.Sprintf("check %q", c.Name))
		}
		c.validate(p, cp, s, ports)
	}
}

func (c *ServiceCheck) validate(p *problems, prefix string, s *Service, ports map[string]bool) {
	switch c.Type {
	case ServiceCheckHTTP:
		if c.Path == "" {
			p.add(prefix, "path: http checks need a path")
		} else if !strings.HasPrefix(c.Path, "/") && !strings.Contains(c.Path, "://") {
			p.add(prefix, "path: %q must start with a slash", c.Path)
		}
		switch c.Protocol {
		case "", "http", "https":
		default:
			p.add(prefix, "protocol: %q is invalid: must be http or https", c.Protocol)
		}
	case ServiceCheckTCP:
	case "":
		p.add(prefix, "type: missing check type")
	default:
		p.add(prefix, "type: %q is not supported by the %q provider: must be http or tcp", c.Type, ServiceProviderNomad)
	}
	if c.Interval < minCheckInterval {
		p.add(prefix, "interval: must be at least %s, got %s", minCheckInterval, c.Interval)
	}
	if c.Timeout < minCheckTimeout {
		p.add(prefix, "timeout: must be at least %s, got %s", minCheckTimeout, c.Timeout)
	}
	if c.PortLabel != "" && !isNumber(c.PortLabel) && !ports[c.PortLabel] {
		p.add(prefix, "port: label %q is not a port of the group's network", c.PortLabel)
	}
	if c.PortLabel == "" && s.PortLabel == "" {
		p.add(prefix, "port: the check has no port and neither has its service")
	}
	switch c.AddressMode {
	case "", AddressModeHost, AddressModeAlloc, AddressModeAuto:
	default:
		p.add(prefix, "address_mode: %q is invalid: must be host or alloc", c.AddressMode)
	}
}

func isNumber(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// groupPortLabels returns the labels of every port the group and its
// tasks ask for.
func (tg *TaskGroup) groupPortLabels() map[string]bool {
	out := map[string]bool{}
	add := func(nets Networks) {
		for _, n := range nets {
			if n == nil {
				continue
			}
			for _, port := range n.ReservedPorts {
				out[port.Label] = true
			}
			for _, port := range n.DynamicPorts {
				out[port.Label] = true
			}
		}
	}
	add(tg.Networks)
	for _, t := range tg.Tasks {
		if t != nil && t.Resources != nil {
			add(t.Resources.Networks)
		}
	}
	return out
}

// validateGroupServices checks the group's and its tasks' services.
func (tg *TaskGroup) validateGroupServices(p *problems, prefix string) {
	ports := tg.groupPortLabels()
	validateServices(p, prefix, tg.Services, ports, nil)
	for _, s := range tg.Services {
		if s != nil && s.TaskName != "" && !tg.hasTask(s.TaskName) {
			p.add(joinPath(prefix, fmt.Sprintf("service %q", s.Name)), "task: %q is not a task of the group", s.TaskName)
		}
	}
	for i, t := range tg.Tasks {
		if t != nil {
			validateServices(p, joinPath(prefix, taskPathElem(t, i)), t.Services, ports, t)
		}
	}
}

func (tg *TaskGroup) hasTask(name string) bool {
	for _, t := range tg.Tasks {
		if t != nil && t.Name == name {
			return true
		}
	}
	return false
}
