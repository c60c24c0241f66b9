# A group that mounts a node's host volume into its task.
job "db" {
  group "pg" {
    count = 2

    volume "data" {
      type            = "host"
      source          = "pg-data"
      read_only       = false
      access_mode     = "single-node-writer"
      attachment_mode = "file-system"
      per_alloc       = true
    }

    volume "certs" {
      type      = "host"
      source    = "certs"
      read_only = true
    }

    task "server" {
      driver = "exec"

      config {
        command = "/usr/bin/postgres"
      }

      volume_mount {
        volume      = "data"
        destination = "/var/lib/postgresql"
      }

      volume_mount {
        volume      = "certs"
        destination = "/etc/ssl/certs"
        read_only   = true
      }
    }
  }
}
