locals {
  services = {
    api = { port = 8080, replicas = 2 }
    web = { port = 3000, replicas = 1 }
  }
  mounts = ["/etc/ssl", "/etc/hosts"]
}

job "dynamic" {
  dynamic "constraint" {
    for_each = ["linux", "darwin"]
    iterator = os
    content {
      attribute = "${attr.kernel.name}"
      operator  = "!="
      value     = os.value == "linux" ? "windows" : "plan9"
    }
  }

  dynamic "group" {
    for_each = local.services
    labels   = [group.key]

    content {
      count = group.value.replicas

      network {
        dynamic "port" {
          for_each = ["http", "metrics"]
          labels   = [port.value]
          content {
            to = port.value == "http" ? group.value.port : group.value.port + 1
          }
        }
      }

      task "main" {
        driver = "raw_exec"

        config {
          command = "/srv/${group.key}"
          args    = ["--port", "${NOMAD_PORT_http}"]

          dynamic "mount" {
            for_each = local.mounts
            labels   = ["bind"]
            content {
              source = mount.value
            }
          }
        }

        env {
          SERVICE = group.key
          PORT    = group.value.port
        }

        meta = {
          replicas = group.value.replicas
        }
      }
    }
  }
}
