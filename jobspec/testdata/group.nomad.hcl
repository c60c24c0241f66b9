# Every group-level attribute and block the server acts on.
job "web" {
  group "frontend" {
    count                        = 3
    shutdown_delay               = "5s"
    max_client_disconnect        = "2m"
    stop_after_client_disconnect = "90s"

    # meta written as an attribute, with keys that are not identifiers.
    meta = {
      "version.major" = "2"
      release         = "blue"
    }

    constraint {
      attribute = "${meta.rack}"
      operator  = "regexp"
      value     = "r[0-9]+"
    }

    affinity {
      attribute = "${node.class}"
      value     = "fast"
      weight    = -20
    }

    spread {
      attribute = "${meta.rack}"
    }

    update {
      max_parallel = 1
      canary       = 2
    }

    migrate {
      max_parallel = 2
    }

    restart {
      attempts         = 5
      interval         = "10m"
      delay            = "10s"
      mode             = "delay"
      render_templates = true
    }

    reschedule {
      delay          = "1m"
      delay_function = "exponential"
      max_delay      = "2h"
      unlimited      = true
    }

    ephemeral_disk {
      size    = 1024
      sticky  = true
      migrate = true
    }

    network {
      mode = "bridge"

      port "http" {
        to = 8080
      }

      port "admin" {
        static       = 9000
        host_network = "internal"
      }

      port "metrics" {}
    }

    task "nginx" {
      driver = "raw_exec"
    }
  }
}
