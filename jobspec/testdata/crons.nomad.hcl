job "twice-daily" {
  type = "sysbatch"

  periodic {
    crons = ["0 6 * * *", "0 18 * * *"]
  }

  group "sweep" {
    task "clean" {
      driver = "raw_exec"

      config {
        command = "/usr/bin/find"
        args    = ["/tmp", "-mtime", "+7", "-delete"]
      }
    }
  }
}
