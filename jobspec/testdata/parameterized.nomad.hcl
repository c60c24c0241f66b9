job "transcode" {
  type = "batch"

  parameterized {
    payload       = "required"
    meta_required = ["input"]
    meta_optional = ["profile", "bitrate"]
  }

  group "work" {
    task "ffmpeg" {
      driver = "raw_exec"

      dispatch_payload {
        file = "job.json"
      }

      config {
        command = "/usr/bin/ffmpeg"
        args    = ["-i", "${NOMAD_META_input}", "${NOMAD_TASK_DIR}/out.mp4"]
      }
    }
  }
}
