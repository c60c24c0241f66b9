package jobspec

import (
	"testing"
	"time"

	"github.com/opennomad/nomad/api"
)

// Service blocks of a group and a task parse, from HCL and from JSON, to
// the api types the agent converts, without a "not acted on" warning.
func TestParseServices(t *testing.T) {
	hclSrc := `
job "web" {
  group "g" {
    network {
      port "http" {}
    }
    service {
      name     = "web"
      port     = "http"
      provider = "nomad"
      tags     = ["a", "b"]
      meta {
        v = "1"
      }
      check {
        type     = "http"
        path     = "/health"
        interval = "10s"
        timeout  = "2s"
      }
    }
    task "t" {
      driver = "raw_exec"
      service {
        name     = "t-svc"
        port     = "http"
        provider = "nomad"
        check {
          type     = "tcp"
          interval = "5s"
          timeout  = "1s"
        }
      }
    }
  }
}`
	jsonSrc := `{"job": {"web": {"group": {"g": {
  "network": {"port": {"http": {}}},
  "service": [{"name": "web", "port": "http", "provider": "nomad", "tags": ["a", "b"], "meta": {"v": "1"},
    "check": [{"type": "http", "path": "/health", "interval": "10s", "timeout": "2s"}]}],
  "task": {"t": {"driver": "raw_exec",
    "service": [{"name": "t-svc", "port": "http", "provider": "nomad",
      "check": [{"type": "tcp", "interval": "5s", "timeout": "1s"}]}]}}
}}}}}`
	wantGroup := []*api.Service{{Name: "web", PortLabel: "http", Provider: "nomad", Tags: []string{"a", "b"},
		Meta: map[string]string{"v": "1"}, Checks: []api.ServiceCheck{{Type: "http", Path: "/health",
			Interval: 10 * time.Second, Timeout: 2 * time.Second}}}}
	wantTask := []*api.Service{{Name: "t-svc", PortLabel: "http", Provider: "nomad",
		Checks: []api.ServiceCheck{{Type: "tcp", Interval: 5 * time.Second, Timeout: time.Second}}}}
	for _, src := range []struct{ name, text string }{{"job.nomad.hcl", hclSrc}, {"job.json", jsonSrc}} {
		t.Run(src.name, func(t *testing.T) {
			res, err := Parse(src.name, []byte(src.text), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Warnings) != 0 {
				t.Fatalf("warnings: %q", res.Warnings)
			}
			tg := res.Job.TaskGroups[0]
			assertSameJSON(t, tg.Services, wantGroup)
			assertSameJSON(t, tg.Tasks[0].Services, wantTask)
		})
	}
}
