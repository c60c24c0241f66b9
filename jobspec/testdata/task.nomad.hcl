# Every task-level attribute and block the server acts on.
job "worker" {
  type = "batch"

  group "jobs" {
    task "setup" {
      driver = "raw_exec"

      lifecycle {
        hook    = "prestart"
        sidecar = false
      }

      config {
        command = "/bin/true"
      }
    }

    task "main" {
      driver         = "raw_exec"
      user           = "nobody"
      leader         = true
      kill_timeout   = "25s"
      kill_signal    = "SIGINT"
      shutdown_delay = "3s"
      kind           = "worker"

      config {
        command = "/usr/bin/env"
        args    = ["bash", "-c", "echo ${NOMAD_ALLOC_DIR}"]
        pid_mode = "host"
        retries = 3
        ratio   = 0.5
        debug   = true
        labels = {
          team = "jobs"
        }

        port_map {
          http = 80
        }

        mount "bind" {
          source   = "/srv"
          readonly = true
        }

        mount "bind" {
          source = "/var/log"
        }
      }

      env {
        LOG_LEVEL = "debug"
        NODE      = "${node.unique.name}"
        EMPTY     = ""
      }

      meta {
        queue = "default"
      }

      resources {
        cpu        = 500
        memory     = 256
        memory_max = 512
        disk       = 150
      }

      logs {
        max_files     = 4
        max_file_size = 15
        disabled      = false
      }

      restart {
        attempts = 1
      }

      dispatch_payload {
        file = "input.json"
      }

      constraint {
        attribute = "${attr.unique.storage.volume}"
        operator  = "is_set"
      }

      affinity {
        attribute = "${attr.cpu.numcores}"
        operator  = ">="
        value     = "4"
      }
    }

    task "pinned" {
      driver = "raw_exec"

      resources {
        cores  = 2
        memory = 128
      }
    }
  }
}
