package jobspec

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The step and size limits are what these tests are about, not how fast a
// machine refuses an input: the wall-clock backstop is raised far above
// what any refusal takes on a loaded machine, so that only a step or size
// limit can stop a parse here, and a parse that still runs after
// hangAfter is reported as a hang (a limit that failed).
const (
	testEvalLimit = 30 * time.Second
	hangAfter     = time.Minute
)

// parseFast parses in a goroutine and fails the test if the parse hangs,
// which would otherwise exhaust the test binary.
func parseFast(t *testing.T, filename, src string, opts Options) (*Result, error) {
	t.Helper()
	type result struct {
		res *Result
		err error
	}
	if opts.limits == nil {
		lim := defaultLimits
		lim.time = testEvalLimit
		opts.limits = &lim
	}
	done := make(chan result, 1)
	go func() {
		res, err := Parse(filename, []byte(src), opts)
		done <- result{res, err}
	}()
	select {
	case r := <-done:
		return r.res, r.err
	case <-time.After(hangAfter):
		t.Fatalf("parse still running after %s", hangAfter)
		return nil, nil
	}
}

func deep(open, middle, close string, n int) string {
	return strings.Repeat(open, n) + middle + strings.Repeat(close, n)
}

func job(attr string) string {
	return "job \"j\" {\n  meta = {\n    a = " + attr + "\n  }\n}\n"
}

func localsJob(locals string) string {
	return "locals {\n" + locals + "\n}\njob \"j\" {\n  meta = { a = jsonencode(local.out) }\n}\n"
}

func TestHostileInputHitsALimit(t *testing.T) {
	const n = 100_000
	big := strings.Repeat("x", MaxSourceBytes+1)
	var chained strings.Builder
	for i := range 200 {
		fmt.Fprintf(&chained, "l%d = [local.l%d]\n", i+1, i)
	}
	var doubled strings.Builder
	for i := range 60 {
		fmt.Fprintf(&doubled, "l%d = \"${local.l%d}${local.l%d}\"\n", i+1, i, i)
	}
	var shared strings.Builder
	for i := range 60 {
		fmt.Fprintf(&shared, "l%d = [local.l%d, local.l%d]\n", i+1, i, i)
	}
	var squared strings.Builder
	for i := range 40 {
		fmt.Fprintf(&squared, "l%d = local.l%d * local.l%d\n", i+1, i, i)
	}
	dynamicJob := func(outer, inner string) string {
		return `job "j" {
  dynamic "group" {
    for_each = ` + outer + `
    labels   = ["g${group.value}"]
    content {
      dynamic "task" {
        for_each = ` + inner + `
        labels   = ["t${task.value}"]
        content {
          driver = "raw_exec"
        }
      }
    }
  }
}
`
	}

	cases := []struct {
		name string
		file string // default job.hcl
		src  string
		opts Options
		kind LimitKind
		want string
	}{
		// Size.
		{name: "job file too large", src: "# " + big, kind: LimitSize,
			want: fmt.Sprintf("job file exceeds the maximum size of %d bytes", MaxSourceBytes)},
		{name: "variables file too large", src: job("1"),
			opts: Options{VarFiles: []VarFile{{Name: "v.hcl", Content: []byte("# " + big)}}}, kind: LimitSize,
			want: "variables file v.hcl exceeds the maximum size"},
		{name: "-var value too large", src: "variable \"x\" {\n  type = list(string)\n}\n" + job("1"),
			opts: Options{ArgVars: []string{"x=" + big}}, kind: LimitSize, want: "the value for var.x exceeds the maximum size"},

		// Nesting, 100,000 deep: each would overflow the parser's stack.
		{name: "brackets", src: job(deep("[", "1", "]", n)), kind: LimitDepth, want: "nesting depth exceeds the limit of 128"},
		{name: "objects", src: job(deep("{a=", "1", "}", n)), kind: LimitDepth},
		{name: "parentheses", src: job(deep("(", "1", ")", n)), kind: LimitDepth},
		{name: "function calls", src: job(deep("upper(", `"a"`, ")", n)), kind: LimitDepth},
		{name: "blocks", src: deep("job \"j\" {\n", "", "}\n", 1) + deep("a {\n", "", "}\n", n), kind: LimitDepth},
		{name: "unary operators", src: job(strings.Repeat("!", n) + "true"), kind: LimitDepth},
		{name: "negations", src: job(strings.Repeat("- ", n) + "1"), kind: LimitDepth},
		{name: "operator chain", src: job("1" + strings.Repeat(" + 1", n)), kind: LimitDepth},
		{name: "operator chain across lines in parentheses", src: job("(1" + strings.Repeat("\n+ 1", n) + ")"), kind: LimitDepth},
		{name: "conditionals", src: job(strings.Repeat("true ? 1 : ", n/10) + "2"), kind: LimitDepth},
		{name: "index chain", src: job("[1]" + strings.Repeat("[0 * 1]", n)), kind: LimitDepth},
		{name: "splat chain", src: job("[[1]]" + strings.Repeat("[*]", n)), kind: LimitDepth},
		{name: "templates", src: job(deep(`"${`, "1", `}"`, n)), kind: LimitDepth},
		{name: "template directives", src: job(`"` + deep("%{ if true }", "x", "%{ endif }", n/10) + `"`), kind: LimitDepth},
		{name: "heredocs", src: job(deep("<<EOT\n${", "1", "}\nEOT\n", n/4)), kind: LimitDepth},
		{name: "JSON arrays", file: "job.json", src: `{"job": {"j": {"meta": {"a": ` + deep("[", "1", "]", n) + `}}}}`, kind: LimitDepth},
		{name: "JSON template", file: "job.json", src: `{"job": {"j": {"meta": {"a": "${` + deep("[", "1", "]", n) + `}"}}}}`, kind: LimitDepth},
		{name: "JSON type constraint", file: "job.json",
			src: `{"variable": {"v": {"type": "` + deep("list(", "string", ")", n) + `", "default": []}}, "job": {"j": {}}}`, kind: LimitDepth},
		{name: "variables file", src: "variable \"x\" {\n  default = 1\n}\n" + job("var.x"),
			opts: Options{VarFiles: []VarFile{{Name: "v.hcl", Content: []byte("x = " + deep("[", "1", "]", n))}}}, kind: LimitDepth},
		{name: "-var value", src: "variable \"x\" {\n  type = list(any)\n}\n" + job("1"),
			opts: Options{ArgVars: []string{"x=" + deep("[", "1", "]", n)}}, kind: LimitDepth},
		{name: "jsondecode", src: job(`jsonencode(jsondecode("` + deep("[", "1", "]", n) + `"))`), kind: LimitDepth},
		{name: "value nested through locals", src: "locals {\nl0 = 1\n" + chained.String() + "out = local.l200\n}\n" + job("jsonencode(local.out)"), kind: LimitDepth},

		// Functions asked for huge results.
		{name: "setproduct", src: job("length(setproduct(range(1000), range(1000), range(1000)))"), kind: LimitEvaluation,
			want: fmt.Sprintf("job.hcl:3:16: evaluation exceeds the limit of %d steps", MaxEvalSteps)},
		{name: "indent", src: job(`indent(2147483647, "x")`), kind: LimitEvaluation},
		{name: "range", src: job("length(range(1e9))"), kind: LimitEvaluation},
		{name: "format width", src: job(`format("%2147483647s", "x")`), kind: LimitEvaluation},
		{name: "format width of a value", src: job(`format("%-2147483647v", "x")`), kind: LimitEvaluation},
		{name: "formatlist", src: job(`length(formatlist("%100000d", range(1000)))`), kind: LimitEvaluation},
		{name: "join", src: "locals {\n  s = format(\"%10000s\", \"\")\n  l = flatten([for i in range(10) : range(1000)])\n}\n" + job("join(local.s, local.l)"), kind: LimitEvaluation},
		{name: "replace every character", src: "locals {\n  s = format(\"%100000s\", \"\")\n}\n" + job(`replace(local.s, "", local.s)`), kind: LimitEvaluation},
		{name: "regex_replace", src: "locals {\n  s = format(\"%100000s\", \"\")\n}\n" + job(`regex_replace(local.s, "", local.s)`), kind: LimitEvaluation},
		{name: "split into characters", src: "locals {\n  s = format(\"%1000000s\", \"\")\n}\n" + job(`length(split("", local.s))`), kind: LimitEvaluation},
		{name: "function in the variables file", src: "variable \"x\" {\n  default = 1\n}\n" + job("var.x"),
			opts: Options{VarFiles: []VarFile{{Name: "v.hcl", Content: []byte("x = length(range(1e9))\n")}}}, kind: LimitEvaluation},
		{name: "try cannot hide a limit", src: job(`try(range(1e9), 0)`), kind: LimitEvaluation},
		{name: "number literal", src: job(`"${1e999999}"`), kind: LimitEvaluation, want: "job.hcl:3:12: a number exceeds the limit of 2^1024 in magnitude"},
		{name: "number product", src: "locals {\nl0 = 1e300\n" + squared.String() + "out = local.l40\n}\n" + job(`"${local.out}"`), kind: LimitEvaluation},
		{name: "parseint", src: job(`parseint("` + strings.Repeat("9", 100000) + `", 10)`), kind: LimitEvaluation},

		// Repetition.
		{name: "for 1024^3", src: job("length([for a in range(1024) : [for b in range(1024) : [for c in range(1024) : c]]])"), kind: LimitEvaluation},
		{name: "for over locals", src: "locals {\n  l = range(1024)\n}\n" + job("length([for a in local.l : [for b in local.l : [for c in local.l : c]]])"), kind: LimitEvaluation},
		{name: "for over a dependent collection", src: "locals {\n  l = [for i in range(1000) : range(1000)]\n}\n" + job("length(flatten([for a in local.l : [for b in a : [for c in a : 1]]]))"), kind: LimitEvaluation},
		{name: "template for directive", src: "locals {\n  l = range(1024)\n}\n" + job(`"%{ for a in local.l }%{ for b in local.l }%{ for c in local.l }x%{ endfor }%{ endfor }%{ endfor }"`), kind: LimitEvaluation},
		{name: "dynamic groups x tasks", src: dynamicJob("range(1000)", "range(1000)"), kind: LimitEvaluation},
		{name: "dynamic over a dependent collection", src: "locals {\n  l = [for i in range(1000) : range(1000)]\n}\n" + dynamicJob("local.l", "group.value"), kind: LimitEvaluation},
		{name: "JSON dynamic", file: "job.json", src: `{"locals": {"l": "${range(1000)}"}, "job": {"j": {"dynamic": {"group": {"for_each": "${local.l}", "labels": ["g${group.value}"],
			"content": {"dynamic": {"task": {"for_each": "${local.l}", "labels": ["t${task.value}"], "content": {"driver": "raw_exec"}}}}}}}}}`, kind: LimitEvaluation},
		{name: "JSON for expression", file: "job.json", src: `{"locals": {"l": "${range(1024)}"}, "job": {"j": {"meta": {"a": "${length([for a in local.l : [for b in local.l : [for c in local.l : c]]])}"}}}}`, kind: LimitEvaluation},
		{name: "string doubled through locals", src: localsJob("l0 = \"ab\"\n" + doubled.String() + "out = local.l60"), kind: LimitEvaluation},
		{name: "list shared through locals", src: localsJob("l0 = 1\n" + shared.String() + "out = local.l60"), kind: LimitEvaluation},
		{name: "template repeating a string", src: "locals {\n  s = format(\"%100000s\", \"\")\n}\n" + job(`"`+strings.Repeat("${local.s}", 10000)+`"`), kind: LimitEvaluation},
		{name: "equality of shared lists", src: "locals {\nl0 = 1\n" + shared.String() + "}\n" + job("local.l60 == local.l60"), kind: LimitEvaluation},

		// Time.
		{name: "canceled", src: job("1"), opts: Options{Context: canceled()}, kind: LimitTime, want: "evaluation stopped: context canceled"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			file := tc.file
			if file == "" {
				file = "job.hcl"
			}
			_, err := parseFast(t, file, tc.src, tc.opts)
			var limit *LimitError
			if !errors.As(err, &limit) {
				t.Fatalf("error = %v (%T), want a *LimitError", err, err)
			}
			if limit.Kind != tc.kind {
				t.Errorf("kind = %d, want %d: %v", limit.Kind, tc.kind, err)
			}
			if tc.want != "" && !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %q, want it to contain %q", err, tc.want)
			}
		})
	}
}

func canceled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

func TestEvaluationTimeLimit(t *testing.T) {
	lim := defaultLimits
	lim.time = time.Nanosecond
	src := "locals {\n  l = range(100)\n}\n" + job("length([for a in local.l : [for b in local.l : b]])")
	_, err := parseFast(t, "job.hcl", src, Options{limits: &lim})
	var limit *LimitError
	if !errors.As(err, &limit) || limit.Kind != LimitTime {
		t.Fatalf("error = %v, want a time limit", err)
	}
	if !strings.Contains(err.Error(), "evaluation exceeds the time limit of 1ns") {
		t.Errorf("error = %q", err)
	}
}

// Work up to the limits parses, and what looks like nesting inside
// strings, comments and heredocs does not count.
func TestWithinLimitsParses(t *testing.T) {
	var chained strings.Builder
	for i := range 10_000 {
		fmt.Fprintf(&chained, "l%05d = local.l%05d\n", i, i+1)
	}
	brackets := strings.Repeat("[({", 300)
	cases := []struct {
		name string
		src  string
		meta map[string]string
	}{
		{name: "10,000 chained locals", src: "locals {\n" + chained.String() + "l10000 = \"end\"\n}\n" + job("local.l00000"),
			meta: map[string]string{"a": "end"}},
		{name: "nested for within budget", src: job("length([for a in range(100) : [for b in range(100) : a * b]])"),
			meta: map[string]string{"a": "100"}},
		{name: "nesting at the limit", src: job("length(" + deep("[", "1", "]", MaxNestingDepth-4) + ")"),
			meta: map[string]string{"a": "1"}},
		{name: "nested try", src: job(deep("try(", "1", ")", 40)), meta: map[string]string{"a": "1"}},
		{name: "brackets in strings, comments and heredocs", src: "# " + brackets + "\n// " + brackets + "\n/* " + brackets + " */\n" +
			"job \"j\" {\n  meta = {\n    a = \"" + brackets + "\"\n    b = <<EOT\n" + brackets + "\nEOT\n    c = \"$${" + brackets + "\"\n  }\n}\n",
			meta: map[string]string{"a": brackets, "b": brackets + "\n", "c": "${" + brackets}},
		{name: "long lines of dashes", src: job(`"` + strings.Repeat("-", 1000) + `"`), meta: map[string]string{"a": strings.Repeat("-", 1000)}},
		{name: "large numbers", src: job(`"${1e300 * 1e2}"`), meta: map[string]string{"a": "1" + strings.Repeat("0", 302)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := parseFast(t, "job.hcl", tc.src, Options{})
			if err != nil {
				t.Fatal(err)
			}
			for k, want := range tc.meta {
				if got := res.Job.Meta[k]; got != want {
					t.Errorf("meta %s = %.80q, want %.80q", k, got, want)
				}
			}
		})
	}
}

func TestDynamicWithinBudget(t *testing.T) {
	src := `locals {
  groups = range(20)
}
job "j" {
  dynamic "group" {
    for_each = local.groups
    labels   = ["g${group.value}"]
    content {
      dynamic "task" {
        for_each = range(10)
        labels   = ["t${task.value}"]
        content {
          driver = "raw_exec"
          config {
            command = "/bin/${group.value}-${task.value}"
          }
        }
      }
    }
  }
}
`
	res, err := parseFast(t, "job.hcl", src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Job.TaskGroups) != 20 || len(res.Job.TaskGroups[19].Tasks) != 10 {
		t.Fatalf("groups = %d", len(res.Job.TaskGroups))
	}
}

// Every valid job the tests know stays far inside the budget, so the
// limit is no nearer to real jobs than it needs to be.
func TestTestdataUseLittleBudget(t *testing.T) {
	for _, name := range []string{"dynamic.nomad.hcl", "functions.nomad.hcl", "variables.nomad.hcl", "not_acted.nomad.hcl"} {
		src := readTestdata(t, name)
		p := newParser(name, src, Options{BaseDir: "testdata", AllowFS: true})
		file, diags := p.parseChecked("job file", name, src)
		if diags.HasErrors() || p.budget.err != nil {
			t.Fatalf("%s: %v %v", name, diags, p.budget.err)
		}
		p.indexSyntax(file)
		p.decodeFile(file.Body)
		if p.budget.err != nil {
			t.Fatalf("%s: %v", name, p.budget.err)
		}
		t.Logf("%s used %d steps", name, p.budget.used)
		if p.budget.used > MaxEvalSteps/100 {
			t.Errorf("%s used %d steps, more than 1%% of the budget", name, p.budget.used)
		}
	}
}

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// A local that refers to `local` as a whole sees every local that does
// not depend on it, and costs their number.
func TestLocalsReferringToAllLocals(t *testing.T) {
	res, err := parseFast(t, "job.hcl", "locals {\n  a = 1\n  b = keys(local)\n  c = local.b\n}\n"+job("jsonencode(local.c)"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Job.Meta["a"]; got != `["a"]` {
		t.Errorf("local.c = %s, want [\"a\"]", got)
	}

	var b strings.Builder
	for i := range 5_000 {
		fmt.Fprintf(&b, "l%05d = length(keys(local))\n", i)
	}
	_, err = parseFast(t, "job.hcl", localsJob(b.String()+"out = 1"), Options{})
	var limit *LimitError
	if !errors.As(err, &limit) || limit.Kind != LimitEvaluation {
		t.Fatalf("error = %v, want the evaluation limit", err)
	}
}

// A mistake repeated by a loop is listed a bounded number of times.
func TestRepeatedErrorsAreCounted(t *testing.T) {
	_, err := parseFast(t, "job.hcl", job("jsonencode([for i in range(500) : [for j in range(40) : upper({})]])"), Options{})
	if err == nil {
		t.Fatal("parse succeeded")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != maxReported+1 || lines[maxReported] != fmt.Sprintf("and %d more errors", 500*40-maxReported) {
		t.Fatalf("%d lines, last %q", len(lines), lines[len(lines)-1])
	}
}
