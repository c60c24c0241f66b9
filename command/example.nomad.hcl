# An example job. Run it with `nomad job run example.nomad.hcl`; on a dev
# agent (`nomad agent -dev`) it works as is.
job "example" {
  # Run in any datacenter.
  datacenters = ["*"]

  # A service job is kept running: failed allocations are restarted in
  # place and, if that does not help, rescheduled elsewhere.
  type = "service"

  update {
    max_parallel     = 1
    min_healthy_time = "10s"
    healthy_deadline = "3m"
    auto_revert      = false
  }

  group "hello" {
    count = 1

    restart {
      attempts = 2
      interval = "30m"
      delay    = "15s"
      mode     = "fail"
    }

    task "greeter" {
      # raw_exec runs a command directly on the client; the dev agent
      # enables it.
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args = [
          "-c",
          "while true; do echo \"hello from allocation $NOMAD_ALLOC_ID on $(hostname) at $(date)\"; sleep 10; done",
        ]
      }

      env {
        GREETING = "hello"
      }

      resources {
        cpu    = 100 # MHz
        memory = 64  # MB
      }

      logs {
        max_files     = 3
        max_file_size = 5
      }
    }
  }
}
