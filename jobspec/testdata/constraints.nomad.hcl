# Constraint and affinity shorthands set the operator and value in one line.
job "shorthand" {
  constraint {
    distinct_hosts = true
  }

  constraint {
    distinct_property = "${meta.rack}"
    value             = "2"
  }

  constraint {
    attribute = "${attr.nomad.version}"
    version   = ">= 1.2, < 2.0"
  }

  constraint {
    attribute = "${attr.os.version}"
    semver    = "~> 22.04"
  }

  constraint {
    attribute = "${attr.unique.hostname}"
    regexp    = "^web-[0-9]+$"
  }

  constraint {
    attribute    = "${meta.features}"
    set_contains = "ssd,gpu"
  }

  affinity {
    attribute        = "${meta.zones}"
    set_contains_any = "a,b"
    weight           = 30
  }

  affinity {
    attribute = "${attr.kernel.version}"
    version   = "> 5.0"
  }

  group "g" {
    task "t" {
      driver = "raw_exec"
    }
  }
}
