package structs_test

import (
	"testing"
	"time"

	"github.com/opennomad/nomad/structs"
)

// nomadService is a valid group service on the mock job's "http" port.
func nomadService() *structs.Service {
	return &structs.Service{Name: "web", PortLabel: "http", Provider: structs.ServiceProviderNomad,
		AddressMode: structs.AddressModeAuto, Tags: []string{"v1"},
		Checks: []*structs.ServiceCheck{{Name: "alive", Type: "http", Path: "/health",
			Interval: 10 * time.Second, Timeout: 2 * time.Second}}}
}

func withGroupService(edit func(s *structs.Service)) func(j *structs.Job) {
	return func(j *structs.Job) {
		s := nomadService()
		edit(s)
		tg0(j).Services = []*structs.Service{s}
	}
}

func TestValidate_Services(t *testing.T) {
	svc := grp + `: service "web"`
	runValidationCases(t, []validationCase{
		{"group service is valid", nil, withGroupService(func(*structs.Service) {}), nil},
		{"task service is valid", nil, func(j *structs.Job) { task0(j).Services = []*structs.Service{nomadService()} }, nil},
		{"numeric port is valid", nil, withGroupService(func(s *structs.Service) { s.PortLabel = "8080" }), nil},
		{"interpolated name is valid", nil, withGroupService(func(s *structs.Service) { s.Name = "${NOMAD_JOB_NAME}-web" }), nil},
		{"missing name", nil, withGroupService(func(s *structs.Service) { s.Name = "" }),
			[]string{grp + ": service 1: name: missing service name"}},
		{"bad name", nil, withGroupService(func(s *structs.Service) { s.Name = "web_1" }),
			[]string{grp + `: service "web_1": name: "web_1" must be valid per RFC 1123`}},
		{"consul provider", nil, withGroupService(func(s *structs.Service) { s.Provider = structs.ServiceProviderConsul }),
			[]string{svc + `: provider: "consul" is not supported by this server (Consul is not built in); use provider = "nomad"`}},
		{"unknown provider", nil, withGroupService(func(s *structs.Service) { s.Provider = "etcd" }),
			[]string{svc + `: provider: "etcd" is invalid: must be "nomad"`}},
		{"driver address mode", nil, withGroupService(func(s *structs.Service) { s.AddressMode = "driver" }),
			[]string{svc + `: address_mode: "driver" is not supported by the "nomad" provider`}},
		{"unknown port", nil, withGroupService(func(s *structs.Service) { s.PortLabel = "grpc" }),
			[]string{svc + `: port: label "grpc" is not a port of the group's network`}},
		{"unknown task", nil, withGroupService(func(s *structs.Service) { s.TaskName = "nope" }),
			[]string{svc + `: task: "nope" is not a task of the group`}},
		{"duplicate", nil, func(j *structs.Job) { tg0(j).Services = []*structs.Service{nomadService(), nomadService()} },
			[]string{svc + `: name "web" is used more than once with port "http"`}},
		{"nil service", nil, func(j *structs.Job) { tg0(j).Services = []*structs.Service{nil} },
			[]string{grp + ": service 1: service is empty"}},
		{"task service consul", nil, func(j *structs.Job) {
			s := nomadService()
			s.Provider = ""
			task0(j).Services = []*structs.Service{s}
		}, []string{task + `: service "web": provider: "consul" is not supported`}},
		{"script check", nil, withGroupService(func(s *structs.Service) { s.Checks[0].Type = "script" }),
			[]string{svc + `: check "alive": type: "script" is not supported by the "nomad" provider: must be http or tcp`}},
		{"http check without path", nil, withGroupService(func(s *structs.Service) { s.Checks[0].Path = "" }),
			[]string{svc + `: check "alive": path: http checks need a path`}},
		{"tcp check is valid", nil, withGroupService(func(s *structs.Service) {
			s.Checks[0].Type, s.Checks[0].Path = "tcp", ""
		}), nil},
		{"short interval and timeout", nil, withGroupService(func(s *structs.Service) {
			s.Checks[0].Interval, s.Checks[0].Timeout = 100*time.Millisecond, 0
		}), []string{svc + `: check "alive": interval: must be at least 1s, got 100ms`,
			svc + `: check "alive": timeout: must be at least 1s, got 0s`}},
		{"check without any port", nil, withGroupService(func(s *structs.Service) { s.PortLabel = "" }),
			[]string{svc + `: check "alive": port: the check has no port and neither has its service`}},
	})
}
