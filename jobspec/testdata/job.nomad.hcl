# Every job-level attribute and block.
job "payments" {
  name        = "Payments API"
  type        = "service"
  priority    = 70
  region      = "eu"
  namespace   = "finance"
  datacenters = ["eu-west-1a", "eu-west-1b"]
  node_pool   = "prod"
  all_at_once = false

  meta {
    owner = "team-payments"
    tier  = "1"
  }

  constraint {
    attribute = "${attr.kernel.name}"
    value     = "linux"
  }

  constraint {
    attribute = "${attr.cpu.arch}"
    operator  = "!="
    value     = "arm64"
  }

  affinity {
    attribute = "${node.datacenter}"
    value     = "eu-west-1a"
    weight    = 75
  }

  spread {
    attribute = "${node.datacenter}"
    weight    = 100

    target "eu-west-1a" {
      percent = 60
    }

    target "eu-west-1b" {
      percent = 40
    }
  }

  update {
    stagger           = "20s"
    max_parallel      = 2
    health_check      = "task_states"
    min_healthy_time  = "15s"
    healthy_deadline  = "4m"
    progress_deadline = "12m"
    canary            = 1
    auto_revert       = true
    auto_promote      = true
  }

  migrate {
    max_parallel     = 3
    health_check     = "checks"
    min_healthy_time = "20s"
    healthy_deadline = "6m"
  }

  reschedule {
    attempts       = 4
    interval       = "2h"
    delay          = "45s"
    delay_function = "fibonacci"
    max_delay      = "30m"
    unlimited      = false
  }

  group "api" {
    task "server" {
      driver = "raw_exec"

      config {
        command = "/usr/local/bin/payments"
      }
    }
  }
}
