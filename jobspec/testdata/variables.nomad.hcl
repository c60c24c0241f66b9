variable "datacenters" {
  description = "Where the job may run."
  type        = list(string)
  default     = ["dc1"]
}

variable "image_tag" {
  type    = string
  default = "latest"
}

variable "count" {
  type    = number
  default = 1

  validation {
    condition     = var.count >= 1 && var.count <= 10
    error_message = "The count must be between 1 and 10."
  }
}

variable "labels" {
  type    = map(string)
  default = {}
}

variable "debug" {
  type    = bool
  default = false
}

variable "region" {
  default = "global"
}

locals {
  # Locals may refer to each other in any order.
  full_name = "${local.prefix}-${var.image_tag}"
  prefix    = upper("web")
  env = merge(var.labels, {
    DEBUG = var.debug ? "1" : "0"
  })
}

job "vars" {
  region      = var.region
  datacenters = var.datacenters

  group "g" {
    count = var.count

    task "t" {
      driver = "raw_exec"

      config {
        command = "/bin/echo"
        args    = [local.full_name]
      }

      env = local.env
    }
  }
}
