package jobspec

import (
	"regexp"
	"strings"
	"testing"
)

func TestFunctions(t *testing.T) {
	res := parseFixture(t, "functions.nomad.hcl", Options{AllowFS: true})
	meta := res.Job.TaskGroups[0].Tasks[0].Meta
	want := map[string]string{
		"motd":      "line one\nline two\n",
		"motd_b64":  "bGluZSBvbmUKbGluZSB0d28K",
		"has_motd":  "true",
		"missing":   "false",
		"confs":     "a.conf,b.conf",
		"base":      "c.txt",
		"dir":       "/a/b",
		"upper":     "SHOUT",
		"joined":    "a-b-c",
		"formatted": "n=007",
		"sha":       "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824",
		"md5":       "5d41402abc4b2a76b9719d911017c592",
		"b64":       "aGVsbG8=",
		"decoded":   "hello",
		"url":       "a+b%26c",
		// RFC 4122 appendix-style vector: uuid5(DNS, "example.com").
		"uuid5":     "cfbff0d1-9375-5685-968c-48ce8b15ae17",
		"host":      "10.12.0.5",
		"netmask":   "255.255.0.0",
		"subnet":    "10.12.3.0/24",
		"subnets":   "10.0.0.0/16 10.16.0.0/12 10.32.0.0/16",
		"v6host":    "fd00::ffff:ffff:ffff:ffff",
		"try":       "fallback",
		"coalesced": "second",
		"max":       "9",
		"json":      `{"a":1}`,
		"lookup":    "default",
		"reversed":  "cba",
		"keys":      "a,b",
		"ranged":    "0,1,2",
		"trimmed":   "x",
		"regex":     "a#b#",
		"converted": "5",
	}
	for k, v := range want {
		if meta[k] != v {
			t.Errorf("%s = %q, want %q", k, meta[k], v)
		}
	}
	if len(meta) != len(want) {
		t.Errorf("meta has %d keys, want %d", len(meta), len(want))
	}
}

func TestUUIDv4IsRandomAndWellFormed(t *testing.T) {
	src := "job \"j\" {\n  meta {\n    a = uuidv4()\n    b = uuidv4()\n  }\n}\n"
	res, err := Parse("job.hcl", []byte(src), Options{})
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	a, b := res.Job.Meta["a"], res.Job.Meta["b"]
	if !re.MatchString(a) || !re.MatchString(b) || a == b {
		t.Fatalf("uuids = %q %q", a, b)
	}
}

func TestFileFunctionsNeedAllowFS(t *testing.T) {
	src := "job \"j\" {\n  meta {\n    motd = file(\"files/motd.txt\")\n  }\n}\n"
	_, err := Parse("testdata/job.hcl", []byte(src), Options{})
	if err == nil || !strings.Contains(err.Error(), "testdata/job.hcl:3:12") ||
		!strings.Contains(err.Error(), "the file function reads the file system, which is disabled") {
		t.Fatalf("err = %v", err)
	}
	res, err := Parse("testdata/job.hcl", []byte(src), Options{AllowFS: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Job.Meta["motd"] != "line one\nline two\n" {
		t.Fatalf("motd = %q (file() must resolve relative to the job file)", res.Job.Meta["motd"])
	}
}

func TestFunctionErrors(t *testing.T) {
	cases := []struct{ expr, want string }{
		{`cidrhost("10.0.0.0/30", 9)`, "has no host number 9"},
		{`cidrsubnet("10.0.0.0/30", 8, 0)`, "cannot extend prefix"},
		{`cidrnetmask("fd00::/64")`, "only supports IPv4"},
		{`base64decode("%%%")`, "failed to decode base64"},
		{`uuidv5("nonsense", "x")`, "not a UUID"},
		{`nosuchfunction(1)`, "Call to unknown function"},
	}
	for _, tc := range cases {
		t.Run(tc.expr, func(t *testing.T) {
			src := "job \"j\" {\n  meta {\n    x = " + tc.expr + "\n  }\n}\n"
			_, err := Parse("job.hcl", []byte(src), Options{})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "job.hcl:3:") {
				t.Fatalf("err = %v, want containing %q", err, tc.want)
			}
		})
	}
}
