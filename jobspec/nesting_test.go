package jobspec

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// nesting is the depth checkNativeNesting finds: the scanner's, or the
// tokens' where the scanner gives up.
func nesting(src string, mode lexMode) int {
	if d, _ := scanNesting([]byte(src), mode, math.MaxInt); d >= 0 {
		return d
	}
	return tokens(src, mode)
}

// tokens counts with the same rules over hclsyntax's tokens, which are
// exact about what is a string, a comment or a heredoc, but lexing the
// whole source first costs far more than scanning bytes.
func tokens(src string, mode lexMode) int {
	d, _ := tokenNesting([]byte(src), mode, math.MaxInt)
	return d
}

var nestingSamples = []string{
	`a = "${"${"${1}"}"}"`,
	"a = <<EOT\n${<<-X\n  ${[[1]]}\n  X\n}\nEOT\nb = [[2]]\n",
	"a = <<EOT\nEOT2\n  EOT  \nb = [[[3]]]\n",
	`a = "$${[[[" + "%%{((("`,
	`a = "\"[[[" + "\\" + [[1]]`,
	"a = 1 /* [[[ */ + [[2]] /* unterminated [[[",
	"# [[[\n// (((\na = ([{}])\n",
	`a = "%{ if true }%{ for x in [1] }${x}%{ endfor }%{ else }y%{ endif }"`,
	"a = x[0][y][*][*].z\nb = f(1)[0]\nc = \"s\"[0]\n",
	"a = (1\n+ 2\n* 3 ? 4 : !5)\nb = {k = 1 + 2, m = -3}\n",
	"a = \"${ {a = 1}.a }\" \nb = \"${~ x ~}\"\n",
	"a = <<EOT\r\n[[[\r\nEOT\r\nb = [[1]]\r\n",
	"a = \"unterminated [[[\nb = [[1]]\n",
	"a-b = c-d[0]\n",
	"\ufeffa = [[1]]",
	"\xef\xbb#000!000",
	"é = [[1]]\n",
	"${0ee+",
}

func TestScannerCountsAtLeastTheTokens(t *testing.T) {
	samples := append([]string(nil), nestingSamples...)
	files, _ := filepath.Glob(filepath.Join("testdata", "*.hcl"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		samples = append(samples, string(b))
	}
	for _, src := range samples {
		for _, mode := range []lexMode{lexConfig, lexTemplate} {
			if got, want := nesting(src, mode), tokens(src, mode); got < want {
				t.Errorf("mode %d: scanner counts %d, tokens %d, in:\n%s", mode, got, want, src)
			}
		}
	}
}

// The scanner reads as the lexer does, so the counts agree on ordinary
// input.
func TestScannerMatchesTokensOnJobs(t *testing.T) {
	for _, src := range append([]string{string(ExampleJob())}, nestingSamples[:3]...) {
		if got, want := nesting(src, lexConfig), tokens(src, lexConfig); got != want {
			t.Errorf("scanner counts %d, tokens %d, in:\n%s", got, want, src)
		}
	}
}

func FuzzScannerCountsAtLeastTheTokens(f *testing.F) {
	for _, s := range nestingSamples {
		f.Add(s)
	}
	f.Add(strings.Repeat("[", 10) + "x" + strings.Repeat("]", 10))
	f.Fuzz(func(t *testing.T, src string) {
		for _, mode := range []lexMode{lexConfig, lexTemplate} {
			if got, want := nesting(src, mode), tokens(src, mode); got < want {
				t.Errorf("mode %d: scanner counts %d, tokens %d, in %q", mode, got, want, src)
			}
		}
	})
}
