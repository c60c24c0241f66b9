package agent

import (
	"fmt"
	"maps"
	"slices"

	"github.com/opennomad/nomad/api"
	"github.com/opennomad/nomad/structs"
)

// services converts the service blocks of a group or task. Whether the
// provider is one this server runs is the validator's call: a Consul
// service is converted as written and refused there, by name.
func (c *jobConverter) services(in []*api.Service, prefix string) []*structs.Service {
	if len(in) == 0 {
		return nil
	}
	out := make([]*structs.Service, 0, len(in))
	for i, s := range in {
		if s == nil {
			out = append(out, nil)
			continue
		}
		sp := fmt.Sprintf("%s: service %q", prefix, s.Name)
		if s.Name == "" {
			sp = fmt.Sprintf("%s: service %d", prefix, i+1)
		}
		svc := &structs.Service{
			Name:        s.Name,
			TaskName:    s.TaskName,
			PortLabel:   s.PortLabel,
			AddressMode: s.AddressMode,
			Address:     s.Address,
			Tags:        slices.Clone(s.Tags),
			CanaryTags:  slices.Clone(s.CanaryTags),
			Meta:        maps.Clone(s.Meta),
			CanaryMeta:  maps.Clone(s.CanaryMeta),
			OnUpdate:    s.OnUpdate,
			Provider:    s.Provider,
		}
		if s.CheckRestart != nil {
			c.ignored(sp, "check_restart")
		}
		if len(s.TaggedAddresses) > 0 {
			c.warn(sp, "tagged_addresses are not supported by this server and were ignored")
		}
		for _, chk := range s.Checks {
			svc.Checks = append(svc.Checks, &structs.ServiceCheck{
				Name:          chk.Name,
				Type:          chk.Type,
				Path:          chk.Path,
				Protocol:      chk.Protocol,
				Method:        chk.Method,
				Header:        cloneHeader(chk.Header),
				Body:          chk.Body,
				PortLabel:     chk.PortLabel,
				AddressMode:   chk.AddressMode,
				Interval:      chk.Interval,
				Timeout:       chk.Timeout,
				InitialStatus: chk.InitialStatus,
				TLSSkipVerify: chk.TLSSkipVerify,
				TaskName:      chk.TaskName,
				OnUpdate:      chk.OnUpdate,
			})
		}
		out = append(out, svc)
	}
	return out
}

func cloneHeader(h map[string][]string) map[string][]string {
	if h == nil {
		return nil
	}
	out := make(map[string][]string, len(h))
	for k, v := range h {
		out[k] = slices.Clone(v)
	}
	return out
}
