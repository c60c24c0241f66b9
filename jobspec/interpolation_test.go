package jobspec

import "testing"

func TestRuntimeInterpolationIsKeptAsText(t *testing.T) {
	src := `
variable "suffix" {
  default = "x"
}

job "j" {
  constraint {
    attribute = "${attr.kernel.name}"
    value     = "linux"
  }
  constraint {
    attribute = "${meta["storage.class"]}"
    value     = "ssd-${var.suffix}"
  }
  group "g" {
    task "t" {
      driver = "raw_exec"
      config {
        command = "${NOMAD_TASK_DIR}/run.sh"
        args    = ["${node.unique.id}", "${attr.unique.network.ip-address}:${NOMAD_PORT_http}"]
      }
      env {
        ADDR    = "${NOMAD_ADDR_http}"
        LITERAL = "$${NOT_INTERPOLATED}"
        MIXED   = "${var.suffix}-${node.datacenter}"
      }
    }
  }
}
`
	res, err := Parse("job.hcl", []byte(src), Options{})
	if err != nil {
		t.Fatal(err)
	}
	j := res.Job
	if got := j.Constraints[0].LTarget; got != "${attr.kernel.name}" {
		t.Errorf("constraint 0 = %q", got)
	}
	if got := j.Constraints[1]; got.LTarget != `${meta["storage.class"]}` || got.RTarget != "ssd-x" {
		t.Errorf("constraint 1 = %+v", got)
	}
	task := j.TaskGroups[0].Tasks[0]
	assertSameJSON(t, task.Config, map[string]any{
		"command": "${NOMAD_TASK_DIR}/run.sh",
		"args":    []any{"${node.unique.id}", "${attr.unique.network.ip-address}:${NOMAD_PORT_http}"},
	})
	assertSameJSON(t, task.Env, map[string]string{
		"ADDR":    "${NOMAD_ADDR_http}",
		"LITERAL": "${NOT_INTERPOLATED}",
		"MIXED":   "x-${node.datacenter}",
	})
}
