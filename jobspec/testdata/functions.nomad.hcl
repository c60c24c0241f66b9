job "functions" {
  group "g" {
    task "t" {
      driver = "raw_exec"

      config {
        command = "/bin/cat"
      }

      meta {
        motd       = file("files/motd.txt")
        motd_b64   = filebase64("files/motd.txt")
        has_motd   = fileexists("files/motd.txt")
        missing    = fileexists("files/nope.txt")
        confs      = join(",", fileset("files", "*.conf"))
        base       = basename("/a/b/c.txt")
        dir        = dirname("/a/b/c.txt")
        upper      = upper("shout")
        joined     = join("-", ["a", "b", "c"])
        formatted  = format("%s=%03d", "n", 7)
        sha        = sha256("hello")
        md5        = md5("hello")
        b64        = base64encode("hello")
        decoded    = base64decode("aGVsbG8=")
        url        = urlencode("a b&c")
        uuid5      = uuidv5("dns", "example.com")
        host       = cidrhost("10.12.0.0/16", 5)
        netmask    = cidrnetmask("10.12.0.0/16")
        subnet     = cidrsubnet("10.12.0.0/16", 8, 3)
        subnets    = join(" ", cidrsubnets("10.0.0.0/8", 8, 4, 8))
        v6host     = cidrhost("fd00::/64", -1)
        try        = try(parseint("x", 10), "fallback")
        coalesced  = coalesce(null, "second")
        max        = max(3, 9, 2)
        json       = jsonencode({ a = 1 })
        lookup     = lookup({ a = "x" }, "b", "default")
        reversed   = strrev("abc")
        keys       = join(",", keys({ b = 1, a = 2 }))
        ranged     = join(",", range(3))
        trimmed    = trimspace("  x  ")
        regex      = regex_replace("a1b22", "[0-9]+", "#")
        converted  = convert(5, string)
      }
    }
  }
}
