# A periodic batch job and a parameterized one share nothing but a file
# format; they are in separate fixtures.
job "nightly-report" {
  type = "batch"

  periodic {
    cron             = "0 2 * * *"
    prohibit_overlap = true
    time_zone        = "Europe/Berlin"
    enabled          = true
  }

  group "report" {
    task "build" {
      driver = "raw_exec"

      config {
        command = "/opt/report/build.sh"
      }
    }
  }
}
