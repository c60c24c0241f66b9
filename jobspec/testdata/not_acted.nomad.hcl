# Blocks the server stores but does not act on, and blocks it drops.
job "mesh" {
  vault {
    policies = ["job-default"]
  }

  multiregion {
    strategy {
      max_parallel = 1
    }
    region "eu" {
      count = 2
    }
  }

  group "api" {
    disconnect {
      lost_after = "1h"
      replace    = false
      reconcile  = "keep_original"
    }

    volume "data" {
      type      = "host"
      source    = "pg-data"
      read_only = false
    }

    scaling {
      min = 1
      max = 5
      policy {
        cooldown = "1m"
        check "cpu" {
          source = "prometheus"
        }
      }
    }

    consul {
      namespace = "apps"
    }

    network {
      mode = "bridge"

      dns {
        servers = ["1.1.1.1"]
      }

      port "http" {
        to = 8080
      }
    }

    service {
      name     = "api"
      port     = "http"
      tags     = ["v1", "public"]
      provider = "nomad"

      meta {
        version = "1"
      }

      check {
        type     = "http"
        path     = "/health"
        interval = "10s"
        timeout  = "2s"

        header {
          Authorization = ["Bearer x"]
        }

        check_restart {
          limit = 3
          grace = "30s"
        }
      }

      connect {
        sidecar_service {}
      }
    }

    task "server" {
      driver = "raw_exec"

      config {
        command = "/srv/api"
      }

      vault {
        role = "api"
      }

      artifact {
        source      = "https://example.com/api.tar.gz"
        destination = "local/bin"
        options {
          checksum = "sha256:abc"
        }
      }

      template {
        data        = "DB={{ key \"db\" }}"
        destination = "secrets/env"
        env         = true
      }

      volume_mount {
        volume      = "data"
        destination = "/var/lib/data"
      }

      identity {
        env  = true
        file = true
      }

      scaling "cpu" {
        min = 100
        max = 1000
        policy {
          strategy "app-sizing-percentile" {
            percentile = "95"
          }
        }
      }

      resources {
        cpu    = 200
        memory = 128

        device "nvidia/gpu" {
          count = 1
        }
      }
    }
  }
}
